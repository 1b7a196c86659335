// Console sessions: the browser's HttpOnly cookie stands for one API key (cookie ↔ key principal).
// The key itself is never stored (the key's row is referenced); the cookie token is stored only
// as a SHA-256 hash. A session ends at its expiry, at sign-out, or when its key is revoked.
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../db/index.js';
import type { Caller } from '../caller.js';
import type { WorkspaceService } from '../workspaces/service.js';

/** How long a Console session lasts unless signed out (12 hours). */
export const CONSOLE_SESSION_TTL_MS = 12 * 60 * 60 * 1000;

/** A signed-in session as handed to the HTTP layer once (the token goes into the cookie). */
export interface ConsoleSession {
  token: string;
  caller: Caller;
  expiresAt: Date;
}

/** The signed-in caller behind a session cookie, with when the session ends. */
export interface ConsoleSessionCaller {
  caller: Caller;
  expiresAt: Date;
}

function hash(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * The CSRF token of a session: derived from the HttpOnly session token, so a page on another
 * origin can neither read nor compute it. State-changing requests authenticated by the cookie must
 * carry it in `X-CSRF-Token` (the "signed double submit" pattern, with no second cookie).
 */
export function csrfTokenOf(sessionToken: string): string {
  return createHash('sha256').update(`hangar-console-csrf:${sessionToken}`, 'utf8').digest('base64url');
}

/** Sign-in, sign-out and cookie authentication. */
export class ConsoleSessionService {
  constructor(
    private readonly db: Db,
    private readonly workspaces: WorkspaceService,
    private readonly ttlMs = CONSOLE_SESSION_TTL_MS,
  ) {}

  /** Exchange an API key for a session, or undefined when the key is unknown or revoked. */
  async signIn(apiKey: string): Promise<ConsoleSession | undefined> {
    const caller = await this.workspaces.authenticate(apiKey);
    if (!caller) return undefined;
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + this.ttlMs);
    // Expired sessions are removed on the way: there are few, and it keeps the table small.
    await this.db.deleteFrom('console_sessions').where('expires_at', '<', new Date()).execute();
    await this.db.insertInto('console_sessions').values({ token_hash: hash(token), key_id: caller.keyId, expires_at: expiresAt }).execute();
    return { token, caller, expiresAt };
  }

  /** The caller of a live session whose key is not revoked. */
  async authenticate(token: string): Promise<ConsoleSessionCaller | undefined> {
    const row = await this.db
      .selectFrom('console_sessions as s')
      .innerJoin('api_keys as k', 'k.id', 's.key_id')
      .innerJoin('workspaces as w', 'w.id', 'k.workspace_id')
      .select(['k.id', 'k.workspace_id', 'k.role', 'k.principal', 'w.preview_access', 's.expires_at'])
      .where('s.token_hash', '=', hash(token))
      .where('s.expires_at', '>', new Date())
      .where('k.revoked_at', 'is', null)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      caller: { workspaceId: row.workspace_id, keyId: row.id, role: row.role, principal: row.principal, previewAccess: row.preview_access },
      expiresAt: row.expires_at,
    };
  }

  /** End a session (sign-out). Unknown tokens are ignored. */
  async signOut(token: string): Promise<void> {
    await this.db.deleteFrom('console_sessions').where('token_hash', '=', hash(token)).execute();
  }
}
