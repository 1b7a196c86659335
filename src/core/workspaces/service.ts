// Workspaces and their API keys: creation, authentication, revocation and first-start bootstrap.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { type Caller, type Role, requireAdmin } from '../caller.js';
import { HangarError } from '../errors.js';
import { AUTH_CHANNEL, type KeyCache } from './key-cache.js';

/** The workspace every installation has; keys made without a workspace name belong to it. */
export const DEFAULT_WORKSPACE = 'default';

/** A workspace as the CLI shows it. */
export interface Workspace {
  id: string;
  name: string;
  previewAccess: boolean;
  isDefault: boolean;
  createdAt: Date;
}

/** An API key's record; the key itself is never stored. */
export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  workspaceName: string;
  role: Role;
  prefix: string;
  principal: string;
  description: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

/** Raised by the operator commands (CLI); the HTTP API never manages workspaces. */
export class WorkspaceAdminError extends Error {
  override name = 'WorkspaceAdminError';
}

/** Hash of an API key as stored. */
export function hashKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** Workspace and key operations. */
export class WorkspaceService {
  constructor(
    private readonly db: Db,
    private readonly cache?: KeyCache,
  ) {}

  /** The caller behind a presented key, or undefined when the key is unknown or revoked. */
  async authenticate(key: string): Promise<Caller | undefined> {
    const hash = hashKey(key);
    const cacheKey = hash.toString('hex');
    const cached = this.cache?.get(cacheKey);
    if (cached) return cached;
    const row = await this.db
      .selectFrom('api_keys as k')
      .innerJoin('workspaces as w', 'w.id', 'k.workspace_id')
      .select(['k.id', 'k.workspace_id', 'k.role', 'k.principal', 'k.traces_project', 'w.preview_access'])
      .where('k.key_hash', '=', hash)
      .where('k.revoked_at', 'is', null)
      .executeTakeFirst();
    if (!row) return undefined;
    const caller: Caller = {
      workspaceId: row.workspace_id,
      keyId: row.id,
      role: row.role,
      principal: row.principal,
      previewAccess: row.preview_access,
      ...(row.traces_project !== null ? { tracesProject: row.traces_project } : {}),
    };
    this.cache?.set(cacheKey, caller);
    return caller;
  }

  /** Tell every server process (through PostgreSQL) that cached callers of this key or workspace are stale. */
  private async notify(payload: `key:${string}` | `workspace:${string}`): Promise<void> {
    await sql`SELECT pg_notify(${AUTH_CHANNEL}, ${payload})`.execute(this.db);
    // This process's cache at once: the notification reaches it a moment later, and a revoked key
    // must not answer a request made here in between.
    this.cache?.invalidate(payload);
  }

