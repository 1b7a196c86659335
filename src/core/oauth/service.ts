// The OAuth 2.0 authorization-code flow for a principal: start (authorization URL with state and
// PKCE), the browser's callback (code exchange), polling for completion, bearer tokens for tool
// calls (refreshed when needed) and revocation.
import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import type { Logger } from '../../logging.js';
import { type Caller, requireWrite } from '../caller.js';
import { HangarError, invalidField } from '../errors.js';
import type { McpHeader, OAuthMode } from '../mcp-servers/service.js';
import type { EgressGuard } from '../../net/egress.js';
import { laptopEgress } from '../egress.js';
import { registerDynamicClient } from './dynamic-client.js';
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
  /** `per_user_dynamic_client`: each principal's provider is registered for it (needs `id`, `url`, `name`). */
  oauthMode?: OAuthMode | undefined;
  id?: string | undefined;
  url?: string | undefined;
  name?: string | undefined;
}

/** A `per_user_dynamic_client` tool server, with what registering a client for it needs. */
type DynamicToolServer = OAuthToolServer & { id: string; url: string; name: string };

/** Whether calls to `server` carry a principal's OAuth token (a shared provider's or a per-user client's). */
export function isOAuthBacked(server: OAuthToolServer): boolean {
  return isDynamic(server) || (server.authType !== 'headers' && !!server.oauthProviderId);
}

function isDynamic(server: OAuthToolServer): server is DynamicToolServer {
  return server.authType === 'oauth' && server.oauthMode === 'per_user_dynamic_client' && server.id !== undefined && server.url !== undefined;
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
  /** The agent its token is scoped to; null: the default token. */
  agentId: string | null;
}

/** What `start` returns: a session to complete in a browser, or the reuse of a token the principal already has. */
export type StartResult =
  | { status: 'PENDING'; id: string; providerId: string; verificationUrl: string; agentId: string | null }
  | { status: 'COMPLETED'; providerId: string; agentId: string | null };

/** One of a caller's stored tokens, as listed (never the token itself). */
export interface StoredToken {
  tokenId: string;
  providerId: string;
  /** The agent it is scoped to; null: the caller's default token. */
  agentId: string | null;
  expiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

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
  /** The outbound policy the discovery and registration of per-user clients go through. */
  egress?: EgressGuard;
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
   * started; otherwise the answer carries the URL to open in a browser. With `agent_id` (and without
   * `is_default: true`) the token is scoped to that agent: its runs use it before the caller's default
   * token; `token_id` names a token to re-authorize (its scope is kept).
   */
  async start(
    caller: Caller,
    input: {
      provider_id: string;
      scopes?: string[] | undefined;
      strategy?: 'REUSE' | 'CREATE' | undefined;
      agent_id?: string | undefined;
      token_id?: string | undefined;
      is_default?: boolean | undefined;
    },
  ): Promise<StartResult> {
    requireWrite(caller);
    const provider = await this.providers.find(caller.workspaceId, input.provider_id);
    if (provider.dynamicPrincipal !== null && provider.dynamicPrincipal !== caller.principal) {
      // A client registered for one user is that user's: others get their own from the tool server's oauth-provider route.
      throw new HangarError('forbidden', `OAuth provider "${provider.providerId}" was registered for another user; POST /v1/deepagents/mcp-servers/{id}/oauth-provider gives you your own`);
    }
    const agentId = await this.scopeOf(caller, provider.providerId, input);
    const owner = { workspaceId: caller.workspaceId, principal: caller.principal, provider, agentId };
    if ((input.strategy ?? 'REUSE') === 'REUSE' && (await this.tokens.has(owner))) {
      return { status: 'COMPLETED', providerId: provider.providerId, agentId };
    }
    const session = await this.createSession(provider, caller.principal, input.scopes?.length ? input.scopes : provider.scopes, agentId);
    return { status: 'PENDING', id: session.id, providerId: provider.providerId, verificationUrl: session.url, agentId };
  }

