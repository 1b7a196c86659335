// Keyset pagination of agents: the cursor carries the sort value and id of the last item, so pages stay
// stable while agents are created or updated.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { AgentsTable } from '../../db/tables/agents.js';
import { invalid } from '../errors.js';

/** Query of `GET /agents`. */
export interface ListAgentsQuery {
  pageSize: number;
  cursor?: string | undefined;
  /** Substring of the name, case-insensitive. */
  name?: string | undefined;
  sortBy: 'created_at' | 'updated_at' | 'name';
  sortOrder: 'asc' | 'desc';
}

/** One page and the cursor of the next (null on the last page). */
export interface AgentPage<T> {
  items: T[];
  nextCursor: string | null;
}

interface Cursor {
  /** The sort value of the last item: an ISO timestamp or a name. */
  v: string;
  id: string;
}

/** One page of the workspace's (not deleted) agents. */
export async function listAgents(db: Db, workspaceId: string, query: ListAgentsQuery): Promise<AgentPage<Selectable<AgentsTable>>> {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const col = query.sortBy;
  const dir = query.sortOrder;
  let q = db.selectFrom('agents').selectAll().where('workspace_id', '=', workspaceId).where('deleted_at', 'is', null);
  if (query.name) q = q.where('name', 'ilike', `%${query.name.replace(/[\\%_]/g, (m) => `\\${m}`)}%`);
  // Names compare byte-wise (collation "C") so the keyset comparison and the order agree everywhere.
  const sortExpr = col === 'name' ? sql`name collate "C"` : sql.ref(col);
  if (after) {
    const value = col === 'name' ? sql`${after.v} collate "C"` : sql`${new Date(after.v)}::timestamptz`;
    q = q.where(sql<boolean>`(${sortExpr}, id) ${sql.raw(dir === 'asc' ? '>' : '<')} (${value}, ${after.id}::uuid)`);
  }
  const rows = await q
    .orderBy(sortExpr, dir)
    .orderBy('id', dir)
    .limit(query.pageSize + 1)
    .execute();
  const items = rows.slice(0, query.pageSize);
  const last = items[items.length - 1];
  const nextCursor =
    rows.length > query.pageSize && last ? encodeCursor({ v: col === 'name' ? last.name : last[col].toISOString(), id: last.id }) : null;
  return { items, nextCursor };
}

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

function decodeCursor(text: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Cursor;
    if (typeof c.v === 'string' && typeof c.id === 'string' && /^[0-9a-f-]{36}$/.test(c.id)) return c;
  } catch {
    // fall through
  }
  throw invalid([{ loc: ['query', 'cursor'], msg: 'not a cursor returned by this endpoint', type: 'value_error' }]);
}
