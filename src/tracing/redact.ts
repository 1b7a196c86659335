// Secret redaction: applied to everything a trace stores, before it is stored or exported.
// Three nets: values under secret-looking keys, secret-looking strings (bearer tokens, API keys),
// and exact secret values the caller knows about (tool server header values).

/** What replaces a redacted value. */
export const REDACTED = '[redacted]';

/** Whether a key names a secret (authorization, api_key, apiKey, password, client_secret, access_token…). */
export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[-_\s]/g, '');
  return (
    k.includes('authorization') ||
    k.includes('apikey') ||
    k.includes('secret') ||
    k.includes('password') ||
    k.includes('passwd') ||
    k.includes('credential') ||
    k.includes('privatekey') ||
    k.includes('cookie') ||
    // "token", "access_token", "idToken" — but not "total_tokens", "max_tokens" or "token_usage".
    k.endsWith('token')
  );
}

const SECRET_PATTERNS: RegExp[] = [
  /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}/g,
  /\bhgr_[A-Za-z0-9_-]{16,}/g, // Hangar API keys
  /\b(sk|pk|rk)-[A-Za-z0-9_-]{16,}/g, // common provider key shapes
  /\b(lsv2|ghp|gho|ghu|ghs|github_pat|xox[abprs])_[A-Za-z0-9_]{16,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
];

/** Redacts secrets from JSON-like values. Build one per write with the secrets known at that time. */
export class Redactor {
  private readonly known: string[];

  /** `knownSecrets`: exact values that must never be stored (short values are ignored to avoid noise). */
  constructor(knownSecrets: Iterable<string> = []) {
    this.known = [...new Set([...knownSecrets].filter((s) => s.length >= 6))].sort((a, b) => b.length - a.length);
  }

  /** A deep copy of `value` with secrets replaced. */
  value(value: unknown, depth = 0): unknown {
    if (typeof value === 'string') return this.string(value);
    if (value === null || typeof value !== 'object') return value;
    if (depth > 64) return REDACTED; // pathological nesting: keep nothing rather than risk a leak
    if (Array.isArray(value)) return value.map((v) => this.value(v, depth + 1));
    const out: Record<string, unknown> = {};
    const entries = Object.entries(value as Record<string, unknown>);
    // A header given as {key|name: "Authorization", value: "..."}.
    const label = (value as Record<string, unknown>).key ?? (value as Record<string, unknown>).name;
    const secretPair = typeof label === 'string' && isSecretKey(label) && 'value' in value;
    for (const [k, v] of entries) {
      if ((isSecretKey(k) && v !== null && v !== undefined && typeof v !== 'boolean') || (secretPair && k === 'value')) {
        out[k] = REDACTED;
      } else {
        out[k] = this.value(v, depth + 1);
      }
    }
    return out;
  }

  /** `text` with secret-looking substrings and known secrets replaced. */
  string(text: string): string {
    // NUL cannot be stored in PostgreSQL text or jsonb.
    let out = text.includes('\u0000') ? text.replaceAll('\u0000', '') : text;
    for (const secret of this.known) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
    for (const pattern of SECRET_PATTERNS) {
      pattern.lastIndex = 0;
      if (pattern.test(out)) {
        pattern.lastIndex = 0;
        out = out.replace(pattern, (match, scheme: string) => (/^(Bearer|Basic|Token)$/.test(scheme ?? '') ? `${scheme} ${REDACTED}` : REDACTED));
      }
    }
    return out;
  }
}
