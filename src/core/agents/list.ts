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
  /** The sort column and order the cursor pages (absent in cursors of older versions). */
  s?: ListAgentsQuery['sortBy'];
  o?: ListAgentsQuery['sortOrder'];
}

/** One page of the workspace's (not deleted) agents. */
export async function listAgents(db: Db, workspaceId: string, query: ListAgentsQuery): Promise<AgentPage<Selectable<AgentsTable>>> {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, query);
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
    rows.length > query.pageSize && last ? encodeCursor({ v: col === 'name' ? last.name : last[col].toISOString(), id: last.id, s: col, o: dir }) : null;
  return { items, nextCursor };
}

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The cursor of a page of this listing, or a 422 naming `cursor`. A cursor carries the sort it
 * pages: one of another sort (a name where a time belongs, say) or edited by hand never reaches SQL.
 */
function decodeCursor(text: string, query: ListAgentsQuery): Cursor {
  let c: Partial<Cursor> | undefined;
  try {
    c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<Cursor>;
  } catch {
    c = undefined;
  }
  const refuse = (msg: string) => invalid([{ loc: ['query', 'cursor'], msg, type: 'value_error' }]);
  if (c === null || typeof c !== 'object' || typeof c.v !== 'string' || typeof c.id !== 'string' || !UUID.test(c.id)) throw refuse('not a cursor returned by this endpoint');
  if ((c.s !== undefined && c.s !== query.sortBy) || (c.o !== undefined && c.o !== query.sortOrder)) {
    throw refuse(`this cursor pages the listing sorted by ${c.s ?? query.sortBy} ${c.o ?? query.sortOrder}; send the same sort_by and sort_order as the request that returned it`);
  }
  if (query.sortBy === 'name' ? c.v.includes('\0') : Number.isNaN(Date.parse(c.v)) || !/^\d{4}-\d\d-\d\dT/.test(c.v)) throw refuse('not a cursor returned by this endpoint');
  return c as Cursor;
}
