// Tool server (MCP server) registrations: one per URL per workspace, credential headers sealed at rest.
import type { Db } from '../../db/index.js';
import type { McpServersTable } from '../../db/tables/foundation.js';
import type { Selectable, Updateable } from 'kysely';
import { type Caller, requireWrite } from '../caller.js';
import type { EgressGuard } from '../../net/egress.js';
import { checkOutboundUrl, laptopEgress } from '../egress.js';
import { isUniqueViolation } from '../../db/errors.js';
import { HangarError, invalidField } from '../errors.js';
import type { Cipher } from '../secrets/cipher.js';

/** What tool servers need to know of OAuth providers: whether one exists in a workspace. */
export interface OAuthProviderLookup {
  exists(workspaceId: string, id: string): Promise<boolean>;
}
import { probeServer, type ProbeResult } from './health.js';
import { listServerTools, type ListedTool } from './tools.js';
import { Redactor } from '../../tracing/redact.js';
import { isHttpUrl, normalizeServerUrl, redactServerUrl, urlScrubber, urlSecrets, viewerText } from './url.js';

/** How an OAuth-backed tool server's provider is found (see {@link McpServer.oauthMode}). */
export type OAuthMode = 'legacy_shared_provider' | 'per_user_dynamic_client';

/** A credential header sent to the tool server on every call. */
export interface McpHeader {
  key: string;
  value: string;
}

/** A registered tool server, headers decrypted. */
export interface McpServer {
  id: string;
  workspaceId: string;
  name: string;
  url: string;
  headers: McpHeader[];
  authType: 'headers' | 'oauth';
  oauthProviderId: string | null;
  /**
   * How an OAuth-backed server's provider is found: the shared one `oauthProviderId` names, or one
   * registered dynamically per principal (`per_user_dynamic_client`, no `oauthProviderId`).
   */
  oauthMode: OAuthMode;
  vendorId: string | null;
  externalSystemId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface CreateMcpServerInput {
  name: string;
  url: string;
  headers?: McpHeader[] | undefined;
  auth_type?: 'headers' | 'oauth' | undefined;
  oauth_provider_id?: string | null | undefined;
  oauth_mode?: OAuthMode | undefined;
  vendor_id?: string | undefined;
  external_system_id?: string | undefined;
}

export interface UpdateMcpServerInput {
  name?: string | undefined;
  url?: string | undefined;
  headers?: McpHeader[] | undefined;
  auth_type?: 'headers' | 'oauth' | undefined;
  oauth_provider_id?: string | null | undefined;
  oauth_mode?: OAuthMode | undefined;
}

/** Create, read, update and delete tool servers of the caller's workspace. */
export class McpServerService {
  constructor(
    private readonly db: Db,
    private readonly cipher: Cipher,
    private readonly oauthProviders?: OAuthProviderLookup,
    private readonly egress: EgressGuard = laptopEgress(),
  ) {}

  /**
   * Told of every tool server this service created, changed or deleted, once written (trace
   * redaction drops the workspace's secrets it keeps). Other processes hear of the change through
   * the database's notification (migration 1800); this process hears of its own at once.
   */
  private readonly changeListeners = new Set<(workspaceId: string) => void>();

  /** Call `listener` with the workspace of each tool server written through this service. */
  onChange(listener: (workspaceId: string) => void): void {
    this.changeListeners.add(listener);
  }

  private changed(workspaceId: string): void {
    for (const listener of this.changeListeners) listener(workspaceId);
  }

  /** List the tools of the server at `url` through this installation's outbound policy. */
  listTools(url: string, headers: Record<string, string>, timeoutMs: number): Promise<ListedTool[]> {
    return listServerTools(url, headers, timeoutMs, this.egress);
  }

  /** Whether the server at `url` answers an MCP `initialize` with `headers`, through the outbound policy. */
  probe(url: string, headers: Record<string, string>, timeoutMs: number): Promise<ProbeResult> {
    return probeServer(url, headers, timeoutMs, this.egress);
  }

