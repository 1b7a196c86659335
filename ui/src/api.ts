// REST through the typed client generated from /openapi.json (src/client/schema.ts). The browser
// authenticates with the HttpOnly session cookie; the CSRF token lives in memory only.
import createClient from 'openapi-fetch';
import type { components, paths } from '../../src/client/schema';

export type Schemas = components['schemas'];
export type Session = Schemas['ConsoleSession'];

let csrfToken: string | null = null;
let onSignedOut: () => void = () => {};

/** Remember the CSRF token of the signed-in session (never persisted). */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}
export function getCsrfToken(): string | null {
  return csrfToken;
}

/** Called when any request answers 401: the session ended (expired, signed out, key revoked). */
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

/**
 * Every request: the CSRF token on state-changing calls; a 401 (but sign-in's own) ends the session.
 * A fetch wrapper, not an openapi-fetch middleware: the client awaits middlewares before it fetches,
 * which would hold the requests boot.ts starts until the whole entry has been evaluated.
 */
async function sessionFetch(request: Request): Promise<Response> {
  if (csrfToken && !['GET', 'HEAD'].includes(request.method)) request.headers.set('X-CSRF-Token', csrfToken);
  const response = await fetch(request);
  if (response.status === 401 && !(request.method === 'POST' && new URL(request.url).pathname === '/v1/console/session')) {
    clearSessionHint();
    onSignedOut();
  }
  return response;
}

export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: 'same-origin', fetch: sessionFetch });

/** The error an API call answered, for people. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    /** Each invalid field the server named (`loc` without its leading `body`/`query`), for forms to show beside their inputs. */
    readonly fields: { field: string; message: string }[] = [],
  ) {
    super(message);
  }
}

/** The invalid fields of an error body of this API (`errors`, or a list in `detail`). */
function fieldsOf(error: unknown): { field: string; message: string }[] {
  if (!error || typeof error !== 'object') return [];
  const e = error as { detail?: unknown; errors?: unknown };
  const items = Array.isArray(e.errors) ? e.errors : Array.isArray(e.detail) ? e.detail : [];
  return (items as { loc?: unknown[]; msg?: string }[]).map((i) => {
    const loc = (i.loc ?? []).map(String);
    return { field: (['body', 'query', 'path'].includes(loc[0] ?? '') ? loc.slice(1) : loc).join('.'), message: i.msg ?? 'is invalid' };
  });
}

/** A readable message for an error body of this API (`detail`, or each invalid field and why). */
export function describe(error: unknown, status: number): string {
  if (error && typeof error === 'object') {
    const e = error as { detail?: unknown; errors?: { loc?: unknown[]; msg?: string }[] };
    if (Array.isArray(e.errors) && e.errors.length) return e.errors.map((i) => `${(i.loc ?? []).join('.')}: ${i.msg}`).join('; ');
    if (typeof e.detail === 'string') return e.detail;
    if (Array.isArray(e.detail)) return e.detail.map((i: { loc?: unknown[]; msg?: string }) => `${(i.loc ?? []).join('.')}: ${i.msg}`).join('; ');
  }
  return `request failed (${status})`;
}

/** The data of a typed-client answer, or an ApiError. */
export function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || !result.response.ok) throw new ApiError(describe(result.error, result.response.status), result.response.status, fieldsOf(result.error));
  return result.data as T;
}

const HINT = 'hangar_console';

/** Forget the readable "signed in" hint (the HttpOnly session cookie is the server's to clear). */
export function clearSessionHint(): void {
  document.cookie = `${HINT}=; Max-Age=0; Path=/; SameSite=Strict`;
}

/** Whether the sign-in's readable hint cookie (no secret) says a session may be there. */
export function sessionHint(): boolean {
  return document.cookie.split('; ').some((c) => c === `${HINT}=1`);
}

/** The signed-in caller, or null. Asks only when the sign-in's hint cookie is there. */
export async function fetchSession(): Promise<Session | null> {
  if (!sessionHint()) return null;
  const result = await api.GET('/v1/console/session');
  if (result.response.status === 401) {
    clearSessionHint();
    return null;
  }
  return ok(result);
}

/** Whether a role may change resources. */
export function canWrite(s: Session | null | undefined): boolean {
  return s?.role === 'admin' || s?.role === 'member';
}