  /**
   * Which token a start writes: the agent's (its id) or the caller's default (null). `agent_id` names
   * the agent unless `is_default: true` asks for the default; `token_id` (an id `tokenId` makes) names
   * either, and must agree with `agent_id` when both are sent. `is_default: false` needs an agent.
   */
  private async scopeOf(
    caller: Caller,
    providerId: string,
    input: { agent_id?: string | undefined; token_id?: string | undefined; is_default?: boolean | undefined },
  ): Promise<string | null> {
    if (input.agent_id !== undefined) await this.requireAgent(caller.workspaceId, input.agent_id);
    let agentId: string | null = input.agent_id !== undefined && input.is_default !== true ? input.agent_id : null;
    if (input.token_id !== undefined) {
      const own = tokenId(providerId, caller.principal);
      const named = input.token_id === own ? null : input.token_id.startsWith(`${own}:`) ? input.token_id.slice(own.length + 1) : undefined;
      if (named === undefined || (named !== null && !UUID.test(named))) {
        throw new HangarError('oauth_token_not_found', `token_id ${input.token_id} is not a token of this caller for provider ${providerId}; the caller's default is ${own}, an agent's is ${own}:<agent_id>`);
      }
      if (input.agent_id !== undefined && named !== agentId) {
        throw invalidField(['token_id'], `token_id ${input.token_id} is ${named === null ? 'the caller’s default token' : `the token of agent ${named}`}, not the one agent_id${input.is_default === true ? ' and is_default' : ''} name${input.is_default === true ? '' : 's'} (${tokenId(providerId, caller.principal, agentId)})`);
      }
      if (named !== null) await this.requireAgent(caller.workspaceId, named);
      agentId = named;
    }
    if (input.is_default === false && agentId === null) {
      throw invalidField(['is_default'], 'a token that is not the default is one scoped to an agent: send agent_id with is_default false (or omit is_default for the default token)');
    }
    if (input.is_default === true && agentId !== null) {
      throw invalidField(['is_default'], `token_id names the token of agent ${agentId}, which is not the default: omit is_default or send false`);
    }
    return agentId;
  }

  private async requireAgent(workspaceId: string, agentId: string): Promise<void> {
    if (!(await this.isAgent(workspaceId, agentId))) throw new HangarError('agent_not_found', `no agent with id ${agentId} in this workspace`);
  }

  /** Whether `agentId` is an agent of the workspace (not deleted). */
  private async isAgent(workspaceId: string, agentId: string): Promise<boolean> {
    return (
      UUID.test(agentId) &&
      (await this.db.selectFrom('agents').select('id').where('workspace_id', '=', workspaceId).where('id', '=', agentId).where('deleted_at', 'is', null).executeTakeFirst()) !== undefined
    );
  }

