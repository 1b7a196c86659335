// The OAuth authorization flow over HTTP: start a session and poll it (`/v1/deepagents/auth-sessions`,
// as the hosted API), list and revoke the caller's tokens, and the browser callback (a public path whose
// authentication is the one-time `state`).
import { createRoute, z } from '@hono/zod-openapi';
import type { AppDeps } from '../../http/deps.js';
import { apiKeySecurity, errorResponses, jsonBody, jsonResponse } from '../../http/openapi.js';
import { newRouter } from '../../http/router.js';
import { CALLBACK_PATH, tokenId } from '../../core/oauth/service.js';
import { callbackPage } from './page.js';

const tags = ['Auth sessions'];
const Status = z.enum(['PENDING', 'COMPLETED', 'CONNECTION_REQUIRED', 'TOKEN_EXPIRED']).openapi('AuthSessionStatus', {
  description: '`PENDING`: waiting for the browser. `COMPLETED`: the principal has a token. `CONNECTION_REQUIRED`: the flow failed or timed out; start again.',
});

const StartRequest = z
  .object({
    provider_id: z.string().min(1).openapi({ description: 'The provider’s `provider_id` (or its `id`).', example: 'github-tools' }),
    scopes: z.array(z.string().min(1).regex(/^[^\s]+$/, 'must not contain whitespace')).max(100).optional().openapi({ description: 'Scopes to request (none by default).' }),
    strategy: z.enum(['REUSE', 'CREATE']).optional().openapi({ description: '`REUSE` (the default) answers 200 COMPLETED when the caller already has a usable token; `CREATE` always starts a new authorization.' }),
    agent_id: z.string().min(1).optional().openapi({
      description:
        'The agent the token is for (an agent of the workspace, else a 404 `agent_not_found`; returned in `metadata.agent_id`). The token is the caller’s, scoped to that agent: the agent’s runs for this caller use it before the caller’s default token; other agents keep using the default. With `is_default: true` the session makes the default token instead. Deleting the agent deletes its tokens.',
    }),
    token_id: z.string().min(1).optional().openapi({
      description:
        'The caller’s token to re-authorize: the `token` a COMPLETED answer carries (`<provider_id>:<principal>` for the default token, `<provider_id>:<principal>:<agent_id>` for an agent’s). Its scope is kept; with `agent_id` it must be that agent’s token (else a 422). With `REUSE` a usable token answers COMPLETED; otherwise the new authorization replaces it. An id that is not one of the caller’s for this provider is a 404 `oauth_token_not_found`.',
    }),
    is_default: z.boolean().optional().openapi({
      description:
        'Whether the token is the caller’s default for the provider (used by every agent without a token of its own). Omitted: the default unless `agent_id` is sent. `true` with `agent_id`: the default token. `false` needs `agent_id` (a token only that agent uses), else a 422.',
    }),
  })
  .openapi('CreateAuthSessionRequest');

const StartResponse = z
  .object({
    id: z.uuid().optional().openapi({ description: 'Session id, for pending sessions.' }),
    provider_id: z.string(),
    status: Status,
    verification_url: z.string().optional().openapi({ description: 'The provider’s authorization URL (with `state` and, for PKCE providers, an S256 challenge): open it in a browser.' }),
    token: z.string().optional().openapi({
      description:
        'When `COMPLETED`: an identifier of the caller’s stored token (`<provider_id>:<principal>`, or `<provider_id>:<principal>:<agent_id>` for a token scoped to an agent), never the token itself — Hangar attaches the token to tool calls server-side.',
    }),
    metadata: z.record(z.string(), z.unknown()).openapi({
      description: '`principal` (whose token this is), `provider_id`, `is_default` (false: the token is scoped to an agent), and `agent_id` when the request named one (or its `token_id` did).',
    }),
  })
  .openapi('CreateAuthSessionResponse');

const SessionResponse = z
  .object({
    id: z.uuid(),
    provider_id: z.string(),
    status: Status,
    error: z.string().nullable().openapi({ description: 'Why the session did not complete.' }),
    agent_id: z.uuid().nullable().openapi({ description: 'The agent the session’s token is scoped to; null for the caller’s default token.' }),
  })
  .openapi('GetAuthSessionResponse');

const start = createRoute({
  method: 'post',
  path: '/v1/deepagents/auth-sessions',
  tags,
  summary: 'Start an OAuth authorization for the caller',
  description: `Tokens are kept per workspace, principal (of the API key) and provider, and optionally per agent (\`agent_id\`). The provider redirects the browser to \`${CALLBACK_PATH}\` on this server (HANGAR_PUBLIC_URL), which exchanges the code.`,
  security: apiKeySecurity,
  request: { body: jsonBody(StartRequest) },
  responses: {
    200: jsonResponse(StartResponse, 'The caller already has a usable token; nothing started.'),
    201: jsonResponse(StartResponse, 'Session started: open `verification_url`.'),
    ...errorResponses('deepagents', [400, 404, 413, 415, 422]),
  },
});

