// Agents: each one a git repository whose commits are stored in PostgreSQL. Every create and update
// writes a commit; updates of one agent are serialised by a row lock on its head, so history is a line.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { AgentsTable } from '../../db/tables/agents.js';
import { buildTree, commit, PathClashError } from '../../repo/objects.js';
import type { ObjectStore, Queryable } from '../../repo/store.js';
import { type Caller, requireWrite } from '../caller.js';
import { HangarError, invalidField } from '../errors.js';
import type { McpServerService } from '../mcp-servers/service.js';
import { normalizeServerUrl } from '../mcp-servers/url.js';
import type { ModelConfigService } from '../model-configs/service.js';
import { type AgentInput, compose, type Composed, inRequestTerms, requestPermissions } from './compose.js';
import { findRevision, listRevisions, type RevisionPage } from './history.js';
import { listAgents, type ListAgentsQuery, type AgentPage } from './list.js';
import { type AgentDefinition, type AgentRuntime, filesToDefinition } from './tree.js';
import { validateDefinition, type WorkspaceLookups } from './validate.js';

export type { AgentInput } from './compose.js';

/** Agent fields kept on the row (copies of agent.json at the head, plus access metadata). */
export interface AgentSummary {
  id: string;
  workspaceId: string;
  ownerId: string;
  name: string;
  description: string;
  runtime: AgentRuntime;
  extras: Record<string, unknown>;
  backend: Record<string, unknown> | null;
  permissions: Record<string, unknown> | null;
  /** Id of the head commit. */
  revision: string;
  /** How many revisions the agent has (its head is number `revisionCount`). */
  revisionCount: number;
  createdAt: Date;
  updatedAt: Date;
}

/** An agent at one revision: its summary, typed definition and files. */
export interface Agent extends AgentSummary {
  definition: AgentDefinition;
  files: Record<string, string>;
}

/** What the runtime needs to build an agent: the tree at one revision and its typed view. */
export interface AgentTree {
  agentId: string;
  revision: string;
  files: Record<string, string>;
  definition: AgentDefinition;
}

/** Extra request fields that are not part of the tree. */
export interface AgentRequest extends AgentInput {
  permissions?: Record<string, unknown> | undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Create, read, update and delete agents of the caller's workspace. */
export class AgentService {
  constructor(
    private readonly db: Db,
    private readonly store: ObjectStore,
    private readonly mcpServers: McpServerService,
    private readonly modelConfigs: ModelConfigService,
  ) {}

