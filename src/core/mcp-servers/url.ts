// Tool server URLs are compared after stripping trailing slashes (SPEC: interrupt_config keys, tools[].mcp_server_url).
// A URL may carry a credential in its query string (`?api_key=…`): the tool server's own record and
// the agent's tools show it as the owner configured it (to roles that may invoke the server); everything
// else Hangar writes (tool errors, interrupts, traces, logs, error answers, viewers' reads) shows
// `redactServerUrl` and redacts `urlSecrets`. Both decide what is a credential with `isCredentialParam`.
import { isSecretKey, REDACTED, Redactor } from '../../tracing/redact.js';

/** Parameter names that say their value is a credential, beyond what `isSecretKey` knows (normalised: lower case, no `-_. `). */
const CREDENTIAL_NAME_PARTS = ['key', 'token', 'secret', 'sig', 'auth', 'pass', 'pwd', 'credential', 'session', 'cookie', 'jwt', 'bearer', 'hmac', 'ticket'];
const CREDENTIAL_NAMES = new Set(['code', 'pw', 'pin', 'otp', 'hash', 'nonce', 'sas', 'sid']);

/**
 * Whether a query parameter carries a credential: its name says so (`api_key`, `key`, `token`,
 * `secret`, `sig`, `signature`, `password`, `auth`, `access_token`, `code`…), or its value does not
 * read as a plain setting. A plain setting is at most 32 characters of words or numbers (each at most
 * 12 characters, all letters or all digits) joined by `-`, `.`, `_`, `~`, `:`, `+` or a space:
 * `stream`, `json`, `2025-03-26`, `eu-west-1`. A token (`Zx81kPq…`, hex, base64) mixes letters and
 * digits, or is longer, and so counts as a credential whatever its name.
 */
export function isCredentialParam(name: string, value: string): boolean {
  if (value === '') return false;
  const n = name.toLowerCase().replace(/[-_.\s]/g, '');
  if (isSecretKey(name) || CREDENTIAL_NAMES.has(n) || CREDENTIAL_NAME_PARTS.some((part) => n.includes(part))) return true;
  if (value.length > 32) return true;
  return !value.split(/[-._~:+ ]/).every((segment) => segment.length <= 12 && (/^[A-Za-z]*$/.test(segment) || /^[0-9]*$/.test(segment)));
}

/** The name and value of a raw `name=value` query pair, decoded (as written when not valid percent-encoding). */
function decodePair(pair: string): [string, string] {
  const at = pair.indexOf('=');
  const [name, value] = at === -1 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
  return [decodeQuery(name), decodeQuery(value)];
}

function decodeQuery(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** The canonical form of a tool server URL: trailing slashes stripped. */
export function normalizeServerUrl(url: string): string {
  return url.replace(/\/+$/, '');
}

/** Whether `url` is an absolute http(s) URL. */
export function isHttpUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * `url` as it may be shown outside its tool server's record: no user name or password, no fragment,
 * and every credential's value replaced (`?api_key=[redacted]&mode=stream`; the names stay, to tell
 * servers apart; `isCredentialParam` says which values are credentials).
 */
export function redactServerUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not a URL at all: nothing of it can be told apart from a secret.
    return REDACTED;
  }
  // Nothing to hide: the URL as written (the URL class would lower-case the host, drop a default port).
  const pairs = [...parsed.searchParams];
  const credentials = pairs.some(([name, value]) => isCredentialParam(name, value));
  if (parsed.username === '' && parsed.password === '' && !credentials && parsed.hash === '') return normalizeServerUrl(url);
  parsed.username = '';
  parsed.password = '';
  parsed.hash = '';
  if (credentials) {
    parsed.search = pairs
      .map(([name, value]) => (value === '' ? encodeURIComponent(name) : `${encodeURIComponent(name)}=${isCredentialParam(name, value) ? REDACTED : encodeURIComponent(value)}`))
      .join('&');
  }
  return normalizeServerUrl(parsed.href);
}