  /** The caller's tokens for a provider: the default one and each agent's, default first. */
  async listTokens(caller: Caller, providerId: string): Promise<StoredToken[]> {
    const provider = await this.providers.find(caller.workspaceId, providerId);
    const rows = await this.db
      .selectFrom('oauth_tokens')
      .select(['agent_id', 'expires_at', 'created_at', 'updated_at'])
      .where('workspace_id', '=', caller.workspaceId)
      .where('provider_ref', '=', provider.id)
      .where('principal', '=', caller.principal)
      .orderBy(sql`agent_id IS NOT NULL`)
      .orderBy('created_at')
      .orderBy('agent_id')
      .execute();
    return rows.map((r) => ({
      tokenId: tokenId(provider.providerId, caller.principal, r.agent_id),
      providerId: provider.providerId,
      agentId: r.agent_id,
      expiresAt: r.expires_at,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }));
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
        if (claimed.agent_id !== null) {
          // Deleting the agent removes its tokens and sessions; one deleted during the exchange gets none.
          const alive = await trx.selectFrom('agents').select('id').where('id', '=', claimed.agent_id).where('deleted_at', 'is', null).forShare().executeTakeFirst();
          if (!alive) throw new HangarError('agent_not_found', `agent ${claimed.agent_id} was deleted during the authorization; its token is not kept`);
        }
        await this.tokens.save({ workspaceId: claimed.workspace_id, principal: claimed.principal, provider, agentId: claimed.agent_id }, tokens, trx);
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
   * (its `id` or `provider_id`), refreshed when it expires within a minute. With `agentId` (a run of
   * that agent), the principal's token scoped to the agent is used when there is one, else the default.
   * Throws OAuthAuthorizationRequired, carrying a fresh authorization URL, when the principal has
   * neither. With `agentId` (an agent of the workspace) the authorization makes that agent's token:
   * the first one its runs look for, so the run that asked uses it, and completing it in one agent's
   * run does not hand a token to every other agent of the principal. Without, the default token.
   */
  async bearerFor(input: { workspaceId: string; principal: string; providerId: string; agentId?: string | undefined; scopes?: string[] | undefined }): Promise<string> {
    const provider = await this.providers.find(input.workspaceId, input.providerId);
    const result = await this.usableToken(input.workspaceId, input.principal, provider, input.agentId);
    if (result.kind === 'ok') return result.accessToken;
    const agentId = input.agentId !== undefined && (await this.isAgent(input.workspaceId, input.agentId)) ? input.agentId : null;
    const session = await this.createSession(provider, input.principal, input.scopes?.length ? input.scopes : provider.scopes, agentId);
    throw new OAuthAuthorizationRequired(provider.providerId, session.id, session.url, agentId);
  }

  /**
   * The headers to send to a tool server for `principal`: its stored headers, plus for
   * `auth_type: "oauth"` servers `Authorization: Bearer <access token>` (refreshed when needed).
   * Throws OAuthAuthorizationRequired when the principal has not authorized the server's provider.
   */
  async toolServerHeaders(input: { workspaceId: string; principal: string; agentId?: string | undefined; server: OAuthToolServer }): Promise<Record<string, string>> {
    const headers = Object.fromEntries(input.server.headers.map((h) => [h.key, h.value]));
    if (!isOAuthBacked(input.server)) return headers;
    // A per-user client is registered on first use, so a run pauses for authorization as with a shared provider.
    const providerId = isDynamic(input.server) ? (await this.dynamicProvider(input.workspaceId, input.principal, input.server)).id : input.server.oauthProviderId!;
    const token = await this.bearerFor({ workspaceId: input.workspaceId, principal: input.principal, agentId: input.agentId, providerId });
    // The OAuth token wins over any stored Authorization header, whatever its case.
    for (const key of Object.keys(headers)) if (key.toLowerCase() === 'authorization') delete headers[key];
    return { ...headers, Authorization: `Bearer ${token}` };
  }

  /**
   * The headers `toolServerHeaders` would send, or undefined when the principal has not authorized
   * the server's provider: unlike it, this never opens an authorization session (health checks).
   */
  async toolServerHeadersIfAuthorized(input: { workspaceId: string; principal: string; agentId?: string | undefined; server: OAuthToolServer }): Promise<Record<string, string> | undefined> {
    const headers = Object.fromEntries(input.server.headers.map((h) => [h.key, h.value]));
    if (!isOAuthBacked(input.server)) return headers;
    const provider = isDynamic(input.server)
      ? await this.providers.dynamicFor(input.workspaceId, input.server.id, input.principal)
      : await this.providers.find(input.workspaceId, input.server.oauthProviderId!);
    if (!provider) return undefined;
    const result = await this.usableToken(input.workspaceId, input.principal, provider, input.agentId);
    if (result.kind !== 'ok') return undefined;
    for (const key of Object.keys(headers)) if (key.toLowerCase() === 'authorization') delete headers[key];
    return { ...headers, Authorization: `Bearer ${result.accessToken}` };
  }

  /**
   * An access token of ANY principal of the workspace for the provider, or undefined: used only to
   * list a tool server's tools (their names and schemas are server metadata, not user data) when an
   * agent is built, before any run's principal is known. Tool calls always use the run's principal.
   * A token scoped to an agent counts too (a run's pause makes its agent's token, so a workspace may
   * hold no default token at all).
   */
  async listingBearer(workspaceId: string, server: OAuthToolServer): Promise<string | undefined> {
    // A per-user server: any principal's token from the client registered for that principal.
    const providers = isDynamic(server)
      ? await this.providers.dynamicOf(workspaceId, server.id)
      : server.oauthProviderId
        ? [await this.providers.find(workspaceId, server.oauthProviderId)]
        : [];
    if (providers.length === 0) return undefined;
    const byRef = new Map(providers.map((p) => [p.id, p]));
    const holders = await this.db
      .selectFrom('oauth_tokens')
      .select(['principal', 'agent_id', 'provider_ref'])
      .where('workspace_id', '=', workspaceId)
      .where('provider_ref', 'in', [...byRef.keys()])
      .orderBy('updated_at', 'desc')
      .limit(5)
      .execute();
    for (const { principal, agent_id: agentId, provider_ref: ref } of holders) {
      const result = await this.tokens.accessToken({ workspaceId, principal, provider: byRef.get(ref)!, agentId });
      if (result.kind === 'ok') return result.accessToken;
    }
    return undefined;
  }

  /** Whether any principal of the workspace holds tokens for the server's provider (or its per-user clients). */
  async hasGrant(workspaceId: string, server: OAuthToolServer): Promise<boolean> {
    let query = this.db.selectFrom('oauth_tokens as t').select('t.principal').where('t.workspace_id', '=', workspaceId);
    if (isDynamic(server)) {
      query = query.innerJoin('oauth_providers as p', 'p.id', 't.provider_ref').where('p.dynamic_mcp_server_id', '=', server.id);
    } else if (server.oauthProviderId) {
      query = query.where('t.provider_ref', '=', server.oauthProviderId);
    } else {
      return false;
    }
    return (await query.limit(1).executeTakeFirst()) !== undefined;
  }

  /**
   * The OAuth provider of `principal` for the `per_user_dynamic_client` tool server: the one registered
   * for it before, or one registered now at the server's authorization server (with Hangar's callback
   * as redirect URI). Idempotent per principal.
   */
  async dynamicProvider(workspaceId: string, principal: string, server: OAuthToolServer & { id: string; url: string; name: string }): Promise<OAuthProvider> {
    const found = await this.providers.dynamicFor(workspaceId, server.id, principal);
    if (found) return found;
    const client = await registerDynamicClient({
      serverUrl: server.url,
      headers: Object.fromEntries(server.headers.filter((h) => h.key.toLowerCase() !== 'authorization').map((h) => [h.key, h.value])),
      redirectUri: this.redirectUri(),
      clientName: `Hangar: ${server.name}`,
      egress: this.options.egress ?? laptopEgress(),
    });
    const principalHash = createHash('sha256').update(principal, 'utf8').digest('hex').slice(0, 16);
    return this.providers.saveDynamic(workspaceId, server.id, principal, {
      ...client,
      providerId: `mcp-${server.id}-${principalHash}`,
      name: `${server.name} (per-user client)`,
      mcpServerUrl: server.url,
    });
  }

  /**
   * Forget one of the caller's tokens for a provider: the default one, or with `agentId` the one scoped
   * to that agent (its runs then use the default token).
   */
  async revoke(caller: Caller, providerId: string, agentId?: string | undefined): Promise<void> {
    requireWrite(caller);
    const provider = await this.providers.find(caller.workspaceId, providerId);
    if (agentId !== undefined && !UUID.test(agentId)) throw invalidField(['agent_id'], `${agentId} is not an agent id (a UUID)`);
    await this.tokens.remove({ workspaceId: caller.workspaceId, principal: caller.principal, provider, agentId: agentId ?? null });
  }

  /** The token a run of `agentId` uses: the agent's own when it has a usable one, else the default. */
  private async usableToken(workspaceId: string, principal: string, provider: OAuthProvider, agentId: string | undefined) {
    if (agentId !== undefined && UUID.test(agentId)) {
      const scoped = await this.tokens.accessToken({ workspaceId, principal, provider, agentId });
      if (scoped.kind === 'ok') return scoped;
    }
    return this.tokens.accessToken({ workspaceId, principal, provider });
  }

  private async createSession(provider: OAuthProvider, principal: string, scopes: string[], agentId: string | null = null): Promise<{ id: string; url: string }> {
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
        agent_id: agentId,
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
      .select(['s.id', 's.status', 's.error', 's.expires_at', 's.agent_id', 'p.provider_id'])
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
    return { id: row.id, providerId: row.provider_id, status, error, agentId: row.agent_id };
  }
}

/**
 * The id of a caller's token for a provider, as clients see it: `<provider_id>:<principal>` for the
 * default token, `<provider_id>:<principal>:<agent_id>` for one scoped to an agent.
 */
export function tokenId(providerId: string, principal: string, agentId?: string | null): string {
  return agentId ? `${providerId}:${principal}:${agentId}` : `${providerId}:${principal}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function hashState(state: string): Buffer {
  return createHash('sha256').update(state, 'utf8').digest();
}
