// OAuth provider records of a workspace: where to send the user, where to exchange codes, and the
// client credentials (the secret sealed at rest and never returned).
import { sql, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../../db/index.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { OAuthProvidersTable, TokenEndpointAuthMethod } from '../../db/tables/oauth.js';
import { type Caller, requireWrite } from '../caller.js';
import { HangarError, invalidField } from '../errors.js';
import { isHttpUrl, redactServerUrl } from '../mcp-servers/url.js';
import type { EgressGuard } from '../../net/egress.js';
import { checkOutboundUrl, laptopEgress } from '../egress.js';
import type { Cipher } from '../secrets/cipher.js';
import type { RegisteredClient } from './dynamic-client.js';

/**
 * The three predefined provider kinds. The hosted product names vendors here; Hangar uses neutral
 * words for the same three families: a code host, an office/productivity suite, a messaging service.
 */
export const PROVIDER_TYPES = ['vcshost', 'office_suite', 'messaging'] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

/** PKCE challenge methods of RFC 7636. */
export const CODE_CHALLENGE_METHODS = ['S256', 'plain'] as const;
export type CodeChallengeMethod = (typeof CODE_CHALLENGE_METHODS)[number];

export const TOKEN_ENDPOINT_AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;

/** An OAuth provider as services see it; `clientSecret` is decrypted and must never reach a response. */
export interface OAuthProvider {
  id: string;
  workspaceId: string;
  providerId: string;
  name: string;
  clientId: string;
  clientSecret: string | null;
  authUrl: string;
  tokenUrl: string;
  usesPkce: boolean;
  codeChallengeMethod: CodeChallengeMethod | null;
  providerType: ProviderType | null;
  /** The URL of the first tool server that uses this provider, if any. */
  mcpServerUrl: string | null;
  /** Scopes requested when an authorization is started without explicit scopes (by a tool call). */
  scopes: string[];
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
  /** Registered by Hangar (RFC 7591) for one principal of a `per_user_dynamic_client` tool server. */
  isDynamicClient: boolean;
  /** With `isDynamicClient`: the principal it was registered for, the only one who may authorize with it. */
  dynamicPrincipal: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Fields of a create request (wire names). */
export interface CreateOAuthProviderInput {
  provider_id: string;
  name: string;
  client_id: string;
  auth_url: string;
  token_url: string;
  client_secret?: string | null | undefined;
  uses_pkce?: boolean | undefined;
  code_challenge_method?: CodeChallengeMethod | null | undefined;
  provider_type?: ProviderType | null | undefined;
  token_endpoint_auth_method?: TokenEndpointAuthMethod | undefined;
  scopes?: string[] | undefined;
}

/** Fields of an update request: every field optional; `client_secret: null` removes the secret. */
export type UpdateOAuthProviderInput = Partial<CreateOAuthProviderInput>;

/** A client registered at an authorization server for one principal (what {@link OAuthProviderService.saveDynamic} stores). */
export interface DynamicClient extends RegisteredClient {
  providerId: string;
  name: string;
  mcpServerUrl: string;
}

/** One page of providers. */
export interface ProviderPage {
  providers: OAuthProvider[];
  /** Offset of the next page. */
  offset: number;
}

/** CRUD of OAuth providers, scoped by the caller's workspace. */
export class OAuthProviderService {
  constructor(
    private readonly db: Db,
    private readonly cipher: Cipher,
    private readonly egress: EgressGuard = laptopEgress(),
  ) {}

  async create(caller: Caller, input: CreateOAuthProviderInput): Promise<OAuthProvider> {
    requireWrite(caller);
    checkUrls(input, this.egress);
    try {
      const row = await this.db
        .insertInto('oauth_providers')
        .values({
          workspace_id: caller.workspaceId,
          provider_id: input.provider_id,
          name: input.name,
          client_id: input.client_id,
          client_secret_encrypted: this.seal(input.client_secret),
          auth_url: input.auth_url,
          token_url: input.token_url,
          uses_pkce: input.uses_pkce ?? false,
          code_challenge_method: input.code_challenge_method === undefined ? 'S256' : input.code_challenge_method,
          provider_type: input.provider_type ?? null,
          token_endpoint_auth_method: input.token_endpoint_auth_method ?? 'client_secret_post',
          scopes: input.scopes ?? [],
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return await this.byId(caller.workspaceId, row.id);
    } catch (error) {
      if (isUniqueViolation(error)) throw taken(input.provider_id);
      throw error;
    }
  }

  async list(caller: Caller, page: { limit: number; offset: number }): Promise<ProviderPage> {
    const rows = await this.select(caller.workspaceId).orderBy('p.created_at').orderBy('p.id').limit(page.limit).offset(page.offset).execute();
    return { providers: rows.map((r) => this.toDomain(r)), offset: page.offset + rows.length };
  }

  /** The provider named by its `provider_id`. */
  async get(caller: Caller, providerId: string): Promise<OAuthProvider> {
    return this.find(caller.workspaceId, providerId);
  }

  /** The provider named by `provider_id`, or by its `id` (UUID); 404 when neither matches. */
  async find(workspaceId: string, ref: string): Promise<OAuthProvider> {
    const row = await this.select(workspaceId)
      .where((eb) => (UUID.test(ref) ? eb.or([eb('p.provider_id', '=', ref), eb('p.id', '=', ref)]) : eb('p.provider_id', '=', ref)))
      .orderBy(sql`p.provider_id = ${ref}`, 'desc')
      .executeTakeFirst();
    if (!row) throw notFound(ref);
    return this.toDomain(row);
  }

  /** The provider with this `id` (UUID). */
  async byId(workspaceId: string, id: string): Promise<OAuthProvider> {
    const row = await this.select(workspaceId).where('p.id', '=', id).executeTakeFirst();
    if (!row) throw notFound(id);
    return this.toDomain(row);
  }

  /** The provider registered for `principal` at the `per_user_dynamic_client` tool server `serverId`, if any. */
  async dynamicFor(workspaceId: string, serverId: string, principal: string): Promise<OAuthProvider | undefined> {
    const row = await this.select(workspaceId).where('p.dynamic_mcp_server_id', '=', serverId).where('p.dynamic_principal', '=', principal).executeTakeFirst();
    return row ? this.toDomain(row) : undefined;
  }

  /** Every provider registered per principal for the tool server `serverId`. */
  async dynamicOf(workspaceId: string, serverId: string): Promise<OAuthProvider[]> {
    const rows = await this.select(workspaceId).where('p.dynamic_mcp_server_id', '=', serverId).execute();
    return rows.map((r) => this.toDomain(r));
  }

  /**
   * Store a client registered dynamically for `principal` at tool server `serverId`. When a concurrent
   * registration of the same principal was stored first, that one is kept and returned.
   */
  async saveDynamic(workspaceId: string, serverId: string, principal: string, client: DynamicClient): Promise<OAuthProvider> {
    try {
      await this.db
        .insertInto('oauth_providers')
        .values({
          workspace_id: workspaceId,
          provider_id: client.providerId,
          name: client.name,
          client_id: client.clientId,
          client_secret_encrypted: this.seal(client.clientSecret),
          auth_url: client.authUrl,
          token_url: client.tokenUrl,
          uses_pkce: client.usesPkce,
          code_challenge_method: client.usesPkce ? 'S256' : null,
          token_endpoint_auth_method: client.tokenEndpointAuthMethod,
          scopes: client.scopes,
          mcp_server_url: client.mcpServerUrl,
          is_dynamic_client: true,
          dynamic_mcp_server_id: serverId,
          dynamic_principal: principal,
        })
        .execute();
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
    const stored = await this.dynamicFor(workspaceId, serverId, principal);
    // A user-made provider took the generated provider_id: nothing was stored for the principal.
    if (!stored) throw taken(client.providerId);
    return stored;
  }

  /** Whether a provider with this id (UUID) exists in the workspace (tool servers check this). */
  async exists(workspaceId: string, id: string): Promise<boolean> {
    const row = await this.db.selectFrom('oauth_providers').select('id').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
    return row !== undefined;
  }

  async update(caller: Caller, providerId: string, input: UpdateOAuthProviderInput): Promise<OAuthProvider> {
    requireWrite(caller);
    checkUrls(input, this.egress);
    const set: Updateable<OAuthProvidersTable> = { updated_at: new Date() };
    if (input.provider_id !== undefined) set.provider_id = input.provider_id;
    if (input.name !== undefined) set.name = input.name;
    if (input.client_id !== undefined) set.client_id = input.client_id;
    if (input.client_secret !== undefined) set.client_secret_encrypted = this.seal(input.client_secret);
    if (input.auth_url !== undefined) set.auth_url = input.auth_url;
    if (input.token_url !== undefined) set.token_url = input.token_url;
    if (input.uses_pkce !== undefined) set.uses_pkce = input.uses_pkce;
    if (input.code_challenge_method !== undefined) set.code_challenge_method = input.code_challenge_method;
    if (input.provider_type !== undefined) set.provider_type = input.provider_type;
    if (input.token_endpoint_auth_method !== undefined) set.token_endpoint_auth_method = input.token_endpoint_auth_method;
    if (input.scopes !== undefined) set.scopes = input.scopes;
    try {
      const row = await this.db
        .updateTable('oauth_providers')
        .set(set)
        .where('workspace_id', '=', caller.workspaceId)
        .where('provider_id', '=', providerId)
        .returning('id')
        .executeTakeFirst();
      if (!row) throw notFound(providerId);
      return await this.byId(caller.workspaceId, row.id);
    } catch (error) {
      if (isUniqueViolation(error) && input.provider_id !== undefined) throw taken(input.provider_id);
      throw error;
    }
  }

  /**
   * Delete the provider, its pending sessions and every principal's tokens for it. Refused (409) while
   * an OAuth-backed tool server uses it: that server would be left naming a provider that no longer
   * exists. Tool servers that send their stored headers only lose their link to it.
   */
  async delete(caller: Caller, providerId: string): Promise<void> {
    requireWrite(caller);
    await this.db.transaction().execute(async (trx) => {
      const provider = await trx
        .selectFrom('oauth_providers')
        .select('id')
        .where('workspace_id', '=', caller.workspaceId)
        .where('provider_id', '=', providerId)
        .forUpdate()
        .executeTakeFirst();
      if (!provider) throw notFound(providerId);
      const user = await trx
        .selectFrom('mcp_servers')
        .select(['id', 'url'])
        .where('workspace_id', '=', caller.workspaceId)
        .where('oauth_provider_id', '=', provider.id)
        .where('auth_type', '=', 'oauth')
        .orderBy('created_at')
        .limit(1)
        .executeTakeFirst();
      if (user) {
        throw new HangarError(
          'oauth_provider_in_use',
          `the tool server ${user.id} (${redactServerUrl(user.url)}) authenticates with OAuth provider "${providerId}"; delete it or switch it to auth_type "headers" first`,
        );
      }
      await trx.updateTable('mcp_servers').set({ oauth_provider_id: null }).where('workspace_id', '=', caller.workspaceId).where('oauth_provider_id', '=', provider.id).execute();
      await trx.deleteFrom('oauth_providers').where('id', '=', provider.id).execute();
    });
  }

  private select(workspaceId: string) {
    return this.db
      .selectFrom('oauth_providers as p')
      .selectAll('p')
      .select((eb) =>
        eb
          .selectFrom('mcp_servers as m')
          .select('m.url')
          .whereRef('m.oauth_provider_id', '=', 'p.id')
          .where('m.workspace_id', '=', workspaceId)
          .orderBy('m.created_at')
          .limit(1)
          .as('linked_mcp_server_url'),
      )
      .where('p.workspace_id', '=', workspaceId);
  }

  private seal(secret: string | null | undefined): string | null {
    return secret === undefined || secret === null ? null : this.cipher.encrypt(secret);
  }

  private toDomain(row: Selectable<OAuthProvidersTable> & { linked_mcp_server_url: string | null }): OAuthProvider {
    return {
      id: row.id,
      workspaceId: row.workspace_id,
      providerId: row.provider_id,
      name: row.name,
      clientId: row.client_id,
      clientSecret: row.client_secret_encrypted === null ? null : this.cipher.decrypt(row.client_secret_encrypted),
      authUrl: row.auth_url,
      tokenUrl: row.token_url,
      usesPkce: row.uses_pkce,
      codeChallengeMethod: row.code_challenge_method as CodeChallengeMethod | null,
      providerType: row.provider_type as ProviderType | null,
      mcpServerUrl: row.linked_mcp_server_url ?? row.mcp_server_url,
      tokenEndpointAuthMethod: row.token_endpoint_auth_method,
      scopes: row.scopes,
      isDynamicClient: row.is_dynamic_client,
      dynamicPrincipal: row.dynamic_principal,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function checkUrls(input: { auth_url?: string | undefined; token_url?: string | undefined }, egress: EgressGuard): void {
  for (const field of ['auth_url', 'token_url'] as const) {
    const value = input[field];
    if (value !== undefined && !isHttpUrl(value)) throw invalidField([field], 'must be an absolute http:// or https:// URL', 'url_error');
    if (value !== undefined) checkOutboundUrl(egress, [field], value);
  }
}

function notFound(ref: string): HangarError {
  return new HangarError('oauth_provider_not_found', `no OAuth provider "${ref}" in this workspace`);
}

function taken(providerId: string): HangarError {
  return new HangarError('oauth_provider_id_taken', `an OAuth provider with provider_id "${providerId}" already exists in this workspace`);
}