  /** Create an agent and its first commit, atomically. */
  async create(caller: Caller, input: AgentRequest): Promise<Agent> {
    requireWrite(caller);
    const composed = compose(null, input);
    const permissions = requestPermissions(input.permissions, composed);
    await validateDefinition(composed.definition, this.lookups(caller.workspaceId)).catch((error: unknown) => {
      throw inRequestTerms(error, composed);
    });
    const now = new Date();
    const { commitOid, objects } = this.commitOf(composed, null, caller, now, `Create agent "${composed.definition.name}"`);
    return this.db.transaction().execute(async (trx) => {
      await this.store.put(objects, trx);
      const def = composed.definition;
      const row = await trx
        .insertInto('agents')
        .values({
          workspace_id: caller.workspaceId,
          owner_id: caller.keyId,
          ...rowFields(def),
          permissions: permissions === undefined ? null : JSON.stringify(permissions),
          head: commitOid,
          revision_count: 1,
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await trx
        .insertInto('agent_revisions')
        .values({ agent_id: row.id, seq: 1, commit_oid: commitOid, parent_oid: null, message: messageOf(composed, true), changed_paths: composed.changedPaths, created_at: now })
        .execute();
      return { ...toSummary(row), definition: def, files: composed.files };
    }).then((agent) => {
      // A commit id names its files forever, so caching them is safe even across replicas.
      this.store.remember(agent.revision, composed.files);
      return agent;
    });
  }

  /** The agent at its head revision. */
  async get(caller: Caller, agentId: string): Promise<Agent> {
    const row = await this.findRow(caller.workspaceId, agentId);
    const files = await this.store.readFiles(row.head);
    return { ...toSummary(row), definition: filesToDefinition(files), files };
  }

  /** A new agent with the same files (and permissions) as `agentId` at its head; `name` renames the copy. */
  async clone(caller: Caller, agentId: string, name?: string | undefined): Promise<Agent> {
    const source = await this.get(caller, agentId);
    const files: Record<string, { content: string }> = Object.fromEntries(Object.entries(source.files).map(([path, content]) => [path, { content }]));
    // agent.json comes back from the typed fields (create needs a name; a rename changes it).
    delete files['agent.json'];
    const d = source.definition;
    const fields = { name: name ?? d.name, description: d.description, runtime: d.runtime, extras: d.extras, ...(d.backend ? { backend: d.backend } : {}) };
    return this.create(caller, { ...fields, files, ...(source.permissions ? { permissions: source.permissions } : {}) });
  }

  /** Agents by offset (LangGraph's assistant search): `name` exact, or all; `ids` narrows. */
  async search(caller: Caller, query: AgentSearch & { limit: number; offset: number; sortBy: 'created_at' | 'updated_at' | 'name'; sortOrder: 'asc' | 'desc' }): Promise<AgentSummary[]> {
    const rows = await this.searched(caller, query).selectAll().orderBy(query.sortBy, query.sortOrder).orderBy('id').limit(query.limit).offset(query.offset).execute();
    return rows.map(toSummary);
  }

  /** How many agents `search` would find without paging. */
  async count(caller: Caller, query: AgentSearch): Promise<number> {
    const row = await this.searched(caller, query).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  private searched(caller: Caller, query: AgentSearch) {
    let q = this.db.selectFrom('agents').where('workspace_id', '=', caller.workspaceId).where('deleted_at', 'is', null);
    if (query.name !== undefined) q = q.where('name', '=', query.name);
    if (query.ids) q = q.where('id', 'in', query.ids.length > 0 ? query.ids : ['00000000-0000-0000-0000-000000000000']);
    if (query.revision !== undefined) q = q.where('head', '=', query.revision);
    if (query.modelId !== undefined) q = q.where(sql<string>`runtime->'model'->>'model_id'`, '=', query.modelId);
    if (query.none) q = q.where(sql<boolean>`false`);
    return q;
  }

  /** A page of the workspace's agents. */
  async list(caller: Caller, query: ListAgentsQuery): Promise<AgentPage<AgentSummary>> {
    const page = await listAgents(this.db, caller.workspaceId, query);
    return { items: page.items.map(toSummary), nextCursor: page.nextCursor };
  }

  /**
   * Apply an update as a new commit on the head. The row lock (`FOR UPDATE`) makes concurrent
   * updates of one agent wait for each other, so each builds on the previous one and none is lost.
   */
  async update(caller: Caller, agentId: string, input: AgentRequest, options: { ifMatch?: string | undefined; message?: string | undefined } = {}): Promise<Agent> {
    requireWrite(caller);
    if (!UUID.test(agentId)) throw notFound(agentId);
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('agents')
        .selectAll()
        .where('workspace_id', '=', caller.workspaceId)
        .where('id', '=', agentId)
        .where('deleted_at', 'is', null)
        .forUpdate()
        .executeTakeFirst();
      if (!row) throw notFound(agentId);
      if (options.ifMatch !== undefined && !revisionMatches(options.ifMatch, row.head)) {
        throw new HangarError('agent_revision_mismatch', `the agent's head is revision ${row.head}, not ${options.ifMatch.trim()}: it was updated meanwhile; read it again and redo the change`);
      }
      const current = await this.store.readFiles(row.head, trx);
      const composed = compose(current, input);
      const permissions = requestPermissions(input.permissions, composed);
      await validateDefinition(composed.definition, this.lookups(caller.workspaceId, trx), storedDefinition(current)).catch((error: unknown) => {
        throw inRequestTerms(error, composed);
      });
      const now = new Date();
      const message = options.message ?? messageOf(composed, false);
      const { commitOid, objects } = this.commitOf(composed, row.head, caller, now, message);
      await this.store.put(objects, trx);
      const seq = row.revision_count + 1;
      await trx
        .insertInto('agent_revisions')
        .values({ agent_id: row.id, seq, commit_oid: commitOid, parent_oid: row.head, message, changed_paths: composed.changedPaths, created_at: now })
        .execute();
      const updated = await trx
        .updateTable('agents')
        .set({
          ...rowFields(composed.definition),
          ...(permissions === undefined ? {} : { permissions: JSON.stringify(permissions) }),
          head: commitOid,
          revision_count: seq,
          updated_at: now,
        })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      this.store.remember(commitOid, composed.files);
      return { ...toSummary(updated), definition: composed.definition, files: composed.files };
    });
  }

  /** Delete; the agent's threads and history stay, the agent answers 404 from now on. Idempotent. */
  async delete(caller: Caller, agentId: string): Promise<void> {
    requireWrite(caller);
    if (!UUID.test(agentId)) return;
    await this.db.transaction().execute(async (trx) => {
      const deleted = await trx
        .updateTable('agents')
        .set({ deleted_at: new Date() })
        .where('workspace_id', '=', caller.workspaceId)
        .where('id', '=', agentId)
        .where('deleted_at', 'is', null)
        .returning('id')
        .executeTakeFirst();
      if (!deleted) return;
      // Every principal's OAuth tokens scoped to the agent, and its authorizations in flight, go with it.
      await trx.deleteFrom('oauth_tokens').where('agent_id', '=', agentId).execute();
      await trx.deleteFrom('oauth_sessions').where('agent_id', '=', agentId).execute();
    });
  }

  /** The agent's commits, newest first. */
  async revisions(caller: Caller, agentId: string, page: { pageSize: number; cursor?: string | undefined }): Promise<RevisionPage> {
    const row = await this.findRow(caller.workspaceId, agentId);
    return listRevisions(this.db, row.id, page);
  }

  /** The agent as it was at `revision` (a commit id or an unambiguous prefix of one). */
  async atRevision(caller: Caller, agentId: string, revision: string): Promise<Agent & { message: string; parent: string | null }> {
    const row = await this.findRow(caller.workspaceId, agentId);
    const oid = await this.revisionOid(row.id, revision);
    const rev = (await findRevision(this.db, row.id, oid))!;
    const files = await this.store.readFiles(oid);
    return { ...toSummary(row), revision: oid, updatedAt: rev.createdAt, definition: filesToDefinition(files), files, message: rev.message, parent: rev.parent };
  }

  /**
   * The file tree of an agent at its head (or at `revision`, a commit id of its history), for the
   * runtime. Throws `agent_not_found` for a missing, deleted or other-workspace agent and
   * `revision_not_found` for a commit that is not in the agent's history.
   */
  async loadTree(workspaceId: string, agentId: string, revision?: string): Promise<AgentTree> {
    const row = await this.findRow(workspaceId, agentId);
    let oid = row.head;
    if (revision !== undefined && revision !== row.head) {
      oid = await this.revisionOid(row.id, revision);
    }
    const files = await this.store.readFiles(oid);
    return { agentId: row.id, revision: oid, files, definition: filesToDefinition(files) };
  }

  /** Every commit id of the agent's history, oldest first. */
  async revisionCommits(agentId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('agent_revisions').select('commit_oid').where('agent_id', '=', agentId).orderBy('seq').execute();
    return rows.map((r) => r.commit_oid);
  }

  /** The agent's row (not deleted) in the workspace, or `agent_not_found`. */
  async findRow(workspaceId: string, agentId: string): Promise<Selectable<AgentsTable>> {
    if (!UUID.test(agentId)) throw notFound(agentId);
    const row = await this.db
      .selectFrom('agents')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', agentId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!row) throw notFound(agentId);
    return row;
  }

  /** The full commit id of `revision` (a full id or an unambiguous prefix of at least 7 digits) in the agent's history. */
  async revisionOid(agentId: string, revision: string): Promise<string> {
    const rev = revision.toLowerCase();
    if (!/^[0-9a-f]{7,40}$/.test(rev)) throw revisionNotFound(revision);
    const rows = await this.db
      .selectFrom('agent_revisions')
      .select('commit_oid')
      .where('agent_id', '=', agentId)
      .where('commit_oid', 'like', `${rev}%`)
      .limit(2)
      .execute();
    if (rows.length !== 1) throw revisionNotFound(revision);
    return rows[0]!.commit_oid;
  }

  /**
   * Workspace lookups. Inside an update they run on `trx`, the transaction holding the agent's row
   * lock (the same queries as `findByUrl` and `findByName`): on a second pool connection, updates
   * queued on the lock could hold every connection and starve the lock holder forever.
   */
  private lookups(workspaceId: string, trx?: Queryable): WorkspaceLookups {
    if (!trx) {
      return {
        hasToolServer: async (url) => (await this.mcpServers.findByUrl(workspaceId, url)) !== undefined,
        hasModelConfig: async (name) => (await this.modelConfigs.findByName(workspaceId, name)) !== undefined,
      };
    }
    return {
      hasToolServer: async (url) =>
        (await trx.selectFrom('mcp_servers').select('id').where('workspace_id', '=', workspaceId).where('url', '=', normalizeServerUrl(url)).executeTakeFirst()) !==
        undefined,
      hasModelConfig: async (name) =>
        (await trx.selectFrom('model_configs').select('id').where('workspace_id', '=', workspaceId).where('name', '=', name).executeTakeFirst()) !== undefined,
    };
  }

  private commitOf(composed: Composed, parent: string | null, caller: Caller, at: Date, message: string) {
    let built: ReturnType<typeof buildTree>;
    try {
      built = buildTree(composed.files);
    } catch (error) {
      if (error instanceof PathClashError) throw invalidField(['files', error.path], error.message, 'conflict');
      throw error;
    }
    const c = commit({ tree: built.root, parent, author: { name: caller.principal, email: `${caller.keyId}@hangar`, at }, message });
    return { commitOid: c.oid, objects: [...built.objects, c] };
  }
}

/** Whether an `If-Match` value (entity tags, `*`, quoted or weak) names the commit `head`. */
function revisionMatches(ifMatch: string, head: string): boolean {
  return ifMatch.split(',').some((tag) => {
    const bare = tag.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1').toLowerCase();
    return bare === '*' || bare === head;
  });
}

/** The definition of a stored tree, or undefined when it cannot be read (then everything is checked). */
function storedDefinition(files: Record<string, string>): AgentDefinition | undefined {
  try {
    return filesToDefinition(files);
  } catch {
    return undefined;
  }
}

function rowFields(def: AgentDefinition) {
  return {
    name: def.name,
    description: def.description,
    runtime: JSON.stringify(def.runtime),
    extras: JSON.stringify(def.extras),
    backend: def.backend === undefined ? null : JSON.stringify(def.backend),
  };
}

function messageOf(composed: Composed, created: boolean): string {
  if (created) return `Create agent "${composed.definition.name}"`;
  return composed.fields.length > 0 ? `Update ${composed.fields.join(', ')}` : 'Update (no changes)';
}

/** The summary of an agent row. */
export function toSummary(row: Selectable<AgentsTable>): AgentSummary {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    ownerId: row.owner_id,
    name: row.name,
    description: row.description,
    runtime: row.runtime,
    extras: row.extras,
    backend: row.backend,
    permissions: row.permissions,
    revision: row.head,
    revisionCount: row.revision_count,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Which agents an assistant search finds: by name, ids, head revision, model id; `none`: no agent (a filter no agent can match). */
export interface AgentSearch {
  name?: string | undefined;
  ids?: string[] | undefined;
  revision?: string | undefined;
  modelId?: string | undefined;
  none?: boolean | undefined;
}

function notFound(id: string): HangarError {
  return new HangarError('agent_not_found', `no agent with id ${id} in this workspace`);
}

function revisionNotFound(revision: string): HangarError {
  return new HangarError('revision_not_found', `the agent has no revision ${revision}`);
}