  async createWorkspace(name: string, options: { previewAccess?: boolean } = {}): Promise<Workspace> {
    if (!/^[a-z0-9][a-z0-9._-]{0,62}$/.test(name)) {
      throw new WorkspaceAdminError(
        `workspace name "${name}" must be 1-63 lowercase letters, digits, ".", "_" or "-", starting with a letter or digit`,
      );
    }
    const row = await this.db
      .insertInto('workspaces')
      .values({ name, preview_access: options.previewAccess ?? true })
      .onConflict((oc) => oc.column('name').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new WorkspaceAdminError(`a workspace named "${name}" already exists`);
    return toWorkspace(row);
  }

  async listWorkspaces(): Promise<Workspace[]> {
    const rows = await this.db.selectFrom('workspaces').selectAll().orderBy('created_at').execute();
    return rows.map(toWorkspace);
  }

  async setPreviewAccess(name: string, previewAccess: boolean): Promise<Workspace> {
    const row = await this.db
      .updateTable('workspaces')
      .set({ preview_access: previewAccess, updated_at: new Date() })
      .where('name', '=', name)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new WorkspaceAdminError(`no workspace named "${name}"`);
    await this.notify(`workspace:${row.id}`);
    return toWorkspace(row);
  }

  /** The default workspace, created on first use. */
  async ensureDefaultWorkspace(): Promise<Workspace> {
    await this.db
      .insertInto('workspaces')
      .values({ name: DEFAULT_WORKSPACE, is_default: true })
      .onConflict((oc) => oc.doNothing())
      .execute();
    const row = await this.db.selectFrom('workspaces').selectAll().where('is_default', '=', true).executeTakeFirstOrThrow();
    return toWorkspace(row);
  }

  /** Create a key; the returned `key` is shown once and never stored. */
  async createKey(input: {
    workspace: string;
    role: Role;
    principal?: string;
    description?: string;
    /** Use this exact key instead of a random one (bootstrap). */
    key?: string;
    /** Restrict the key to sending traces into this tracing project. */
    tracesProject?: string;
  }): Promise<{ key: string; record: ApiKeyRecord }> {
    const workspace = await this.db.selectFrom('workspaces').selectAll().where('name', '=', input.workspace).executeTakeFirst();
    if (!workspace) throw new WorkspaceAdminError(`no workspace named "${input.workspace}"`);
    const key = input.key ?? `hgr_${randomBytes(32).toString('base64url')}`;
    const prefix = key.slice(0, 12);
    const id = randomUUID();
    const row = await this.db
      .insertInto('api_keys')
      .values({
        id,
        workspace_id: workspace.id,
        role: input.role,
        key_hash: hashKey(key),
        prefix,
        // A key without an explicit principal acts as its own principal.
        principal: input.principal ?? id,
        description: input.description ?? null,
        traces_project: input.tracesProject ?? null,
      })
      .onConflict((oc) => oc.column('key_hash').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!row) throw new WorkspaceAdminError('this key already exists');
    return { key, record: toKeyRecord(row, workspace.name) };
  }

  async listKeys(options: { workspace?: string } = {}): Promise<ApiKeyRecord[]> {
    let q = this.db
      .selectFrom('api_keys as k')
      .innerJoin('workspaces as w', 'w.id', 'k.workspace_id')
      .selectAll('k')
      .select('w.name as workspace_name')
      .orderBy('k.created_at');
    if (options.workspace) {
      const workspace = await this.db.selectFrom('workspaces').select('id').where('name', '=', options.workspace).executeTakeFirst();
      if (!workspace) throw new WorkspaceAdminError(`no workspace named "${options.workspace}"`);
      q = q.where('w.name', '=', options.workspace);
    }
    const rows = await q.execute();
    return rows.map((r) => toKeyRecord(r, r.workspace_name));
  }

  /** Revoke a key by id; revoking twice is harmless. */
  async revokeKey(id: string): Promise<ApiKeyRecord> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) throw new WorkspaceAdminError(`"${id}" is not a key id (a UUID, as \`hangar keys list\` shows)`);
    await this.db.updateTable('api_keys').set({ revoked_at: new Date() }).where('id', '=', id).where('revoked_at', 'is', null).execute();
    await this.notify(`key:${id}`);
    const keys = await this.listKeys();
    const key = keys.find((k) => k.id === id);
    if (!key) throw new WorkspaceAdminError(`no key with id ${id}`);
    return key;
  }

  /** The caller's own key (any role): how the Console names who is signed in. */
  async ownKey(caller: Caller): Promise<ApiKeyRecord | undefined> {
    const row = await this.keysQuery().where('k.workspace_id', '=', caller.workspaceId).where('k.id', '=', caller.keyId).executeTakeFirst();
    return row ? toKeyRecord(row, row.workspace_name) : undefined;
  }

  /** The keys of the caller's workspace (admins only). */
  async listWorkspaceKeys(caller: Caller): Promise<ApiKeyRecord[]> {
    requireAdmin(caller, 'list API keys');
    const rows = await this.keysQuery().where('k.workspace_id', '=', caller.workspaceId).execute();
    return rows.map((r) => toKeyRecord(r, r.workspace_name));
  }

  /** A new key in the caller's workspace (admins only); the returned `key` is shown once. */
  async createWorkspaceKey(caller: Caller, input: { role: Role; principal?: string | undefined; description?: string | undefined }): Promise<{ key: string; record: ApiKeyRecord }> {
    requireAdmin(caller, 'create API keys');
    const workspace = await this.db.selectFrom('workspaces').select('name').where('id', '=', caller.workspaceId).executeTakeFirstOrThrow();
    return this.createKey({
      workspace: workspace.name,
      role: input.role,
      ...(input.principal ? { principal: input.principal } : {}),
      ...(input.description ? { description: input.description } : {}),
    });
  }

  /** Revoke a key of the caller's workspace (admins only); its Console sessions end with it. */
  async revokeWorkspaceKey(caller: Caller, id: string): Promise<ApiKeyRecord> {
    requireAdmin(caller, 'revoke API keys');
    const row = await this.db.selectFrom('api_keys').select('id').where('id', '=', id).where('workspace_id', '=', caller.workspaceId).executeTakeFirst();
    if (!row) throw new HangarError('api_key_not_found', `no API key with id ${id} in this workspace`);
    return this.revokeKey(id);
  }

  private keysQuery() {
    return this.db
      .selectFrom('api_keys as k')
      .innerJoin('workspaces as w', 'w.id', 'k.workspace_id')
      .selectAll('k')
      .select('w.name as workspace_name')
      .orderBy('k.created_at');
  }

  /**
   * First-start set-up: the default workspace, plus either the operator's bootstrap key or, when no
   * key exists at all, a new admin key. Returns a key to print only when one was generated.
   */
  async bootstrap(options: { bootstrapApiKey?: string }): Promise<string | undefined> {
    await this.ensureDefaultWorkspace();
    if (options.bootstrapApiKey) {
      const exists = await this.db
        .selectFrom('api_keys')
        .select('id')
        .where('key_hash', '=', hashKey(options.bootstrapApiKey))
        .executeTakeFirst();
      if (!exists) {
        await this.createKey({
          workspace: DEFAULT_WORKSPACE,
          role: 'admin',
          key: options.bootstrapApiKey,
          description: 'HANGAR_BOOTSTRAP_API_KEY',
        }).catch((error: unknown) => {
          // Another replica inserted it at the same moment.
          if (!(error instanceof WorkspaceAdminError)) throw error;
        });
      }
      return undefined;
    }
    const any = await this.db.selectFrom('api_keys').select('id').limit(1).executeTakeFirst();
    if (any) return undefined;
    const { key } = await this.createKey({ workspace: DEFAULT_WORKSPACE, role: 'admin', description: 'created on first start' });
    return key;
  }
}

function toWorkspace(row: { id: string; name: string; preview_access: boolean; is_default: boolean; created_at: Date }): Workspace {
  return {
    id: row.id,
    name: row.name,
    previewAccess: row.preview_access,
    isDefault: row.is_default,
    createdAt: row.created_at,
  };
}

function toKeyRecord(
  row: {
    id: string;
    workspace_id: string;
    role: Role;
    prefix: string;
    principal: string;
    description: string | null;
    created_at: Date;
    revoked_at: Date | null;
  },
  workspaceName: string,
): ApiKeyRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    workspaceName,
    role: row.role,
    prefix: row.prefix,
    principal: row.principal,
    description: row.description,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}
