// The server and key of every client command (`agents`, `chat`, `schedules`, `auth`, `repos`, …):
// from flags, else HANGAR_URL / HANGAR_API_KEY. One place, so every command refuses a missing key
// or a malformed URL alike (exit 2) and names a server it cannot reach (exit 1).
import { ConfigError } from '../config/index.js';

/** A server, a key, and a fetch that names the server when it cannot be reached. */
export interface ClientTarget {
  baseUrl: string;
  apiKey: string;
  fetch: typeof fetch;
}

/** Thrown when the server cannot be reached (connection refused, unknown host…). */
export class UnreachableError extends Error {
  override name = 'UnreachableError';
}

export const DEFAULT_URL = 'http://127.0.0.1:8124';

/**
 * The target of a client command; throws ConfigError for a missing key or a URL that is not http(s).
 * `urlFlag` is the flag that names the Hangar server in messages (`mcp-servers add` has `--hangar-url`).
 */
export function clientTarget(flags: { url?: string | undefined; apiKey?: string | undefined }, env: NodeJS.ProcessEnv = process.env, urlFlag = '--url'): ClientTarget {
  const baseUrl = flags.url ?? env.HANGAR_URL ?? DEFAULT_URL;
  let parsed: URL | undefined;
  try {
    parsed = new URL(baseUrl);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new ConfigError(`the server URL ${JSON.stringify(baseUrl)} is not an http(s) URL (${urlFlag} or HANGAR_URL, e.g. ${DEFAULT_URL})`);
  }
  const apiKey = flags.apiKey ?? env.HANGAR_API_KEY;
  if (!apiKey) throw new ConfigError('an API key is needed: --api-key or HANGAR_API_KEY');
  return { baseUrl, apiKey, fetch: reachingFetch(baseUrl, urlFlag) };
}

/** A fetch that says which server could not be reached instead of "fetch failed". */
export function reachingFetch(baseUrl: string, urlFlag = '--url'): typeof fetch {
  return (input, init) =>
    fetch(input, init).catch((error: unknown) => {
      if (init?.signal?.aborted) throw error;
      throw new UnreachableError(`cannot reach the Hangar server at ${baseUrl} (is it running? set ${urlFlag} or HANGAR_URL)`);
    });
}

/**
 * An API error body as one line for a terminal: its `detail` when it is text, the field errors of a
 * validation failure as `loc: msg` (joined by `; `), else the body as JSON.
 */
export function describeError(error: unknown): string {
  if (error && typeof error === 'object' && 'detail' in error) {
    const detail = (error as { detail: unknown }).detail;
    if (typeof detail === 'string') return detail;
    if (Array.isArray(detail)) {
      return detail
        .map((d) => {
          const item = d as { loc?: unknown[]; msg?: string };
          return item.loc?.length ? `${item.loc.join('.')}: ${item.msg ?? ''}` : (item.msg ?? JSON.stringify(d));
        })
        .join('; ');
    }
    return JSON.stringify(detail);
  }
  return JSON.stringify(error);
}

/** Add `--url` and `--api-key` (what `clientTarget` reads) to a client command. */
export function clientOptions<C extends { option(flags: string, description: string): C }>(cmd: C): C {
  return cmd.option('--url <url>', `Hangar server (HANGAR_URL; default ${DEFAULT_URL})`).option('--api-key <key>', 'API key (HANGAR_API_KEY)');
}
