// Deployment secrets: environment variables of the application, sealed at rest, never returned.
import type { FieldIssue } from '../errors.js';
import type { DeploymentSecret } from './types.js';

/** What responses show in place of every secret value; sending it back in a PATCH keeps the stored value. */
export const SECRET_MASK = '********';

/** Environment variable names: a letter or underscore, then letters, digits, underscores. */
export const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Names the runtime sets itself; a secret may not override them. */
export const RESERVED_NAMES = new Set(['PORT', 'HOST', 'PATH', 'HOME', 'NODE_OPTIONS', 'NODE_ENV', 'DATABASE_URI', 'REDIS_URI', 'POSTGRES_URI']);
/** Prefixes the runtime owns. */
export const RESERVED_PREFIXES = ['LANGGRAPH_', 'LANGSMITH_', 'LANGCHAIN_', 'HANGAR_', 'OTEL_'];

/** Problems with a list of secrets (names, duplicates, reserved names, a mask with nothing stored behind it), at `loc`. */
export function checkSecrets(secrets: DeploymentSecret[], loc: (string | number)[]): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const seen = new Set<string>();
  secrets.forEach((s, i) => {
    const at = [...loc, i, 'name'];
    if (!SECRET_NAME.test(s.name)) {
      issues.push({ loc: at, msg: 'must be an environment variable name: a letter or underscore, then letters, digits or underscores', type: 'value_error' });
    } else if (RESERVED_NAMES.has(s.name.toUpperCase()) || RESERVED_PREFIXES.some((p) => s.name.toUpperCase().startsWith(p))) {
      issues.push({ loc: at, msg: `"${s.name}" is reserved by the runtime (reserved: ${[...RESERVED_NAMES].join(', ')} and names starting with ${RESERVED_PREFIXES.join(', ')})`, type: 'value_error' });
    }
    if (seen.has(s.name)) issues.push({ loc: at, msg: `"${s.name}" is given twice`, type: 'value_error' });
    // After a PATCH's merge, a mask left over had no stored value to keep: it would become the secret.
    if (s.value === SECRET_MASK) {
      issues.push({ loc: [...loc, i, 'value'], msg: `"${SECRET_MASK}" keeps a stored value, and no secret "${s.name}" is stored; send its value`, type: 'value_error' });
    }
    seen.add(s.name);
  });
  return issues;
}

/** Secrets of a PATCH: a masked value keeps the stored value of the same name (any other mask is refused by {@link checkSecrets}). */
export function mergeSecrets(given: DeploymentSecret[], stored: DeploymentSecret[]): DeploymentSecret[] {
  const old = new Map(stored.map((s) => [s.name, s.value]));
  return given.map((s) => (s.value === SECRET_MASK && old.has(s.name) ? { name: s.name, value: old.get(s.name)! } : { name: s.name, value: s.value }));
}
