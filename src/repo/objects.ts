// Git objects in git's own format: an object's id is the SHA-1 of "<type> <size>\0<body>", so the
// objects Hangar stores are byte-identical to the ones `git` would write, and a clone verifies.
import { createHash } from 'node:crypto';

/** The object types an agent repository uses (no tags). */
export type GitObjectType = 'blob' | 'tree' | 'commit';

/** One git object: its id (40 hex digits), type and body (without the "type size\0" header). */
export interface GitObject {
  oid: string;
  type: GitObjectType;
  body: Buffer;
}

/** The object of `type` with `body`, its id computed. */
export function gitObject(type: GitObjectType, body: Buffer): GitObject {
  const hash = createHash('sha1');
  hash.update(`${type} ${body.length}\0`);
  hash.update(body);
  return { oid: hash.digest('hex'), type, body };
}

/** A blob holding `content` as UTF-8. */
export function blob(content: string): GitObject {
  return gitObject('blob', Buffer.from(content, 'utf8'));
}

/** One entry of a tree object. */
export interface TreeEntry {
  name: string;
  oid: string;
  kind: 'file' | 'dir';
}

/** A tree object. Entries are sorted the way git sorts them (a folder compares as "name/"). */
export function tree(entries: TreeEntry[]): GitObject {
  const sorted = [...entries].sort((a, b) => Buffer.compare(sortKey(a), sortKey(b)));
  const parts: Buffer[] = [];
  for (const e of sorted) {
    parts.push(Buffer.from(`${e.kind === 'dir' ? '40000' : '100644'} ${e.name}\0`, 'utf8'), Buffer.from(e.oid, 'hex'));
  }
  return gitObject('tree', Buffer.concat(parts));
}

function sortKey(e: TreeEntry): Buffer {
  return Buffer.from(e.kind === 'dir' ? `${e.name}/` : e.name, 'utf8');
}

/** The entries of a tree object's body. */
export function parseTree(body: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let i = 0;
  while (i < body.length) {
    const space = body.indexOf(0x20, i);
    const nul = body.indexOf(0, space);
    const mode = body.toString('utf8', i, space);
    const name = body.toString('utf8', space + 1, nul);
    const oid = body.toString('hex', nul + 1, nul + 21);
    entries.push({ name, oid, kind: mode === '40000' ? 'dir' : 'file' });
    i = nul + 21;
  }
  return entries;
}

/** Who made a commit, and when. */
export interface Signature {
  name: string;
  email: string;
  at: Date;
}

/** The fields of a commit. */
export interface CommitFields {
  tree: string;
  parent: string | null;
  author: Signature;
  message: string;
}

/** A commit object (author and committer are the same person; times in UTC). */
export function commit(fields: CommitFields): GitObject {
  const sig = signature(fields.author);
  const lines = [`tree ${fields.tree}`];
  if (fields.parent) lines.push(`parent ${fields.parent}`);
  lines.push(`author ${sig}`, `committer ${sig}`, '', fields.message.endsWith('\n') ? fields.message : `${fields.message}\n`);
  return gitObject('commit', Buffer.from(lines.join('\n'), 'utf8'));
}

function signature(s: Signature): string {
  // Angle brackets and newlines would break the header line; git itself strips them too.
  const clean = (v: string) => v.replace(/[<>\n]/g, '').trim() || 'unknown';
  return `${clean(s.name)} <${clean(s.email)}> ${Math.floor(s.at.getTime() / 1000)} +0000`;
}

/** The tree and parent of a commit body. */
export function parseCommit(body: Buffer): { tree: string; parents: string[]; message: string } {
  const text = body.toString('utf8');
  const split = text.indexOf('\n\n');
  const header = split >= 0 ? text.slice(0, split) : text;
  const parents: string[] = [];
  let treeOid = '';
  for (const line of header.split('\n')) {
    if (line.startsWith('tree ')) treeOid = line.slice(5);
    else if (line.startsWith('parent ')) parents.push(line.slice(7));
  }
  return { tree: treeOid, parents, message: split >= 0 ? text.slice(split + 2) : '' };
}

/**
 * The tree objects (and blobs) of a flat file map. Throws `PathClashError` when a path is both a
 * file and a folder (`a` and `a/b`).
 */
export function buildTree(files: Record<string, string>): { root: string; objects: GitObject[] } {
  interface Dir {
    files: Map<string, string>;
    dirs: Map<string, Dir>;
  }
  const rootDir: Dir = { files: new Map(), dirs: new Map() };
  const objects = new Map<string, GitObject>();
  for (const [path, content] of Object.entries(files)) {
    const segments = path.split('/');
    let dir = rootDir;
    for (let i = 0; i < segments.length - 1; i++) {
      const seg = segments[i]!;
      if (dir.files.has(seg)) throw new PathClashError(segments.slice(0, i + 1).join('/'));
      let next = dir.dirs.get(seg);
      if (!next) dir.dirs.set(seg, (next = { files: new Map(), dirs: new Map() }));
      dir = next;
    }
    const leaf = segments[segments.length - 1]!;
    if (dir.dirs.has(leaf)) throw new PathClashError(path);
    const b = blob(content);
    objects.set(b.oid, b);
    dir.files.set(leaf, b.oid);
  }
  const write = (dir: Dir): string => {
    const entries: TreeEntry[] = [];
    for (const [name, oid] of dir.files) entries.push({ name, oid, kind: 'file' });
    for (const [name, sub] of dir.dirs) entries.push({ name, oid: write(sub), kind: 'dir' });
    const t = tree(entries);
    objects.set(t.oid, t);
    return t.oid;
  };
  const root = write(rootDir);
  return { root, objects: [...objects.values()] };
}

/** A path that is a file in one place and a folder in another. */
export class PathClashError extends Error {
  override name = 'PathClashError';
  constructor(readonly path: string) {
    super(`${path} is both a file and a folder`);
  }
}
