// The history of an agent: its commits, newest first, read from the revision index.
import type { Db } from '../../db/index.js';
import { invalid } from '../errors.js';

/** One commit of an agent. */
export interface Revision {
  id: string;
  parent: string | null;
  message: string;
  changedPaths: string[];
  createdAt: Date;
  /** 1 for the create commit, then one more per update. */
  number: number;
}

/** A page of revisions; `nextCursor` is null on the last page. */
export interface RevisionPage {
  items: Revision[];
  nextCursor: string | null;
}

/** Revisions of `agentId`, newest first, `pageSize` at a time. The cursor is the number of the last item shown. */
export async function listRevisions(db: Db, agentId: string, page: { pageSize: number; cursor?: string | undefined }): Promise<RevisionPage> {
  let before: number | undefined;
  if (page.cursor !== undefined) {
    // Revision numbers are PostgreSQL integers: a larger number is no cursor this endpoint returned.
    before = /^[1-9][0-9]{0,9}$/.test(page.cursor) ? Number(page.cursor) : Number.NaN;
    if (Number.isNaN(before) || before > 2_147_483_647) throw invalid([{ loc: ['query', 'cursor'], msg: 'not a cursor returned by this endpoint', type: 'value_error' }]);
  }
  const rows = await db
    .selectFrom('agent_revisions')
    .selectAll()
    .where('agent_id', '=', agentId)
    .$if(before !== undefined, (q) => q.where('seq', '<', before!))
    .orderBy('seq', 'desc')
    .limit(page.pageSize + 1)
    .execute();
  const items = rows.slice(0, page.pageSize).map(
    (r): Revision => ({ id: r.commit_oid, parent: r.parent_oid, message: r.message, changedPaths: r.changed_paths, createdAt: r.created_at, number: r.seq }),
  );
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > page.pageSize && last ? String(last.number) : null };
}

/** The revision `commitOid` of the agent, if it is in its history. */
export async function findRevision(db: Db, agentId: string, commitOid: string): Promise<Revision | undefined> {
  const r = await db.selectFrom('agent_revisions').selectAll().where('agent_id', '=', agentId).where('commit_oid', '=', commitOid).executeTakeFirst();
  return r ? { id: r.commit_oid, parent: r.parent_oid, message: r.message, changedPaths: r.changed_paths, createdAt: r.created_at, number: r.seq } : undefined;
}
