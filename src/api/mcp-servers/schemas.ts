// Wire shapes of tool servers (SPEC "Tool server"; fields beyond it follow the hosted API reference).
import { z } from '@hono/zod-openapi';
import type { Caller } from '../../core/caller.js';
import { canInvoke } from '../../core/caller.js';
import type { McpServer } from '../../core/mcp-servers/service.js';
import { redactServerUrl } from '../../core/mcp-servers/url.js';

export const McpHeaderSchema = z
  .object({
    key: z.string().min(1).openapi({
      description:
        'Header name, for example `Authorization`; each name once, in any case. Headers the HTTP client or the MCP transport sets for each request (`Host`, `Connection`, `Content-Length`, `Transfer-Encoding`, `Keep-Alive`, `Upgrade`, `Expect`, `TE`, `Trailer`, `Proxy-Connection`, `Mcp-Session-Id`, `Mcp-Protocol-Version`, `Last-Event-ID`) cannot be stored (422).',
      example: 'Authorization',
    }),
    value: z.string().openapi({ description: 'Header value; may be a secret such as a bearer token. ISO-8859-1 characters only, without CR, LF or NUL.', example: 'Bearer sk-...' }),
  })
  .openapi('McpServerHeader');

const AuthType = z.enum(['headers', 'oauth']).openapi('AuthType', {
  description: '`headers`: the stored headers are sent. `oauth`: the run principal’s OAuth access token is sent.',
});

/** How an OAuth-backed server's provider is found. */
const OAuthMode = z.enum(['legacy_shared_provider', 'per_user_dynamic_client']).openapi('OAuthMode', {
  description:
    '`legacy_shared_provider` (the default): every user authorizes with the OAuth provider named by `oauth_provider_id`. ' +
    '`per_user_dynamic_client`: no `oauth_provider_id`; each user calls `POST /mcp-servers/{id}/oauth-provider`, which discovers the server’s authorization server (RFC 9728, RFC 8414) and registers an OAuth client for that user (RFC 7591). ' +
    'On create the default is `legacy_shared_provider`, and `per_user_dynamic_client` implies `auth_type: "oauth"`. On update, switching to `per_user_dynamic_client` drops `oauth_provider_id`, and changing the mode, `auth_type` or `url` deletes the clients registered per user (and their tokens). ' +
    'A tool server without OAuth has no `oauth_mode` in its answers.',
});

export const CreateMcpServerRequest = z
  .object({
    name: z.string().trim().min(1, 'must not be blank').max(200).openapi({ example: 'Internal tools' }),
    url: z.string().min(1).openapi({ description: 'http(s) URL of the server; trailing slashes are stripped.', example: 'https://tools.example.com/mcp' }),
    headers: z.array(McpHeaderSchema).max(50).optional().openapi({ description: 'Credential headers attached to every call; stored encrypted.' }),
    auth_type: AuthType.optional(),
    oauth_provider_id: z.uuid().nullable().optional().openapi({ description: 'The shared OAuth provider (its `id`) of an `auth_type: "oauth"` server; required with `legacy_shared_provider`, absent with `per_user_dynamic_client`.' }),
    oauth_mode: OAuthMode.optional(),
    vendor_id: z.string().max(200).optional(),
    external_system_id: z.string().max(200).optional(),
  })
  .openapi('CreateMcpServerRequest');

export const UpdateMcpServerRequest = z
  .object({
    name: z.string().trim().min(1, 'must not be blank').max(200).optional(),
    url: z.string().min(1).optional(),
    headers: z.array(McpHeaderSchema).max(50).optional().openapi({ description: 'Replaces the whole stored array.' }),
    auth_type: AuthType.optional(),
    oauth_provider_id: z.uuid().nullable().optional(),
    oauth_mode: OAuthMode.optional(),
  })
  .openapi('UpdateMcpServerRequest');

export const McpServerSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid().openapi({ description: 'The workspace that owns the server.' }),
    name: z.string(),
    url: z.string().openapi({
      description: 'As registered for callers with invoke permission (roles admin and member); for others, its credentials (query values such as `?api_key=`; a harmless setting such as `mode=stream` is kept; see docs/security.md) are shown as `[redacted]`.',
    }),
    headers: z.array(McpHeaderSchema).optional().openapi({ description: 'Present only for callers with invoke permission (roles admin and member).' }),
    auth_type: AuthType,
    oauth_provider_id: z.uuid().nullable(),
    // Absent, not null, for a server without OAuth: the reference types it as its enum, not nullable, so a
    // client generated from that schema refuses a null. (No description here: it would replace the shared
    // OAuthMode component's, which the request bodies use too.)
    oauth_mode: OAuthMode.optional(),
    mcp_vendor_id: z.string().nullable(),
    vendor_id: z.string().nullable(),
    external_system_id: z.string().nullable(),
    can_invoke: z.boolean().openapi({ description: 'Whether the caller may invoke this server.' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('McpServer');

export type McpServerBody = z.infer<typeof McpServerSchema>;

/** The wire form of a tool server for this caller: headers only with invoke permission. */
export function presentMcpServer(server: McpServer, caller: Caller): McpServerBody {
  const invoke = canInvoke(caller.role);
  return {
    id: server.id,
    tenant_id: server.workspaceId,
    name: server.name,
    // A credential in the URL's query is a credential like the headers: only invokers see it.
    url: invoke ? server.url : redactServerUrl(server.url),
    ...(invoke ? { headers: server.headers } : {}),
    auth_type: server.authType,
    oauth_provider_id: server.oauthProviderId,
    ...(server.authType === 'oauth' ? { oauth_mode: server.oauthMode } : {}),
    mcp_vendor_id: null,
    vendor_id: server.vendorId,
    external_system_id: server.externalSystemId,
    can_invoke: invoke,
    created_at: server.createdAt.toISOString(),
    updated_at: server.updatedAt.toISOString(),
  };
}
