// Validation of a deployment's fields according to its `source`: every rule names the field and says
// what is wrong; all problems of a request are reported together.
import { ORDERED_PAIRS, VOLUME_SOURCES } from './resource-rules.js';
import type { FieldIssue } from '../errors.js';
import { checkSecrets } from './secrets.js';
import type { DeploymentSecret, SecretReference, Source, SourceConfig, SourceRevisionConfig } from './types.js';

/** Deployment names: a DNS label (they name Kubernetes objects and tracing projects). */
export const DEPLOYMENT_NAME = /^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** Which fields each source accepts, requires, or refuses. */
const RULES: Record<Source, { requires: string[]; refuses: string[] }> = {
  vcshost: {
    requires: ['source_config.repo_url', 'source_revision_config.repo_ref'],
    refuses: ['source_revision_config.image_uri', 'source_revision_config.source_tarball_path', 'source_config.listener_id', 'source_config.listener_config'],
  },
  internal_source: {
    requires: ['source_revision_config.source_tarball_path'],
    refuses: ['source_config.integration_id', 'source_config.repo_url', 'source_config.build_on_push', 'source_revision_config.repo_ref', 'source_revision_config.image_uri', 'source_config.listener_id', 'source_config.listener_config'],
  },
  internal_template: {
    requires: [],
    refuses: ['source_config.integration_id', 'source_config.repo_url', 'source_config.build_on_push', 'source_revision_config.image_uri', 'source_revision_config.source_tarball_path', 'source_config.listener_id', 'source_config.listener_config'],
  },
  external_docker: {
    requires: ['source_revision_config.image_uri'],
    refuses: ['source_config.integration_id', 'source_config.repo_url', 'source_config.build_on_push', 'source_config.install_command', 'source_config.build_command', 'source_revision_config.repo_ref', 'source_revision_config.source_tarball_path', 'source_revision_config.agentgraph_config_path'],
  },
  internal_docker: {
    requires: ['source_revision_config.image_uri'],
    refuses: ['source_config.integration_id', 'source_config.repo_url', 'source_config.build_on_push', 'source_config.install_command', 'source_config.build_command', 'source_revision_config.repo_ref', 'source_revision_config.source_tarball_path', 'source_revision_config.agentgraph_config_path'],
  },
};

/** Everything validated about a deployment's desired state. */
export interface DeploymentFields {
  source: Source;
  sourceConfig: SourceConfig;
  sourceRevisionConfig: SourceRevisionConfig & Record<string, unknown>;
  secrets: DeploymentSecret[];
  secretReferences: SecretReference[] | null | undefined;
}

/** The problems of a deployment's fields for its source (empty when valid). */
export function checkDeployment(f: DeploymentFields): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const objects: Record<string, Record<string, unknown>> = {
    source_config: f.sourceConfig as Record<string, unknown>,
    source_revision_config: f.sourceRevisionConfig,
  };
  const value = (path: string) => {
    const [obj, field] = path.split('.') as [string, string];
    return objects[obj]![field];
  };
  const at = (path: string) => ['body', ...path.split('.')];
  const rule = RULES[f.source];
  for (const path of rule.requires) {
    const v = value(path);
    if (v === undefined || v === null || v === '') issues.push({ loc: at(path), msg: `is required when source is "${f.source}"`, type: 'missing' });
  }
  for (const path of rule.refuses) {
    const v = value(path);
    if (v !== undefined && v !== null) issues.push({ loc: at(path), msg: `is not allowed when source is "${f.source}"`, type: 'extra_forbidden' });
  }
  if ('repo_commit_sha' in f.sourceRevisionConfig) {
    issues.push({ loc: at('source_revision_config.repo_commit_sha'), msg: 'is read-only: the build records the commit it used', type: 'extra_forbidden' });
  }
  if (f.secretReferences && f.secretReferences.length > 0 && f.source !== 'external_docker') {
    issues.push({ loc: ['body', 'secret_references'], msg: 'is only allowed when source is "external_docker"', type: 'extra_forbidden' });
  }
  issues.push(...checkFormats(f));
  issues.push(...checkSecrets(f.secrets, ['body', 'secrets']));
  (f.secretReferences ?? []).forEach((r, i) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(r.name)) issues.push({ loc: ['body', 'secret_references', i, 'name'], msg: 'must be an environment variable name', type: 'value_error' });
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(r.secret_name)) issues.push({ loc: ['body', 'secret_references', i, 'secret_name'], msg: 'must be a Kubernetes object name (lowercase letters, digits, "-" and ".")', type: 'value_error' });
    if (!/^[-._a-zA-Z0-9]+$/.test(r.secret_key)) issues.push({ loc: ['body', 'secret_references', i, 'secret_key'], msg: 'must be a Secret key (letters, digits, "-", "_" and ".")', type: 'value_error' });
  });
  issues.push(...checkResourceSpec(f.sourceConfig.resource_spec as Record<string, unknown> | null | undefined));
  return issues;
}

