// The object store: git objects in PostgreSQL, keyed by their id, so identical files (across revisions,
// agents and workspaces) are stored once. Objects are immutable, so whole trees are cached in memory.
import type { Kysely } from 'kysely';
import type { Db } from '../db/index.js';
import type { Database } from '../db/schema.js';
import { type GitObject, type GitObjectType, parseCommit, parseTree } from './objects.js';

/** A database handle or a transaction of it. */
export type Queryable = Kysely<Database>;

/** Reads and writes git objects. */
export class ObjectStore {
  private readonly treeCache = new Map<string, Record<string, string>>();

  constructor(
    private readonly db: Db,
    private readonly cacheSize = 256,
  ) {}

  /** Store objects; those already present are left alone (same id, same bytes). */
  async put(objects: GitObject[], q: Queryable = this.db): Promise<void> {
    // Chunks keep each statement well under PostgreSQL's parameter limit.
    for (let i = 0; i < objects.length; i += 1000) {
      const chunk = objects.slice(i, i + 1000);
      await q
        .insertInto('git_objects')
        .values(chunk.map((o) => ({ oid: o.oid, type: o.type, body: o.body })))
        .onConflict((oc) => oc.column('oid').doNothing())
        .execute();
    }
  }

  /** The objects with these ids that exist. */
  async get(oids: string[], q: Queryable = this.db): Promise<Map<string, GitObject>> {
    const found = new Map<string, GitObject>();
    const unique = [...new Set(oids)];
    for (let i = 0; i < unique.length; i += 1000) {
      const rows = await q
        .selectFrom('git_objects')
        .select(['oid', 'type', 'body'])
        .where('oid', 'in', unique.slice(i, i + 1000))
        .execute();
      for (const r of rows) found.set(r.oid, { oid: r.oid, type: r.type as GitObjectType, body: r.body });
    }
    return found;
  }

  /** The file map of a commit: every path and its UTF-8 content. */
  async readFiles(commitOid: string, q: Queryable = this.db): Promise<Record<string, string>> {
    const cached = this.treeCache.get(commitOid);
    if (cached) return { ...cached };
    const commitObj = (await this.get([commitOid], q)).get(commitOid);
    if (!commitObj || commitObj.type !== 'commit') throw new Error(`commit ${commitOid} is missing from the object store`);
    const files: Record<string, string> = {};
    // Breadth-first, one query per tree level rather than one per object.
    let level: { prefix: string; oid: string }[] = [{ prefix: '', oid: parseCommit(commitObj.body).tree }];
    while (level.length > 0) {
      const trees = await this.get(level.map((l) => l.oid), q);
      const next: { prefix: string; oid: string }[] = [];
      const blobs: { path: string; oid: string }[] = [];
      for (const { prefix, oid } of level) {
        const t = trees.get(oid);
        if (!t) throw new Error(`tree ${oid} is missing from the object store`);
        for (const e of parseTree(t.body)) {
          if (e.kind === 'dir') next.push({ prefix: `${prefix}${e.name}/`, oid: e.oid });
          else blobs.push({ path: `${prefix}${e.name}`, oid: e.oid });
        }
      }
      const contents = await this.get(blobs.map((b) => b.oid), q);
      for (const b of blobs) {
        const o = contents.get(b.oid);
        if (!o) throw new Error(`blob ${b.oid} is missing from the object store`);
        files[b.path] = o.body.toString('utf8');
      }
      level = next;
    }
    this.remember(commitOid, files);
    return { ...files };
  }

  /**
   * Every object reachable from `commits` (commits, trees, blobs), for a pack. Passing every commit of
   * a history at once fetches them in one query instead of one per generation.
   */
  async reachable(commits: string[]): Promise<GitObject[]> {
    const seen = new Map<string, GitObject>();
    let frontier = [...new Set(commits)];
    while (frontier.length > 0) {
      const objects = await this.get(frontier.filter((oid) => !seen.has(oid)));
      const next: string[] = [];
      for (const o of objects.values()) {
        seen.set(o.oid, o);
        if (o.type === 'commit') {
          const c = parseCommit(o.body);
          next.push(c.tree, ...c.parents);
        } else if (o.type === 'tree') {
          for (const e of parseTree(o.body)) next.push(e.oid);
        }
      }
      frontier = [...new Set(next)].filter((oid) => !seen.has(oid));
    }
    return [...seen.values()];
  }

  private remember(oid: string, files: Record<string, string>): void {
    if (this.treeCache.size >= this.cacheSize) this.treeCache.delete(this.treeCache.keys().next().value!);
    this.treeCache.set(oid, files);
  }
}
