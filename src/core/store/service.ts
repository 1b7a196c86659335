// The LangGraph long-term store (where agents keep /memories/) as the HTTP API sees it: every
// namespace a caller names is relative to its workspace, so no request can reach another
// workspace's items. Within a workspace, a principal's own memories (`[agent_id, 'memories', 'user',
// <principal label>]`) are reachable by that principal and by admins only.
import { type Caller, requireWrite } from '../caller.js';
import { HangarError, invalid, type FieldIssue } from '../errors.js';

/** The first labels of every namespace Hangar writes into the store. */
export const STORE_ROOT = 'hangar';

/** The namespace (in the store) of an agent's durable memories. */
export function memoryNamespace(workspaceId: string, agentId: string): string[] {
  return [STORE_ROOT, workspaceId, agentId, 'memories'];
}

/**
 * A principal as a namespace label. Store labels allow neither periods nor `%`, `_` and `\\` (the
 * PostgreSQL store matches prefixes with LIKE), and e-mail addresses have periods: base64url, with
 * its `_` written `~`, keeps principals distinct and reversible. (Labels without a `_` are plain
 * base64url, as before; labels with one could never be stored.)
 */
export function principalLabel(principal: string): string {
  return `p-${Buffer.from(principal === '' ? 'anonymous' : principal, 'utf8').toString('base64url').replaceAll('_', '~')}`;
}

/** Characters a store label cannot hold: the PostgreSQL store matches namespace prefixes with LIKE. */
const LIKE_RESERVED = /[%_\\]/;

/** An item of the store. */
export interface StoreItem {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

/** What the store service needs of LangGraph's store (PostgresStore satisfies it). */
export interface StorePort {
  get(namespace: string[], key: string): Promise<StoreItem | null>;
  put(namespace: string[], key: string, value: Record<string, unknown>): Promise<void>;
  delete(namespace: string[], key: string): Promise<void>;
  search(namespacePrefix: string[], options?: { filter?: Record<string, unknown>; limit?: number; offset?: number }): Promise<StoreItem[]>;
  listNamespaces(options?: { prefix?: string[]; suffix?: string[]; maxDepth?: number; limit?: number; offset?: number }): Promise<string[][]>;
}

const MAX_LABELS = 20;
const MAX_LABEL = 256;
const MAX_KEY = 1024;
// PostgreSQL's btree entries hold at most 2,704 bytes, and the store's primary key is (namespace
// path, key): the path (labels joined by periods, in UTF-8) and the key each get 1 KiB.
const MAX_NAMESPACE_BYTES = 1024;
const MAX_KEY_BYTES = 1024;
/** How many store rows a filtered listing looks at, at most, before it gives up (a 400). */
const MAX_SCAN = 10_000;
const SCAN_PAGE = 1000;

/** Store operations for one caller. */
export class StoreService {
  constructor(private readonly store: () => StorePort) {}

  /** `from`: where the request carried the namespace and key, for the `loc` of errors (GET: the query). */
  async get(caller: Caller, namespace: string[], key: string, from: Where = 'body'): Promise<StoreItem | null> {
    this.check(caller, namespace, 'namespace', false, true, from);
    checkKey(key, from);
    const item = await this.store().get(this.absolute(caller, namespace), key);
    return item ? this.relative(caller, item) : null;
  }

  async put(caller: Caller, namespace: string[], key: string, value: Record<string, unknown>): Promise<void> {
    requireWrite(caller);
    this.check(caller, namespace, 'namespace');
    checkKey(key);
    await this.store().put(this.absolute(caller, namespace), key, value);
  }

  async delete(caller: Caller, namespace: string[], key: string): Promise<void> {
    requireWrite(caller);
    this.check(caller, namespace, 'namespace');
    checkKey(key);
    await this.store().delete(this.absolute(caller, namespace), key);
  }

  /** Items under a namespace prefix (the whole workspace for `[]`), newest change first. */
  async search(caller: Caller, prefix: string[], options: { filter?: Record<string, unknown> | undefined; limit: number; offset: number }): Promise<StoreItem[]> {
    this.check(caller, prefix, 'namespace_prefix', true);
    const absolute = this.absolute(caller, prefix);
    const visible = (item: StoreItem) => this.mayReach(caller, item.namespace.slice(2));
    const filter = options.filter && Object.keys(options.filter).length > 0 ? options.filter : undefined;
    const page = (limit: number, offset: number) => this.store().search(absolute, { ...(filter ? { filter } : {}), limit, offset });
    const items = this.mayReachAllUnder(caller, prefix) ? await page(options.limit, options.offset) : await scan(page, visible, options.limit, options.offset);
    return items.map((item) => this.relative(caller, item));
  }

