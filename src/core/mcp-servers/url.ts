// Tool server URLs are compared after stripping trailing slashes (SPEC: interrupt_config keys, tools[].mcp_server_url).
// A URL may carry a credential in its query string (`?api_key=…`): the tool server's own record and
// the agent's tools show it as the owner configured it; everything else Hangar writes (tool errors,
// interrupts, traces, logs, error answers) shows `redactServerUrl` and redacts `urlSecrets`.
import { REDACTED, Redactor } from '../../tracing/redact.js';

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
 * and every query value replaced (`?api_key=[redacted]`; the names stay, to tell servers apart).
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
  if (parsed.username === '' && parsed.password === '' && parsed.search === '' && parsed.hash === '') return normalizeServerUrl(url);
  parsed.username = '';
  parsed.password = '';
  parsed.hash = '';
  if (parsed.search !== '') {
    parsed.search = [...parsed.searchParams].map(([key, value]) => (value === '' ? encodeURIComponent(key) : `${encodeURIComponent(key)}=${REDACTED}`)).join('&');
  }
  return normalizeServerUrl(parsed.href);
}

/**
 * The credentials `url` carries, as written and decoded: its query values, user name, password and
 * fragment, and, when it carries any, the whole URL as written and as the URL class writes it (so
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
  for (const value of parsed.searchParams.values()) if (value !== '') secrets.add(value);
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
