// The OAuth 2.0 authorization-code flow for a principal: start (authorization URL with state and
// PKCE), the browser's callback (code exchange), polling for completion, bearer tokens for tool
// calls (refreshed when needed) and revocation.
import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Db } from '../../db/index.js';
import type { Logger } from '../../logging.js';
import { type Caller, requireWrite } from '../caller.js';
import { HangarError, invalidField } from '../errors.js';
import type { McpHeader } from '../mcp-servers/service.js';
import type { Cipher } from '../secrets/cipher.js';
import { OAuthAuthorizationRequired } from './authorization-required.js';
import { codeChallenge, newCodeVerifier } from './pkce.js';
import type { OAuthProvider, OAuthProviderService } from './providers.js';
import { requestTokens } from './token-endpoint.js';
import { TokenStore } from './tokens.js';

/** What the OAuth service needs of a tool server (a registration, or the runtime's view of one). */
export interface OAuthToolServer {
  headers: McpHeader[];
  /** `oauth` (or absent with an `oauthProviderId`) means the bearer token is added. */
  authType?: 'headers' | 'oauth' | undefined;
  oauthProviderId: string | null;
}

/** Where the provider sends the browser back, relative to Hangar's public URL. */
export const CALLBACK_PATH = '/oauth/callback';

/** How long a started authorization may take before its state stops being accepted. */
export const SESSION_TTL_MS = 10 * 60_000;

/** How long after its state expired a session claimed by a callback may still be exchanging its code. */
const EXCHANGE_GRACE_MS = 2 * 60_000;

/** How long a session stays readable after its state expired. */
const SESSION_RETENTION_MS = 24 * 60 * 60_000;

/** Status of an authorization session as clients see it (the hosted API's names). */
export type SessionStatus = 'PENDING' | 'COMPLETED' | 'CONNECTION_REQUIRED' | 'TOKEN_EXPIRED';

/** An authorization session. */
export interface AuthSession {
  id: string;
  providerId: string;
  status: SessionStatus;
  /** Why a session ended without a token. */
  error: string | null;
}

/** What `start` returns: a session to complete in a browser, or the reuse of a token the principal already has. */
export type StartResult =
  | { status: 'PENDING'; id: string; providerId: string; verificationUrl: string }
  | { status: 'COMPLETED'; providerId: string };

/** Result of the browser callback. */
export interface CallbackResult {
  ok: boolean;
  providerName: string | null;
  message: string;
}

/** Options of the OAuth service. */
export interface OAuthServiceOptions {
  /** Hangar's public base URL (the callback is `<base>/oauth/callback`), known once the server listens. */
  publicUrl: () => string;
  logger: Logger;
  fetch?: typeof fetch;
}

/** The authorization-code flow and token use, per (workspace, principal, provider). */
export class OAuthService {
  private readonly tokens: TokenStore;
  private readonly settled = new EventEmitter();

  constructor(
    private readonly db: Db,
    private readonly cipher: Cipher,
    private readonly providers: OAuthProviderService,
    private readonly options: OAuthServiceOptions,
  ) {
    this.tokens = new TokenStore(db, cipher, options.fetch ?? fetch);
    this.settled.setMaxListeners(0);
  }

  /** The redirect URI registered with providers. */
  redirectUri(): string {
    return `${this.options.publicUrl().replace(/\/+$/, '')}${CALLBACK_PATH}`;
  }