  async create(caller: Caller, input: CreateMcpServerInput): Promise<McpServer> {
    requireWrite(caller);
    const url = checkUrl(input.url, this.egress);
    // `per_user_dynamic_client` is OAuth by definition: `auth_type` may be left out.
    const authType = input.auth_type ?? (input.oauth_mode === 'per_user_dynamic_client' ? 'oauth' : 'headers');
    checkAuth(authType, input.oauth_provider_id, input.oauth_mode ?? 'legacy_shared_provider');
    await this.checkProvider(caller.workspaceId, input.oauth_provider_id);
    const row = await this.db
      .insertInto('mcp_servers')
      .values({
        workspace_id: caller.workspaceId,
        name: input.name,
        url,
        headers_encrypted: this.cipher.encryptJson(checkHeaders(input.headers ?? [])),
        auth_type: authType,
        oauth_provider_id: input.oauth_provider_id ?? null,
        oauth_mode: input.oauth_mode ?? 'legacy_shared_provider',
        vendor_id: input.vendor_id ?? null,
        external_system_id: input.external_system_id ?? null,
      })
      .onConflict((oc) => oc.columns(['workspace_id', 'url']).doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!row) throw urlTaken(url);
    this.changed(caller.workspaceId);
    return this.toDomain(row);
  }

