// Dynamic client registration for `per_user_dynamic_client` tool servers, as MCP clients do it: find
// the server's authorization server (RFC 9728 protected-resource metadata, named by the
// `WWW-Authenticate` of a 401 or at its well-known address), read that server's metadata (RFC 8414 or
// OpenID Connect discovery) and register a client there (RFC 7591). The MCP SDK's client auth helpers
// do the protocol; every request goes through the installation's outbound policy.
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
  registerClient,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { EgressRefused, type EgressGuard } from '../../net/egress.js';
import type { TokenEndpointAuthMethod } from '../../db/tables/oauth.js';
import { HangarError } from '../errors.js';
import { redactServerUrl } from '../mcp-servers/url.js';

/** How long one request of the discovery or the registration may take. */
const REQUEST_TIMEOUT_MS = 10_000;

/** What the registration yields: the fields of an OAuth provider. */
export interface RegisteredClient {
  clientId: string;
  clientSecret: string | null;
  authUrl: string;
  tokenUrl: string;
  usesPkce: boolean;
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  scopes: string[];
}

/** Token endpoint auth methods Hangar can use, in the order it asks for them. */
const METHODS: TokenEndpointAuthMethod[] = ['client_secret_basic', 'client_secret_post', 'none'];

/**
 * Discover the authorization server of the tool server at `serverUrl` and register a client there
 * whose redirect URI is `redirectUri`. Throws HangarError: `mcp_server_oauth_unsupported` (409) when
 * the server or its authorization server publishes no metadata or no registration endpoint, and
 * `oauth_registration_failed` (502) when a request fails, the outbound policy refuses an address the
 * metadata names, or the authorization server refuses the registration.
 */