/**
 * The credentials `url` carries, as written and decoded: its credential query values
 * (`isCredentialParam`; `mode=stream` is not one), user name, password and fragment, and, when it carries any, the whole URL as written and as the URL class writes it (so
 * that a value too short to be redacted alone is not left in a quoted URL). Text that may quote the
 * URL (a server's error answer, a trace) has them redacted.
 */
export function urlSecrets(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const raw = [
    ...parsed.search
      .slice(1)
      .split('&')
      .filter((pair) => isCredentialParam(...decodePair(pair)))
      .map((pair) => pair.slice(pair.indexOf('=') + 1 || pair.length)),
    parsed.username,
    parsed.password,
    parsed.hash.slice(1),
  ].filter((s) => s !== '');
  const secrets = new Set<string>();
  for (const value of raw) {
    secrets.add(value);
    try {
      secrets.add(decodeURIComponent(value.replace(/\+/g, ' ')));
    } catch {
      // Not valid percent-encoding: the value as written is all there is.
    }
  }
  for (const [name, value] of parsed.searchParams) if (isCredentialParam(name, value)) secrets.add(value);
  if (secrets.size > 0) {
    secrets.add(url);
    secrets.add(parsed.href);
  }
  return [...secrets];
}

/**
 * Redacts `urls` from text that may quote them (a server's error answer, the MCP client's errors):
 * each URL, as written or as the URL class writes it, becomes its `redactServerUrl` form, and its
 * credentials (`urlSecrets`, 6 characters or more) are redacted wherever else they appear.
 */
export function urlScrubber(urls: Iterable<string>): (text: string) => string {
  const whole = new Map<string, string>();
  const secrets: string[] = [];
  for (const url of urls) {
    const shown = redactServerUrl(url);
    let href: string | undefined;
    try {
      href = new URL(url).href;
    } catch {
      href = undefined;
    }
    for (const form of [url, href]) if (form !== undefined && form !== shown) whole.set(form, shown);
    secrets.push(...urlSecrets(url));
  }
  const forms = [...whole.keys()].sort((a, b) => b.length - a.length);
  const redactor = new Redactor(secrets);
  return (text) => {
    let out = text;
    for (const form of forms) if (out.includes(form)) out = out.split(form).join(whole.get(form)!);
    return redactor.string(out);
  };
}

/**
 * An http(s) URL in free text: stops at white space, quotes, angle brackets, backslashes (JSON
 * escapes), parentheses and at `::`, so that an interrupt key (`{url}::{tool}`) keeps its tool name.
 * A bracketed IPv6 host is taken whole.
 */
const URL_IN_TEXT = /https?:\/\/(?:\[[0-9A-Fa-f:.]*\])?(?:[^\s"'<>`\\():]|:(?!:))*/g;

/**
 * `text` with every http(s) URL that carries a credential (a user name or password, or a query
 * value `isCredentialParam` calls one) in its `redactServerUrl` form, whether or not it names a
 * registered tool server. Other URLs are left as written.
 */
export function redactUrlsIn(text: string): string {
  if (!text.includes('://')) return text;
  return text.replace(URL_IN_TEXT, (match) => {
    // Punctuation ending a sentence is not part of the URL, as linkifiers read it.
    const trail = /[.,;:!?]+$/.exec(match)?.[0] ?? '';
    const found = match.slice(0, match.length - trail.length);
    let parsed: URL;
    try {
      parsed = new URL(found);
    } catch {
      return match;
    }
    const credentials = parsed.username !== '' || parsed.password !== '' || [...parsed.searchParams].some(([name, value]) => isCredentialParam(name, value));
    return credentials ? redactServerUrl(found) + trail : match;
  });
}

/**
 * What a viewer may read of text Hangar stores as given (an agent's files and definition):
 * `scrubber` (the workspace's known URLs and secrets) and then `redactUrlsIn` for any other URL.
 */
export function viewerText(scrubber: (text: string) => string): (text: string) => string {
  return (text) => redactUrlsIn(scrubber(text));
}

/** A deep copy of JSON `value` with every string and every object key passed through `scrub`. */
export function scrubJson<T>(value: T, scrub: (text: string) => string): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return scrub(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, inner]) => [scrub(k), walk(inner)]));
    return v;
  };
  return walk(value) as T;
}