  /** Namespaces under a prefix (relative to the workspace). */
  async listNamespaces(
    caller: Caller,
    options: { prefix?: string[] | undefined; suffix?: string[] | undefined; maxDepth?: number | undefined; limit: number; offset: number },
  ): Promise<string[][]> {
    const prefix = options.prefix ?? [];
    this.check(caller, prefix, 'prefix', true);
    if (options.suffix) this.check(caller, options.suffix, 'suffix', true, false);
    const absolute = this.absolute(caller, prefix);
    const page = (limit: number, offset: number) =>
      this.store().listNamespaces({
        prefix: absolute,
        ...(options.suffix?.length ? { suffix: options.suffix } : {}),
        limit,
        offset,
      });
    const visible = (ns: string[]) => this.mayReach(caller, ns.slice(2));
    if (options.maxDepth !== undefined) {
      // Deeper namespaces are truncated to `maxDepth` labels (LangGraph's definition), not left out;
      // PostgresStore leaves them out, so the truncation is done here over every namespace found.
      // Bounded like any filtered listing (`scan`): at most MAX_SCAN namespaces are read.
      const truncated = new Map<string, string[]>();
      for (let offset = 0; ; offset += SCAN_PAGE) {
        if (offset >= MAX_SCAN) throw scanLimit();
        const batch = await page(SCAN_PAGE, offset);
        for (const ns of batch) {
          if (!visible(ns)) continue;
          const cut = ns.slice(2, 2 + options.maxDepth);
          truncated.set(JSON.stringify(cut), cut);
        }
        if (batch.length < SCAN_PAGE) break;
      }
      return [...truncated.values()].slice(options.offset, options.offset + options.limit);
    }
    const found = this.mayReachAllUnder(caller, prefix) ? await page(options.limit, options.offset) : await scan(page, visible, options.limit, options.offset);
    return found.map((ns) => ns.slice(2));
  }

  private absolute(caller: Caller, namespace: string[]): string[] {
    return [STORE_ROOT, caller.workspaceId, ...namespace];
  }

  private relative(caller: Caller, item: StoreItem): StoreItem {
    return { ...item, namespace: item.namespace.slice(2) };
  }

  /**
   * Whether the caller may reach a namespace: everything of its workspace, except another
   * principal's memories (`[agent, 'memories', 'user', label, …]`) unless it is an admin.
   */
  private mayReach(caller: Caller, namespace: string[]): boolean {
    if (caller.role === 'admin') return true;
    if (namespace.length < 4 || namespace[1] !== 'memories' || namespace[2] !== 'user') return true;
    return namespace[3] === principalLabel(caller.principal);
  }

  /** Whether nothing under `prefix` can be out of the caller's reach (so no filtering is needed). */
  private mayReachAllUnder(caller: Caller, prefix: string[]): boolean {
    return caller.role === 'admin' || prefix.length >= 4 || (prefix.length >= 2 && prefix[1] !== 'memories') || (prefix.length >= 3 && prefix[2] !== 'user');
  }

  private check(caller: Caller, namespace: string[], field: string, mayBeEmpty = false, scoped = true, from: Where = 'body'): void {
    const issues: FieldIssue[] = [];
    // A body carries the labels as an array (each has an index); a query, as one dotted string.
    const labelAt = (i: number): (string | number)[] => (from === 'body' ? ['body', field, i] : [from, field]);
    if (!mayBeEmpty && namespace.length === 0) issues.push({ loc: [from, field], msg: 'must name at least one label', type: 'value_error' });
    if (namespace.length > MAX_LABELS) issues.push({ loc: [from, field], msg: `at most ${MAX_LABELS} labels`, type: 'value_error' });
    namespace.forEach((label, i) => {
      if (label === '') issues.push({ loc: labelAt(i), msg: 'a namespace label must not be empty', type: 'value_error' });
      else if (label.includes('.')) issues.push({ loc: labelAt(i), msg: 'a namespace label cannot contain a period (".")', type: 'value_error' });
      else if (LIKE_RESERVED.test(label)) issues.push({ loc: labelAt(i), msg: 'a namespace label cannot contain "%", "_" or "\\" (the store matches namespace prefixes with LIKE)', type: 'value_error' });
      else if (label.length > MAX_LABEL) issues.push({ loc: labelAt(i), msg: `a namespace label has at most ${MAX_LABEL} characters`, type: 'value_error' });
    });
    if (issues.length === 0 && Buffer.byteLength(namespace.join('.'), 'utf8') > MAX_NAMESPACE_BYTES) {
      issues.push({ loc: [from, field], msg: `the labels, joined by periods, are at most ${MAX_NAMESPACE_BYTES} bytes of UTF-8`, type: 'value_error' });
    }
    if (issues.length > 0) throw invalid(issues);
    if (scoped && !this.mayReach(caller, namespace)) {
      throw new HangarError('forbidden', `the namespace ${namespace.join('.')} holds another principal's memories; only that principal and admins may reach it`);
    }
  }
}

/** Where a request carried a field, as the first element of an error's `loc`. */
type Where = 'body' | 'query';

function checkKey(key: string, from: Where = 'body'): void {
  if (key === '') throw invalid([{ loc: [from, 'key'], msg: 'must not be empty', type: 'value_error' }]);
  if (key.length > MAX_KEY) throw invalid([{ loc: [from, 'key'], msg: `at most ${MAX_KEY} characters`, type: 'value_error' }]);
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) throw invalid([{ loc: [from, 'key'], msg: `at most ${MAX_KEY_BYTES} bytes of UTF-8`, type: 'value_error' }]);
}

/** `limit` entries from `offset` of what `visible` keeps, reading the store page by page. */
async function scan<T>(page: (limit: number, offset: number) => Promise<T[]>, visible: (t: T) => boolean, limit: number, offset: number): Promise<T[]> {
  const kept: T[] = [];
  let scanned = 0;
  while (kept.length < offset + limit) {
    if (scanned >= MAX_SCAN) throw scanLimit();
    const batch = await page(SCAN_PAGE, scanned);
    scanned += batch.length;
    kept.push(...batch.filter(visible));
    if (batch.length < SCAN_PAGE) break;
  }
  return kept.slice(offset, offset + limit);
}

function scanLimit(): HangarError {
  return new HangarError('store_scan_limit', `the listing looked at ${MAX_SCAN} entries without filling the page; name a narrower namespace`);
}