  async list(caller: Caller): Promise<McpServer[]> {
    const rows = await this.db
      .selectFrom('mcp_servers')
      .selectAll()
      .where('workspace_id', '=', caller.workspaceId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((r) => this.toDomain(r));
  }

  async get(caller: Caller, id: string): Promise<McpServer> {
    const row = await this.db
      .selectFrom('mcp_servers')
      .selectAll()
      .where('workspace_id', '=', caller.workspaceId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound(id);
    return this.toDomain(row);
  }

  /** The tool server registered at `url` (compared without trailing slashes), if any. */
  async findByUrl(workspaceId: string, url: string): Promise<McpServer | undefined> {
    const row = await this.db
      .selectFrom('mcp_servers')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('url', '=', normalizeServerUrl(url))
      .executeTakeFirst();
    return row ? this.toDomain(row) : undefined;
  }

  /** Update; `headers`, when given, replaces the whole stored array. */
  async update(caller: Caller, id: string, input: UpdateMcpServerInput): Promise<McpServer> {
    requireWrite(caller);
    const url = input.url === undefined ? undefined : checkUrl(input.url, this.egress);
    const authChanges = input.auth_type !== undefined || input.oauth_provider_id !== undefined || input.oauth_mode !== undefined;
    if (authChanges) await this.checkProvider(caller.workspaceId, input.oauth_provider_id);
    const set: Updateable<McpServersTable> = { updated_at: new Date() };
    if (input.name !== undefined) set.name = input.name;
    if (url !== undefined) set.url = url;
    if (input.headers !== undefined) set.headers_encrypted = this.cipher.encryptJson(checkHeaders(input.headers));
    if (input.auth_type !== undefined) set.auth_type = input.auth_type;
    if (input.oauth_provider_id !== undefined) set.oauth_provider_id = input.oauth_provider_id;
    if (input.oauth_mode !== undefined) set.oauth_mode = input.oauth_mode;
    // Switching to per-user clients drops the shared provider unless the request names one (a 422 below).
    if (input.oauth_mode === 'per_user_dynamic_client' && input.oauth_provider_id === undefined) set.oauth_provider_id = null;
    try {
      const updated = await this.db.transaction().execute(async (trx) => {
        if (authChanges) {
          // The pair is checked as it will be stored: a field the request omits keeps its stored value,
          // so `{auth_type: "oauth"}` may rely on a stored provider and `{oauth_provider_id: null}` may
          // not leave an OAuth server without one. The row lock keeps a concurrent update from
          // changing the other half in between.
          const stored = await trx
            .selectFrom('mcp_servers')
            .select(['auth_type', 'oauth_provider_id', 'oauth_mode'])
            .where('workspace_id', '=', caller.workspaceId)
            .where('id', '=', id)
            .forUpdate()
            .executeTakeFirst();
          if (!stored) throw notFound(id);
          const mode = input.oauth_mode ?? stored.oauth_mode;
          const provider = input.oauth_provider_id !== undefined ? input.oauth_provider_id : input.oauth_mode === 'per_user_dynamic_client' ? null : stored.oauth_provider_id;
          checkAuth(input.auth_type ?? stored.auth_type, provider, mode);
        }
        if (url !== undefined || input.oauth_mode !== undefined || input.auth_type !== undefined) {
          // Clients registered per principal belong to the server's old URL or mode: drop them (and their
          // tokens) unless nothing about where they were registered changed.
          const before = await trx.selectFrom('mcp_servers').select(['url', 'oauth_mode', 'auth_type']).where('workspace_id', '=', caller.workspaceId).where('id', '=', id).executeTakeFirst();
          if (before && ((url !== undefined && url !== before.url) || (input.oauth_mode ?? before.oauth_mode) !== before.oauth_mode || (input.auth_type ?? before.auth_type) !== before.auth_type)) {
            await trx.deleteFrom('oauth_providers').where('workspace_id', '=', caller.workspaceId).where('dynamic_mcp_server_id', '=', id).execute();
          }
        }
        const row = await trx
          .updateTable('mcp_servers')
          .set(set)
          .where('workspace_id', '=', caller.workspaceId)
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirst();
        if (!row) throw notFound(id);
        return this.toDomain(row);
      });
      this.changed(caller.workspaceId);
      return updated;
    } catch (error) {
      if (isUniqueViolation(error) && url !== undefined) throw urlTaken(url);
      throw error;
    }
  }

  /** Delete; deleting a tool server that does not exist (any more) succeeds. */
  async delete(caller: Caller, id: string): Promise<void> {
    requireWrite(caller);
    const deleted = await this.db.deleteFrom('mcp_servers').where('workspace_id', '=', caller.workspaceId).where('id', '=', id).executeTakeFirst();
    // Idempotent, as the reference's operation says and as agent deletes are: a retried delete (or
    // another workspace's id) is a 204 that changes nothing, so a client can retry without a 404 branch.
    if (Number(deleted.numDeletedRows) > 0) this.changed(caller.workspaceId);
  }

  /** An `oauth_provider_id` must name a provider (its `id`) of the same workspace. */
  /**
   * Every credential header value of the workspace's tool servers, and the credentials their URLs
   * carry (`urlSecrets`), for redaction. Fails small: a record that cannot be decrypted (a rotated
   * key, a damaged row) is skipped and reported through `onSkipped`, so one bad record never takes
   * the others down with it.
   */
  async secretValues(workspaceId: string, onSkipped: (serverId: string, error: unknown) => void): Promise<string[]> {
    const rows = await this.db.selectFrom('mcp_servers').select(['id', 'url', 'headers_encrypted']).where('workspace_id', '=', workspaceId).execute();
    const values: string[] = [];
    for (const row of rows) {
      values.push(...urlSecrets(row.url));
      try {
        values.push(...this.cipher.decryptJson<McpHeader[]>(row.headers_encrypted).map((h) => h.value));
      } catch (error) {
        onSkipped(row.id, error);
      }
    }
    return values;
  }

  /**
   * What a key that may not invoke tool servers (a viewer) may read of text stored as given (an
   * agent's files and definition): the workspace's tool server URLs and `extraUrls` (those an agent
   * names, registered or not) in their display form, their credentials and the servers' header
   * values redacted wherever they appear, and any other URL carrying a credential in its display form.
   * A record whose headers cannot be decrypted still has its URL redacted.
   */
  async viewerScrubber(workspaceId: string, extraUrls: Iterable<string>): Promise<(text: string) => string> {
    const rows = await this.db.selectFrom('mcp_servers').select(['url', 'headers_encrypted']).where('workspace_id', '=', workspaceId).execute();
    const headerValues: string[] = [];
    for (const row of rows) {
      try {
        headerValues.push(...this.cipher.decryptJson<McpHeader[]>(row.headers_encrypted).map((h) => h.value));
      } catch {
        // Tracing logs and counts such a record; here its URL is redacted all the same.
      }
    }
    const urls = urlScrubber([...rows.map((r) => r.url), ...extraUrls]);
    const headers = new Redactor(headerValues);
    return viewerText((text) => headers.string(urls(text)));
  }

  private async checkProvider(workspaceId: string, id: string | null | undefined): Promise<void> {
    if (!id || !this.oauthProviders) return;
    if (!(await this.oauthProviders.exists(workspaceId, id))) {
      throw invalidField(['oauth_provider_id'], `no OAuth provider with id ${id} in this workspace`, 'not_found');
    }
  }

  private toDomain(row: Selectable<McpServersTable>): McpServer {
    return {
      id: row.id,
      workspaceId: row.workspace_id,
      name: row.name,
      url: row.url,
      headers: this.cipher.decryptJson<McpHeader[]>(row.headers_encrypted),
      authType: row.auth_type,
      oauthProviderId: row.oauth_provider_id,
      oauthMode: row.oauth_mode,
      vendorId: row.vendor_id,
      externalSystemId: row.external_system_id,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }
}

function checkUrl(url: string, egress: EgressGuard): string {
  if (!isHttpUrl(url)) throw invalidField(['url'], 'must be an absolute http:// or https:// URL', 'url_error');
  checkOutboundUrl(egress, ['url'], url);
  return normalizeServerUrl(url);
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Headers a stored value would break every request with: framing and connection headers the HTTP
 * client sets itself (fetch refuses some, and a stored `Content-Length` mis-frames every body), and
 * the MCP transport's own (a stored `Mcp-Session-Id` names a session the server never opened).
 */
const RESERVED_HEADERS = new Map<string, string>([
  ...['connection', 'content-length', 'expect', 'host', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade'].map(
    (h): [string, string] => [h, 'the HTTP client sets it for each request'],
  ),
  ...['mcp-session-id', 'mcp-protocol-version', 'last-event-id'].map((h): [string, string] => [h, 'the MCP transport sets it for each request']),
]);

function checkHeaders(headers: McpHeader[]): McpHeader[] {
  const seen = new Set<string>();
  headers.forEach((h, i) => {
    if (!HEADER_NAME.test(h.key)) throw invalidField(['headers', i, 'key'], `"${h.key}" is not a valid HTTP header name`);
    const reserved = RESERVED_HEADERS.get(h.key.toLowerCase());
    if (reserved) throw invalidField(['headers', i, 'key'], `"${h.key}" cannot be stored: ${reserved}`);
    if (/[\r\n\0]/.test(h.value)) throw invalidField(['headers', i, 'value'], 'must not contain CR, LF or NUL');
    // fetch sends header values as bytes (ISO-8859-1): anything beyond U+00FF would fail every call.
    // eslint-disable-next-line no-control-regex -- the range is the point
    if (/[^\u0000-\u00ff]/.test(h.value)) throw invalidField(['headers', i, 'value'], 'must hold only ISO-8859-1 characters (U+0000 to U+00FF): HTTP cannot send others in a header');
    const lower = h.key.toLowerCase();
    if (seen.has(lower)) throw invalidField(['headers', i, 'key'], `header "${h.key}" is given twice`);
    seen.add(lower);
  });
  return headers.map((h) => ({ key: h.key, value: h.value }));
}

function checkAuth(authType: 'headers' | 'oauth' | undefined, oauthProviderId: string | null | undefined, mode: OAuthMode): void {
  // A server that sends its stored headers keeps its oauth_mode for a later switch to OAuth; it has no effect.
  if (mode === 'per_user_dynamic_client' && authType === 'oauth') {
    if (oauthProviderId) {
      throw invalidField(['oauth_provider_id'], 'must be absent or null with oauth_mode "per_user_dynamic_client": each user gets a provider of their own from POST /mcp-servers/{id}/oauth-provider');
    }
    return;
  }
  if (authType === 'oauth' && !oauthProviderId) {
    throw invalidField(['oauth_provider_id'], 'is required when auth_type is "oauth" (or send oauth_mode "per_user_dynamic_client" to register a client per user)', 'missing');
  }
}

function notFound(id: string): HangarError {
  return new HangarError('mcp_server_not_found', `no tool server with id ${id} in this workspace`);
}

function urlTaken(url: string): HangarError {
  return new HangarError('mcp_server_url_taken', `a tool server is already registered at ${redactServerUrl(url)} in this workspace`);
}
