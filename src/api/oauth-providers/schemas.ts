// Wire shapes of OAuth providers (SPEC "OAuth provider"); `client_secret` is accepted, never returned.
import { z } from '@hono/zod-openapi';
import { type Caller, canInvoke } from '../../core/caller.js';
import { redactServerUrl } from '../../core/mcp-servers/url.js';
import { CODE_CHALLENGE_METHODS, type OAuthProvider, PROVIDER_TYPES, TOKEN_ENDPOINT_AUTH_METHODS } from '../../core/oauth/providers.js';

const ProviderType = z.enum(PROVIDER_TYPES).openapi('OAuthProviderType', {
  description:
    'One of three predefined provider kinds, written as neutral words: `vcshost` (a code host), `office_suite` ' +
    '(a productivity suite), `messaging` (a chat service). Informational: the flow is the same for every kind.',
});
const AuthMethod = z.enum(TOKEN_ENDPOINT_AUTH_METHODS).openapi('TokenEndpointAuthMethod', {
  description:
    'How Hangar authenticates at `token_url`: `client_secret_post` (client_id and client_secret in the form body), ' +
    '`client_secret_basic` (HTTP Basic), `none` (public client: client_id only; pair it with PKCE).',
});
const providerIdField = z
  .string()
  .trim()
  .min(1, 'must not be blank')
  .max(200)
  .regex(/^[^/?#\s]+$/, 'must not contain "/", "?", "#" or whitespace')
  .openapi({ description: 'Your identifier for the provider, unique within the workspace.', example: 'github-tools' });
const url = (description: string) => z.string().min(1).max(2000).openapi({ description, example: 'https://auth.example.com/oauth/authorize' });

const fields = {
  provider_id: providerIdField,
  name: z.string().trim().min(1, 'must not be blank').max(200).openapi({ example: 'Tools login' }),
  client_id: z.string().min(1, 'must not be empty').max(1000),
  auth_url: url('Authorization endpoint (http or https).'),
  token_url: url('Token endpoint (http or https).'),
  client_secret: z.string().max(4000).nullable().openapi({ description: 'Stored encrypted; never returned.' }),
  uses_pkce: z.boolean().openapi({ description: 'Send a PKCE code challenge with every authorization.' }),
  code_challenge_method: z.enum(CODE_CHALLENGE_METHODS).nullable().openapi({ description: 'PKCE method; `S256` by default.' }),
  provider_type: ProviderType.nullable(),
  token_endpoint_auth_method: AuthMethod,
  scopes: z
    .array(z.string().min(1).regex(/^\S+$/, 'must not contain whitespace'))
    .max(100)
    .openapi({ description: 'Hangar extension: scopes requested when an authorization starts without explicit scopes (for example from a tool call). Default none.' }),
};

export const CreateOAuthProviderRequest = z
  .object({
    provider_id: fields.provider_id,
    name: fields.name,
    client_id: fields.client_id,
    auth_url: fields.auth_url,
    token_url: fields.token_url,
    client_secret: fields.client_secret.optional(),
    uses_pkce: fields.uses_pkce.optional().openapi({ description: 'Send a PKCE code challenge with every authorization. Default false.' }),
    code_challenge_method: fields.code_challenge_method.optional().openapi({ description: 'PKCE method. Default `S256`.' }),
    provider_type: fields.provider_type.optional(),
    token_endpoint_auth_method: fields.token_endpoint_auth_method.optional().openapi({ description: 'Default `client_secret_post`.' }),
    scopes: fields.scopes.optional(),
  })
  .openapi('CreateOAuthProviderRequest');

export const UpdateOAuthProviderRequest = z
  .object({
    provider_id: fields.provider_id.optional(),
    name: fields.name.optional(),
    client_id: fields.client_id.optional(),
    auth_url: fields.auth_url.optional(),
    token_url: fields.token_url.optional(),
    client_secret: fields.client_secret.optional().openapi({ description: 'A new secret; `null` removes it. Never returned.' }),
    uses_pkce: fields.uses_pkce.optional(),
    code_challenge_method: fields.code_challenge_method.optional(),
    provider_type: fields.provider_type.optional(),
    token_endpoint_auth_method: fields.token_endpoint_auth_method.optional(),
    scopes: fields.scopes.optional(),
  })
  .openapi('UpdateOAuthProviderRequest');

export const OAuthProviderSchema = z
  .object({
    id: z.uuid(),
    organization_id: z.uuid().openapi({ description: 'The workspace that owns the provider.' }),
    provider_id: z.string(),
    name: z.string(),
    client_id: z.string(),
    auth_url: z.string(),
    token_url: z.string(),
    uses_pkce: z.boolean(),
    code_challenge_method: z.string().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    provider_type: z.string().nullable(),
    mcp_server_url: z.string().nullable().openapi({ description: 'URL of a tool server registered with this provider, if any; for callers without invoke permission (role viewer) its credentials (query values such as `?api_key=`; see docs/security.md) are shown as `[redacted]`.' }),
    token_endpoint_auth_method: z.string(),
    is_dynamic_client: z.boolean().openapi({ description: 'True for a provider Hangar registered for one user of a `per_user_dynamic_client` tool server (`POST /mcp-servers/{id}/oauth-provider`); false for providers made with `POST /v2/auth/providers`.' }),
    scopes: z.array(z.string()).openapi({ description: 'Hangar extension: default scopes of an authorization.' }),
  })
  .openapi('OAuthProvider');

export const OAuthProviderPage = z
  .object({
    resources: z.array(OAuthProviderSchema),
    offset: z.number().int().openapi({ description: 'Offset of the next page; a page shorter than `limit` is the last.' }),
  })
  .openapi('OAuthProviderPage');

/** The wire form of a provider: every SPEC response field, and no secret (a tool server URL's query values only for invokers, as on the tool server). */
export function presentProvider(p: OAuthProvider, caller: Caller): z.infer<typeof OAuthProviderSchema> {
  return {
    id: p.id,
    organization_id: p.workspaceId,
    provider_id: p.providerId,
    name: p.name,
    client_id: p.clientId,
    auth_url: p.authUrl,
    token_url: p.tokenUrl,
    uses_pkce: p.usesPkce,
    code_challenge_method: p.codeChallengeMethod,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
    provider_type: p.providerType,
    mcp_server_url: p.mcpServerUrl !== null && !canInvoke(caller.role) ? redactServerUrl(p.mcpServerUrl) : p.mcpServerUrl,
    token_endpoint_auth_method: p.tokenEndpointAuthMethod,
    is_dynamic_client: p.isDynamicClient,
    scopes: p.scopes,
  };
}