function checkFormats(f: DeploymentFields): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const sc = f.sourceConfig;
  const src = f.sourceRevisionConfig;
  if (sc.repo_url && !/^(https?|ssh|git|file):\/\/\S+$|^git@[\w.-]+:\S+$/.test(sc.repo_url)) {
    issues.push({ loc: ['body', 'source_config', 'repo_url'], msg: 'must be a repository URL (https://, ssh://, git://, file:// or git@host:path)', type: 'url_error' });
  } else if (sc.repo_url && credentialIn(sc.repo_url)) {
    // Stored as given and shown in every read and build log: a credential does not belong here.
    issues.push({
      loc: ['body', 'source_config', 'repo_url'],
      msg: 'must not carry a credential (user:password@ or a token before @); register a code-host integration with the token and name it in integration_id',
      type: 'url_credential',
    });
  }
  if (sc.custom_url && !/^https?:\/\/\S+$/.test(sc.custom_url)) {
    issues.push({ loc: ['body', 'source_config', 'custom_url'], msg: 'must be an absolute http:// or https:// URL', type: 'url_error' });
  }
  if (sc.listener_config?.k8s_namespace && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(sc.listener_config.k8s_namespace)) {
    issues.push({ loc: ['body', 'source_config', 'listener_config', 'k8s_namespace'], msg: 'must be a Kubernetes namespace name (a DNS label)', type: 'value_error' });
  }
  if (src.repo_ref && (/\s|\.\.|^-/.test(src.repo_ref) || src.repo_ref.length > 255)) {
    issues.push({ loc: ['body', 'source_revision_config', 'repo_ref'], msg: 'must be a branch, tag or commit name (no spaces, "..", or leading "-")', type: 'value_error' });
  }
  for (const field of ['agentgraph_config_path', 'source_tarball_path'] as const) {
    const p = src[field];
    if (typeof p === 'string' && (p.startsWith('/') || p.split('/').includes('..'))) {
      issues.push({ loc: ['body', 'source_revision_config', field], msg: 'must be a relative path inside the source (no leading "/" or "..")', type: 'value_error' });
    }
  }
  if (src.image_uri && !/^[a-z0-9]+([._\-/:@a-zA-Z0-9]*)$/.test(src.image_uri)) {
    issues.push({ loc: ['body', 'source_revision_config', 'image_uri'], msg: 'must be an image reference such as registry.example.com/app:1.2', type: 'value_error' });
  }
  return issues;
}

/** Order of (request, limit) and (min, max) pairs, and exactly one source per volume. */
export function checkResourceSpec(spec: Record<string, unknown> | null | undefined): FieldIssue[] {
  if (!spec) return [];
  const issues: FieldIssue[] = [];
  const at = (...p: (string | number)[]) => ['body', 'source_config', 'resource_spec', ...p];
  for (const [low, high] of ORDERED_PAIRS) {
    const a = spec[low];
    const b = spec[high];
    if (typeof a === 'number' && typeof b === 'number' && a > b) issues.push({ loc: at(high), msg: `must be at least ${low} (${a})`, type: 'value_error' });
  }
  const volumes = (spec.volumes as Record<string, unknown>[] | null | undefined) ?? [];
  const names = new Set<string>();
  volumes.forEach((v, i) => {
    const sources = VOLUME_SOURCES.filter((s) => v[s] !== undefined);
    if (sources.length !== 1) issues.push({ loc: at('volumes', i), msg: `must have exactly one of ${VOLUME_SOURCES.join(', ')} (has ${sources.length})`, type: 'value_error' });
    names.add(String(v.name));
  });
  const mounts = (spec.volume_mounts as Record<string, unknown>[] | null | undefined) ?? [];
  mounts.forEach((m, i) => {
    if (!names.has(String(m.name))) issues.push({ loc: at('volume_mounts', i, 'name'), msg: `names no volume of resource_spec.volumes ("${String(m.name)}")`, type: 'value_error' });
  });
  for (const group of ['init_containers', 'sidecars'] as const) {
    const containers = (spec[group] as Record<string, unknown>[] | null | undefined) ?? [];
    containers.forEach((c, i) => {
      if (!c.image) issues.push({ loc: at(group, i, 'image'), msg: 'is required', type: 'missing' });
      if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(String(c.name))) issues.push({ loc: at(group, i, 'name'), msg: 'must be a DNS label', type: 'value_error' });
    });
  }
  return issues;
}

/**
 * Whether a repository URL carries a credential: a password in any scheme, or any user name in an
 * http(s) URL (a token is often sent as the user name). `ssh://git@host/…` names an account, not a secret.
 */
function credentialIn(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.password !== '') return true;
  return parsed.username !== '' && (parsed.protocol === 'http:' || parsed.protocol === 'https:');
}