const get = createRoute({
  method: 'get',
  path: '/v1/deepagents/auth-sessions/{session_id}',
  tags,
  summary: 'Poll an authorization session',
  description: 'Waits up to `wait_seconds` (default 1) for the session to leave PENDING (long poll).',
  security: apiKeySecurity,
  request: {
    params: z.object({ session_id: z.uuid({ message: 'must be a UUID' }).openapi({ param: { name: 'session_id', in: 'path' } }) }),
    query: z.object({
      wait_seconds: z.coerce
        .number()
        .int()
        .min(0)
        .max(25)
        .default(1)
        .openapi({ description: 'Long-poll window in whole seconds, 1 by default, at most 25 (more is a 422); 0 answers at once.' }),
    }),
  },
  responses: { 200: jsonResponse(SessionResponse, 'The session.'), ...errorResponses('deepagents', [404, 422]) },
});

const providerParam = z.object({ provider_id: z.string().min(1).openapi({ param: { name: 'provider_id', in: 'path' } }) });

const TokenSchema = z
  .object({
    token_id: z.string().openapi({ description: 'The id a COMPLETED auth session answers as `token` (never the token itself).' }),
    provider_id: z.string(),
    agent_id: z.uuid().nullable().openapi({ description: 'The agent the token is scoped to; null for the caller’s default token.' }),
    is_default: z.boolean().openapi({ description: 'Whether this is the caller’s default token (used by every agent without one of its own).' }),
    expires_at: z.iso.datetime().nullable().openapi({ description: 'When the access token expires (it is refreshed before then when the provider gave a refresh token).' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('OAuthToken');

const listTokens = createRoute({
  method: 'get',
  path: '/v2/auth/providers/{provider_id}/tokens',
  tags: ['OAuth providers'],
  summary: 'List the caller’s tokens for a provider',
  description: 'The tokens Hangar holds for the calling principal and this provider: the default one first, then those scoped to an agent. Never the tokens themselves.',
  security: apiKeySecurity,
  request: { params: providerParam },
  responses: { 200: jsonResponse(z.object({ resources: z.array(TokenSchema) }).openapi('OAuthTokenList'), 'The caller’s tokens.'), ...errorResponses('controlplane', [404]) },
});

const revoke = createRoute({
  method: 'delete',
  path: '/v2/auth/providers/{provider_id}/token',
  tags: ['OAuth providers'],
  summary: 'Revoke the caller’s token for a provider',
  description:
    'Deletes the calling principal’s default token for the provider, or with `agent_id` the one scoped to that agent (whose runs then use the default token); the next use without a token asks for authorization again. Idempotent.',
  security: apiKeySecurity,
  request: {
    params: providerParam,
    query: z.object({ agent_id: z.uuid({ message: 'must be an agent id (a UUID)' }).optional().openapi({ description: 'Revoke the caller’s token scoped to this agent instead of the default one.' }) }),
  },
  responses: { 204: { description: 'Revoked.' }, ...errorResponses('controlplane', [404, 422]) },
});

const callback = createRoute({
  method: 'get',
  path: CALLBACK_PATH,
  tags,
  summary: 'OAuth redirect target (opened by the browser)',
  description: 'No API key: the one-time `state` identifies the session. Exchanges the code at the provider’s token endpoint and answers an HTML page.',
  request: {
    query: z.object({
      state: z.string().optional(),
      code: z.string().optional(),
      error: z.string().optional(),
      error_description: z.string().optional(),
    }),
  },
  responses: {
    200: { description: 'Connected.', content: { 'text/html': { schema: z.string() } } },
    400: { description: 'Unknown, used or expired state, or the provider refused.', content: { 'text/html': { schema: z.string() } } },
  },
});

/** Routes of the authorization flow. */
export function authSessionRoutes({ services }: AppDeps) {
  return newRouter()
    .openapi(start, async (c) => {
      const caller = c.get('caller');
      const body = c.req.valid('json');
      const result = await services.oauth.start(caller, body);
      const agentId = result.agentId ?? body.agent_id;
      const metadata = { principal: caller.principal, provider_id: result.providerId, is_default: result.agentId === null, ...(agentId !== undefined ? { agent_id: agentId } : {}) };
      if (result.status === 'COMPLETED') {
        return c.json({ provider_id: result.providerId, status: result.status, token: tokenId(result.providerId, caller.principal, result.agentId), metadata }, 200);
      }
      return c.json({ id: result.id, provider_id: result.providerId, status: result.status, verification_url: result.verificationUrl, metadata }, 201);
    })
    .openapi(get, async (c) => {
      const s = await services.oauth.session(c.get('caller'), c.req.valid('param').session_id, c.req.valid('query').wait_seconds);
      return c.json({ id: s.id, provider_id: s.providerId, status: s.status, error: s.error, agent_id: s.agentId }, 200);
    })
    .openapi(listTokens, async (c) => {
      const tokens = await services.oauth.listTokens(c.get('caller'), c.req.valid('param').provider_id);
      const resources = tokens.map((t) => ({
        token_id: t.tokenId,
        provider_id: t.providerId,
        agent_id: t.agentId,
        is_default: t.agentId === null,
        expires_at: t.expiresAt?.toISOString() ?? null,
        created_at: t.createdAt.toISOString(),
        updated_at: t.updatedAt.toISOString(),
      }));
      return c.json({ resources }, 200);
    })
    .openapi(revoke, async (c) => {
      await services.oauth.revoke(c.get('caller'), c.req.valid('param').provider_id, c.req.valid('query').agent_id);
      return c.body(null, 204);
    })
    .openapi(callback, async (c) => {
      const result = await services.oauth.callback(c.req.valid('query'));
      return c.html(callbackPage(result), result.ok ? 200 : 400);
    });
}
