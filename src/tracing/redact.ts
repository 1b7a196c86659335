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

/** Characters of the tokens SECRET_PATTERNS match. */
const TOKEN_CHAR = /[A-Za-z0-9._~+/=-]/;
/** Longest trailing token held back for the next piece (a longer run is no key of a known shape). */
const MAX_HELD_TOKEN = 1024;

/**
 * Redaction of text that arrives in pieces (a process's output): a secret written in two pieces is
 * redacted as if written in one. Each piece is redacted with what was held back from the previous
 * one, and what could still be the start of a secret is held back in turn: the longest end that
 * begins a known secret, and a trailing token (with a `Bearer `-like scheme before it) that a
 * secret-looking pattern could still grow into. `end()` gives out what is held.
 */
export class RedactingStream {
  private held = '';
  private readonly known: string[];

  constructor(private readonly redactor: Redactor, knownSecrets: Iterable<string> = []) {
    this.known = [...new Set([...knownSecrets].filter((s) => s.length >= 6))];
  }

  /** The redacted text that can be given out now. */
  write(text: string): string {
    const buf = this.held + text;
    const cut = this.holdFrom(buf);
    this.held = buf.slice(cut);
    return cut > 0 ? this.redactor.string(buf.slice(0, cut)) : '';
  }

  /** What is still held, redacted (the output ended). */
  end(): string {
    const rest = this.held;
    this.held = '';
    return rest ? this.redactor.string(rest) : '';
  }

  /** Where the part of `buf` that could still be the start of a secret begins (buf.length: none). */
  private holdFrom(buf: string): number {
    let cut = buf.length;
    // The longest end of buf that is a proper beginning of a known secret.
    for (const secret of this.known) {
      const from = Math.max(0, buf.length - secret.length + 1);
      for (let i = from; i < cut; i++) {
        if (buf.charCodeAt(i) === secret.charCodeAt(0) && secret.startsWith(buf.slice(i))) {
          cut = i;
          break;
        }
      }
    }
    // A trailing token (and the scheme before it): a pattern could still match more of it.
    let start = buf.length;
    while (start > 0 && buf.length - start < MAX_HELD_TOKEN && TOKEN_CHAR.test(buf[start - 1]!)) start--;
    if (start < buf.length && buf.length - start < MAX_HELD_TOKEN) cut = Math.min(cut, start);
    const scheme = /\b(Bearer|Basic|Token)\s+$/.exec(buf.slice(Math.max(0, start - 16), start));
    if (scheme) cut = Math.min(cut, start - scheme[0].length);
    // Never cut through a secret that is whole in buf: start the held part where it starts.
    for (let moved = true; moved; ) {
      moved = false;
      for (const secret of this.known) {
        for (let at = buf.indexOf(secret, Math.max(0, cut - secret.length + 1)); at !== -1 && at < cut; at = buf.indexOf(secret, at + 1)) {
          if (at + secret.length > cut) {
            cut = at;
            moved = true;
          }
        }
      }
    }
    return cut;
  }
}