export async function registerDynamicClient(input: {
  serverUrl: string;
  /** The server's stored headers (without Authorization), sent with the unauthenticated probe. */
  headers: Record<string, string>;
  redirectUri: string;
  clientName: string;
  egress: EgressGuard;
}): Promise<RegisteredClient> {
  const shown = redactServerUrl(input.serverUrl);
  const fetchFn = guardedFetch(input.egress);
  const step = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof HangarError) throw error;
      throw failed(`${what} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  // 1. An unauthenticated request: a 401's WWW-Authenticate may name the metadata and the scopes.
  const probe = await step(`asking ${shown} for its OAuth requirements`, () =>
    fetchFn(input.serverUrl, {
      method: 'POST',
      headers: { ...input.headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'hangar', version: '1' } },
      }),
    }),
  );
  const challenge = probe.status === 401 ? extractWWWAuthenticateParams(probe) : {};
  await probe.body?.cancel().catch(() => {});

  // 2. Protected-resource metadata (RFC 9728); without it, the server's origin is taken as its
  // authorization server, as MCP clients of the 2025-03-26 protocol do.
  let authorizationServer = new URL('/', input.serverUrl).toString();
  let resourceScopes: string[] | undefined;
  if (challenge.resourceMetadataUrl) refuseUnlessAllowed(input.egress, challenge.resourceMetadataUrl.href, `${shown} names its protected-resource metadata at`);
  const resource = await step(`reading the protected-resource metadata of ${shown}`, async () => {
    try {
      return await discoverOAuthProtectedResourceMetadata(input.serverUrl, challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : undefined, fetchFn);
    } catch (error) {
      // The SDK's words for "not published": a 404 at every well-known address, or another 4xx (a
      // server that answers 401 to any path without a token publishes nothing either).
      if (error instanceof Error && (/does not implement/.test(error.message) || /^HTTP 4\d\d /.test(error.message))) return undefined;
      throw error;
    }
  });
  if (resource?.authorization_servers?.[0]) authorizationServer = resource.authorization_servers[0];
  if (resource?.scopes_supported?.length) resourceScopes = resource.scopes_supported;
  refuseUnlessAllowed(input.egress, authorizationServer, `the OAuth metadata of ${shown} names the authorization server`);

  // 3. Authorization server metadata (RFC 8414, or OpenID Connect discovery).
  const metadata = await step(`reading the metadata of the authorization server ${authorizationServer}`, () =>
    discoverAuthorizationServerMetadata(authorizationServer, { fetchFn }),
  );
  if (!metadata) {
    throw unsupported(
      resource
        ? `the authorization server ${authorizationServer} named by ${shown} publishes no OAuth metadata (RFC 8414 or OpenID Connect discovery)`
        : `${shown} publishes no OAuth metadata: neither protected-resource metadata (RFC 9728) nor authorization-server metadata at its origin`,
    );
  }
  if (!metadata.registration_endpoint) {
    throw unsupported(`the authorization server ${authorizationServer} of ${shown} offers no dynamic client registration (its metadata has no registration_endpoint)`);
  }
  for (const [field, value] of [
    ['registration_endpoint', metadata.registration_endpoint],
    ['authorization_endpoint', metadata.authorization_endpoint],
    ['token_endpoint', metadata.token_endpoint],
  ] as const) {
    refuseUnlessAllowed(input.egress, value, `the metadata of the authorization server ${authorizationServer} names as its ${field}`);
  }

  // 4. Register (RFC 7591).
  const method = chooseMethod(metadata);
  const usesPkce = metadata.code_challenge_methods_supported?.includes('S256') ?? false;
  const scopes = challenge.scope ? challenge.scope.split(' ').filter(Boolean) : (resourceScopes ?? []);
  const info = await step(`registering a client at ${metadata.registration_endpoint}`, async () => {
    try {
      return await registerClient(authorizationServer, {
        metadata,
        clientMetadata: {
          client_name: input.clientName,
          redirect_uris: [input.redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: method,
          ...(scopes.length > 0 ? { scope: scopes.join(' ') } : {}),
        },
        fetchFn,
      });
    } catch (error) {
      if (error instanceof OAuthError) {
        throw failed(`the authorization server ${authorizationServer} refused the client registration: ${error.errorCode}${error.message ? `: ${error.message}` : ''}`);
      }
      throw error;
    }
  });
  const answered = info.token_endpoint_auth_method as TokenEndpointAuthMethod | undefined;
  const secret = info.client_secret ?? null;
  const tokenEndpointAuthMethod = answered && METHODS.includes(answered) ? answered : secret === null ? 'none' : method;
  if (tokenEndpointAuthMethod !== 'none' && secret === null) {
    throw failed(`the authorization server ${authorizationServer} registered a confidential client (${tokenEndpointAuthMethod}) without answering its client_secret`);
  }
  return {
    clientId: info.client_id,
    clientSecret: tokenEndpointAuthMethod === 'none' ? null : secret,
    authUrl: metadata.authorization_endpoint,
    tokenUrl: metadata.token_endpoint,
    usesPkce,
    tokenEndpointAuthMethod,
    scopes,
  };
}

/** The first method of {@link METHODS} the server supports (RFC 8414's default: `client_secret_basic`). */
function chooseMethod(metadata: AuthorizationServerMetadata): TokenEndpointAuthMethod {
  const supported = metadata.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
  return METHODS.find((m) => supported.includes(m)) ?? 'client_secret_basic';
}

/**
 * `fetch` through the outbound policy, each request bounded. A refusal is thrown as a HangarError (not
 * the TypeError fetch would make of it), so the SDK's discovery does not mistake it for a missing
 * document and try the next address.
 */
function guardedFetch(egress: EgressGuard): typeof fetch {
  return async (url, init) => {
    const href = typeof url === 'string' ? url : url instanceof URL ? url.href : url.url;
    refuseUnlessAllowed(egress, href, 'the discovery would call');
    try {
      const res = await egress.fetch(href, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      // The guard's fetch answers undici's own Response class; the SDK tells an error answer from an
      // error object with `instanceof Response` (the global class), so it gets one of those.
      return new Response(res.body, { status: res.status, statusText: res.statusText, headers: res.headers });
    } catch (error) {
      const refused = refusalIn(error);
      if (refused) throw failed(`the discovery would call ${redactServerUrl(href)}, which this installation may not call: ${refused.reason}`);
      throw error;
    }
  };
}

function refusalIn(error: unknown): EgressRefused | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) if (e instanceof EgressRefused) return e;
  return undefined;
}

function refuseUnlessAllowed(egress: EgressGuard, url: string, what: string): void {
  const problem = egress.urlProblem(url);
  // Shown without credentials a URL's query may carry (the tool server's own URL is one of these).
  if (problem) throw failed(`${what} ${redactServerUrl(url)}, which this installation may not call: ${problem}`);
}

function unsupported(why: string): HangarError {
  return new HangarError('mcp_server_oauth_unsupported', `${why}; register an OAuth provider for it (POST /v2/auth/providers) and use oauth_mode "legacy_shared_provider" with its oauth_provider_id`);
}

function failed(why: string): HangarError {
  return new HangarError('oauth_registration_failed', why);
}