  /**
   * Start an authorization for the caller. With `strategy: 'REUSE'` and a usable token, nothing is
   * started; otherwise the answer carries the URL to open in a browser.
   */
  async start(
    caller: Caller,
    input: { provider_id: string; scopes?: string[] | undefined; strategy?: 'REUSE' | 'CREATE' | undefined; token_id?: string | undefined; is_default?: boolean | undefined },
  ): Promise<StartResult> {
    requireWrite(caller);
    // One token per caller and provider, which is always the one their runs use.
    if (input.is_default === false) {
      throw invalidField(['is_default'], 'Hangar keeps one token per caller and provider, always the default one: a token that is not the default cannot be kept (omit is_default or send true)');
    }
    const provider = await this.providers.find(caller.workspaceId, input.provider_id);
    // The caller's token for the provider has one id (the `token` of a COMPLETED answer): naming it
    // re-authorizes that token (REUSE answers COMPLETED while it is usable; CREATE replaces it).
    if (input.token_id !== undefined && input.token_id !== tokenId(provider.providerId, caller.principal)) {
      throw new HangarError(
        'oauth_token_not_found',
        `token_id ${input.token_id} is not a token of this caller for provider ${provider.providerId}; the caller's is ${tokenId(provider.providerId, caller.principal)}`,
      );
    }
    const owner = { workspaceId: caller.workspaceId, principal: caller.principal, provider };
    if ((input.strategy ?? 'REUSE') === 'REUSE' && (await this.tokens.has(owner))) {
      return { status: 'COMPLETED', providerId: provider.providerId };
    }
    const session = await this.createSession(provider, caller.principal, input.scopes?.length ? input.scopes : provider.scopes);
    return { status: 'PENDING', id: session.id, providerId: provider.providerId, verificationUrl: session.url };
  }

