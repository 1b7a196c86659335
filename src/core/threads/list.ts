// The hosted SDK's thread list (`GET /threads?agent_id=…`): one agent's threads, latest activity
// first, in keyset pages. The cursor carries the last thread's activity time in microseconds (the
// column's own precision, so no thread is skipped or repeated between pages) and its id.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { ThreadsTable } from '../../db/tables/runtime.js';
import { invalid } from '../errors.js';
import type { ThreadStatus } from '../runs/status.js';

/** Query of `GET /threads`. */
export interface ListThreadsQuery {
  agentId: string;
  pageSize: number;
  cursor?: string | undefined;
  status?: ThreadStatus | undefined;
  /** Test-run threads (`options.test_run`) instead of the others. */
  testRun: boolean;
  /** Only threads waiting for a person (`interrupted`). */
  needsAction: boolean;
  /** Hangar does not pin threads: `true` lists none. */
  pinned?: boolean | undefined;
}

interface Cursor {
  /** `updated_at` of the last thread, microseconds since the epoch, as a decimal string. */
  us: string;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One page of threads (latest activity first) and the cursor of the next (null on the last page). */
export async function listThreads(db: Db, workspaceId: string, query: ListThreadsQuery): Promise<{ rows: Selectable<ThreadsTable>[]; nextCursor: string | null }> {
  if (query.pinned === true) return { rows: [], nextCursor: null };
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const micros = sql<string>`(extract(epoch from updated_at) * 1000000)::bigint`;
  let q = db
    .selectFrom('threads')
    .selectAll()
    .select(micros.as('us'))
    .where('workspace_id', '=', workspaceId)
    .where('agent_id', '=', query.agentId);
  const testRun = sql<boolean>`metadata @> '{"is_test_run": true}'::jsonb`;
  q = query.testRun ? q.where(testRun) : q.where(sql<boolean>`not (${testRun})`);
  if (query.needsAction) q = q.where('status', '=', 'interrupted');
  else if (query.status) q = q.where('status', '=', query.status);
  if (after) q = q.where(sql<boolean>`(${micros}, id) < (${after.us}::bigint, ${after.id}::uuid)`);
  const rows = await q.orderBy('updated_at', 'desc').orderBy('id', 'desc').limit(query.pageSize + 1).execute();
  const page = rows.slice(0, query.pageSize);
  const last = page[page.length - 1];
  const nextCursor = rows.length > query.pageSize && last ? Buffer.from(JSON.stringify({ us: String(last.us), id: last.id } satisfies Cursor)).toString('base64url') : null;
  return { rows: page.map(({ us: _us, ...row }) => row), nextCursor };
}

/** The cursor, or a 422 naming `cursor`: an edited or foreign cursor never reaches SQL. */
function decodeCursor(text: string): Cursor {
  let c: Partial<Cursor> | null | undefined;
  try {
    c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<Cursor>;
  } catch {
    c = undefined;
  }
  if (!c || typeof c !== 'object' || typeof c.us !== 'string' || !/^\d{1,19}$/.test(c.us) || typeof c.id !== 'string' || !UUID.test(c.id)) {
    throw invalid([{ loc: ['query', 'cursor'], msg: 'not a cursor returned by this endpoint', type: 'value_error' }]);
  }
  return c as Cursor;
}