  /** The caller's session; with `waitSeconds`, wait up to that long for it to leave PENDING. */
  async session(caller: Caller, id: string, waitSeconds = 0): Promise<AuthSession> {
    const deadline = Date.now() + waitSeconds * 1000;
    for (;;) {
      const session = await this.readSession(caller, id);
      const remaining = deadline - Date.now();
      if (session.status !== 'PENDING' || remaining <= 0) return session;
      // Woken by a callback in this process; the timer covers callbacks served by another replica.
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.settled.off(id, done);
          resolve();
        };
        const timer = setTimeout(done, Math.min(remaining, 500));
        this.settled.once(id, done);
      });
    }
  }

  /** Handle the provider's redirect: find the session by `state`, exchange the code, store the tokens. */
  async callback(query: { state?: string | undefined; code?: string | undefined; error?: string | undefined; error_description?: string | undefined }): Promise<CallbackResult> {
    if (!query.state) return { ok: false, providerName: null, message: 'the callback has no state parameter' };
    // Claim the session: a state is good for one callback only.
    const claimed = await this.db
      .updateTable('oauth_sessions')
      .set({ status: 'EXCHANGING' })
      .where('state_hash', '=', hashState(query.state))
      .where('status', '=', 'PENDING')
      .where('expires_at', '>', new Date())
      .returningAll()
      .executeTakeFirst();
    if (!claimed) return { ok: false, providerName: null, message: 'this authorization link is unknown, already used or expired; start again' };
    const provider = await this.providers.byId(claimed.workspace_id, claimed.provider_ref);
    try {
      if (query.error) throw new HangarError('oauth_provider_error', `the provider answered ${query.error}${query.error_description ? `: ${query.error_description}` : ''}`);
      if (!query.code) throw new HangarError('oauth_provider_error', 'the callback has neither code nor error');
      const tokens = await requestTokens(
        provider,
        {
          grant_type: 'authorization_code',
          code: query.code,
          redirect_uri: claimed.redirect_uri,
          ...(claimed.code_verifier_encrypted ? { code_verifier: this.cipher.decrypt(claimed.code_verifier_encrypted) } : {}),
        },
        this.options.fetch ?? fetch,
      );
      await this.db.transaction().execute(async (trx) => {
        await this.tokens.save({ workspaceId: claimed.workspace_id, principal: claimed.principal, provider }, tokens, trx);
        await trx.updateTable('oauth_sessions').set({ status: 'COMPLETED', completed_at: new Date(), code_verifier_encrypted: null }).where('id', '=', claimed.id).execute();
      });
      return { ok: true, providerName: provider.name, message: `${provider.name} is connected; you can close this window` };
    } catch (error) {
      const message = error instanceof HangarError ? error.message : 'the code exchange failed';
      if (!(error instanceof HangarError)) this.options.logger.error({ err: error, session: claimed.id }, 'oauth code exchange failed');
      else this.options.logger.warn({ session: claimed.id, code: error.code }, message);
      await this.db.updateTable('oauth_sessions').set({ status: 'FAILED', error: message, completed_at: new Date(), code_verifier_encrypted: null }).where('id', '=', claimed.id).execute();
      return { ok: false, providerName: provider.name, message };
    } finally {
      this.settled.emit(claimed.id);
    }
  }

  /**
   * The access token to send as `Authorization: Bearer` for `principal` with the provider `providerId`
   * (its `id` or `provider_id`), refreshed when it expires within a minute. Throws
   * OAuthAuthorizationRequired (carrying a fresh authorization URL) when the principal has none.
   */
  async bearerFor(input: { workspaceId: string; principal: string; providerId: string; scopes?: string[] | undefined }): Promise<string> {
    const provider = await this.providers.find(input.workspaceId, input.providerId);
    const result = await this.tokens.accessToken({ workspaceId: input.workspaceId, principal: input.principal, provider });
    if (result.kind === 'ok') return result.accessToken;
    const session = await this.createSession(provider, input.principal, input.scopes?.length ? input.scopes : provider.scopes);
    throw new OAuthAuthorizationRequired(provider.providerId, session.id, session.url);
  }

  /**
   * The headers to send to a tool server for `principal`: its stored headers, plus for
   * `auth_type: "oauth"` servers `Authorization: Bearer <access token>` (refreshed when needed).
   * Throws OAuthAuthorizationRequired when the principal has not authorized the server's provider.
   */
  async toolServerHeaders(input: { workspaceId: string; principal: string; server: OAuthToolServer }): Promise<Record<string, string>> {
    const headers = Object.fromEntries(input.server.headers.map((h) => [h.key, h.value]));
    if (input.server.authType === 'headers' || !input.server.oauthProviderId) return headers;
    const token = await this.bearerFor({ workspaceId: input.workspaceId, principal: input.principal, providerId: input.server.oauthProviderId });
    // The OAuth token wins over any stored Authorization header, whatever its case.
    for (const key of Object.keys(headers)) if (key.toLowerCase() === 'authorization') delete headers[key];
    return { ...headers, Authorization: `Bearer ${token}` };
  }

  /**
   * The headers `toolServerHeaders` would send, or undefined when the principal has not authorized
   * the server's provider: unlike it, this never opens an authorization session (health checks).
   */
  async toolServerHeadersIfAuthorized(input: { workspaceId: string; principal: string; server: OAuthToolServer }): Promise<Record<string, string> | undefined> {
    const headers = Object.fromEntries(input.server.headers.map((h) => [h.key, h.value]));
    if (input.server.authType === 'headers' || !input.server.oauthProviderId) return headers;
    const provider = await this.providers.find(input.workspaceId, input.server.oauthProviderId);
    const result = await this.tokens.accessToken({ workspaceId: input.workspaceId, principal: input.principal, provider });
    if (result.kind !== 'ok') return undefined;
    for (const key of Object.keys(headers)) if (key.toLowerCase() === 'authorization') delete headers[key];
    return { ...headers, Authorization: `Bearer ${result.accessToken}` };
  }

  /**
   * An access token of ANY principal of the workspace for the provider, or undefined: used only to
   * list a tool server's tools (their names and schemas are server metadata, not user data) when an
   * agent is built, before any run's principal is known. Tool calls always use the run's principal.
   */
  async listingBearer(workspaceId: string, providerId: string): Promise<string | undefined> {
    const provider = await this.providers.find(workspaceId, providerId);
    const holders = await this.db
      .selectFrom('oauth_tokens')
      .select('principal')
      .where('workspace_id', '=', workspaceId)
      .where('provider_ref', '=', provider.id)
      .orderBy('updated_at', 'desc')
      .limit(5)
      .execute();
    for (const { principal } of holders) {
      const result = await this.tokens.accessToken({ workspaceId, principal, provider });
      if (result.kind === 'ok') return result.accessToken;
    }
    return undefined;
  }

  /** Whether any principal of the workspace holds tokens for the provider (`id`); one indexed read. */
  async hasGrant(workspaceId: string, providerRef: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('oauth_tokens')
      .select('principal')
      .where('workspace_id', '=', workspaceId)
      .where('provider_ref', '=', providerRef)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Forget the caller's tokens for a provider (they must authorize again). */
  async revoke(caller: Caller, providerId: string): Promise<void> {
    requireWrite(caller);
    const provider = await this.providers.find(caller.workspaceId, providerId);
    await this.tokens.remove({ workspaceId: caller.workspaceId, principal: caller.principal, provider });
  }

  private async createSession(provider: OAuthProvider, principal: string, scopes: string[]): Promise<{ id: string; url: string }> {
    const state = randomBytes(32).toString('base64url');
    const verifier = provider.usesPkce ? newCodeVerifier() : null;
    const redirectUri = this.redirectUri();
    // Finished and abandoned sessions are kept a day for polling clients, then dropped here rather
    // than by a sweeper: starting a session is rare and the delete is indexed by provider.
    await this.db
      .deleteFrom('oauth_sessions')
      .where('provider_ref', '=', provider.id)
      .where('expires_at', '<', new Date(Date.now() - SESSION_RETENTION_MS))
      .execute();
    const row = await this.db
      .insertInto('oauth_sessions')
      .values({
        workspace_id: provider.workspaceId,
        provider_ref: provider.id,
        principal,
        state_hash: hashState(state),
        code_verifier_encrypted: verifier === null ? null : this.cipher.encrypt(verifier),
        redirect_uri: redirectUri,
        scopes,
        expires_at: new Date(Date.now() + SESSION_TTL_MS),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const url = new URL(provider.authUrl);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', provider.clientId);
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('state', state);
    if (scopes.length > 0) url.searchParams.set('scope', scopes.join(' '));
    if (verifier !== null) {
      const method = provider.codeChallengeMethod ?? 'S256';
      url.searchParams.set('code_challenge', codeChallenge(verifier, method));
      url.searchParams.set('code_challenge_method', method);
    }
    return { id: row.id, url: url.toString() };
  }

  private async readSession(caller: Caller, id: string): Promise<AuthSession> {
    const row = await this.db
      .selectFrom('oauth_sessions as s')
      .innerJoin('oauth_providers as p', 'p.id', 's.provider_ref')
      .select(['s.id', 's.status', 's.error', 's.expires_at', 'p.provider_id'])
      .where('s.workspace_id', '=', caller.workspaceId)
      .where('s.principal', '=', caller.principal)
      .where('s.id', '=', id)
      .executeTakeFirst();
    if (!row) throw new HangarError('oauth_session_not_found', `no authorization session ${id} for this caller`);
    const expired = row.expires_at.getTime() <= Date.now();
    // A callback claims the session (EXCHANGING) before a code exchange of at most a token request's
    // timeout; a claim older than that outlived the process that made it (a crash or a restart).
    const abandoned = row.status === 'EXCHANGING' && row.expires_at.getTime() + EXCHANGE_GRACE_MS <= Date.now();
    const status: SessionStatus =
      row.status === 'COMPLETED'
        ? 'COMPLETED'
        : row.status === 'FAILED' || (row.status === 'PENDING' && expired) || abandoned
          ? 'CONNECTION_REQUIRED'
          : 'PENDING';
    const error =
      row.status === 'FAILED'
        ? row.error
        : abandoned
          ? 'the code exchange did not finish (the server stopped during it); start again'
          : status === 'CONNECTION_REQUIRED'
            ? 'the authorization was not completed in time'
            : null;
    return { id: row.id, providerId: row.provider_id, status, error };
  }
}

/** The id of a caller's token for a provider, as clients see it: `<provider_id>:<principal>`. */
export function tokenId(providerId: string, principal: string): string {
  return `${providerId}:${principal}`;
}

function hashState(state: string): Buffer {
  return createHash('sha256').update(state, 'utf8').digest();
}
