// Named prepared statements for the statements a connection sends again and again.
//
// Every statement with parameters goes to PostgreSQL through the extended protocol. Unnamed, the
// server parses, analyses and plans it on every execution. For the run path's large statements
// (the start, the claim, the settle, the checkpoints) that is a large part of PostgreSQL's CPU per
// run (`npm run bench:roundtrips`, `postgres_cpu_ms_per_run`). Named, a connection parses a
// statement once and PostgreSQL may reuse its plan.
//
// pg names a statement only when the caller does, and Kysely and the LangGraph checkpointer never
// do. This client names a parameterised statement once this connection has sent the same text
// `PREPARE_AFTER` times. So one-off texts (an `IN` list of some length) stay unnamed, and at most
// `MAX_PREPARED` statements are kept per connection: the server keeps each one's plan in the
// backend's memory. A statement with more than `MAX_PARAMETERS` parameters (a multi-row insert,
// whose text changes with its number of rows) is never prepared: it would take a slot and a large
// plan for each size.
import { createHash } from 'node:crypto';
import pg from 'pg';

/** Uses of one text on one connection before it is prepared. */
const PREPARE_AFTER = 2;
/** Prepared statements kept per connection. */
const MAX_PREPARED = 128;
/** Statements with more parameters than this are not prepared. */
const MAX_PARAMETERS = 64;
/** Texts counted per connection; the counts start over past this. */
const MAX_COUNTED = 2_048;

/**
 * A pg client that prepares the statements it sends repeatedly (see above).
 *
 * A prepared plan can stop fitting its tables: another replica's migration changed a table under a
 * `SELECT *` or `RETURNING *` ("cached plan must not change result type"). The client then stops
 * naming that text on this connection. Outside a transaction the failed statement did nothing, so
 * it is sent again, unnamed, and the caller never sees the failure; inside one, the transaction is
 * lost and the caller gets the error, once.
 */
export class PreparingClient extends pg.Client {
  private readonly uses = new Map<string, number>();
  private readonly names = new Map<string, string>();
  private readonly unnamed = new Set<string>();
  /** The server's transaction status at its last ReadyForQuery: `I` idle, `T` in a transaction, `E` in a failed one. */
  private transactionStatus: string | undefined;

  constructor(config?: string | pg.ClientConfig) {
    super(config);
    (this as unknown as { connection: NodeJS.EventEmitter }).connection.on('readyForQuery', (message: { status?: string }) => {
      this.transactionStatus = message.status;
    });
  }

  /**
   * Connect, then keep planning every execution with its parameters (`plan_cache_mode`). After five
   * executions PostgreSQL may switch a prepared statement to a generic plan, chosen without the
   * parameters' values and kept however the tables change. The worker's claim got one while the queue
   * was short; in a burst of 1,000 queued runs it made the executor thread claim 7 runs a second
   * instead of 43 (`HANGAR_EXECUTOR=thread npm run bench:load`). Parsing once is what we keep.
   */
  override connect(): Promise<pg.Client>;
  override connect(callback: (error: Error | null, client?: pg.Client) => void): void;
  override connect(callback?: (error: Error | null, client?: pg.Client) => void): Promise<pg.Client> | void {
    const connected = super.connect().then(async () => {
      await super.query('SET plan_cache_mode = force_custom_plan');
      return this;
    });
    if (!callback) return connected;
    connected.then(
      (client) => callback(null, client),
      (error: Error) => callback(error),
    );
  }

  // pg's overloads (text, values, callback; config; submittable) pass through unchanged, except
  // that a repeated statement with parameters gains a name.
  override query(...args: unknown[]): never {
    const [first, second] = args;
    let text: string | undefined;
    let config: Record<string, unknown> | undefined;
    if (typeof first === 'string' && Array.isArray(second) && second.length > 0 && second.length <= MAX_PARAMETERS) {
      text = first;
      config = { text: first, values: second };
    } else if (first && typeof first === 'object' && !('submit' in first) && !('name' in first)) {
      const c = first as { text?: unknown; values?: unknown };
      const values = Array.isArray(second) ? second : c.values;
      if (typeof c.text === 'string' && Array.isArray(values) && values.length > 0 && values.length <= MAX_PARAMETERS) {
        text = c.text;
        config = { ...(first as Record<string, unknown>), values };
      }
    }
    const name = text === undefined ? undefined : this.nameFor(text);
    if (text === undefined || name === undefined || config === undefined) return (super.query as (...a: unknown[]) => never)(...args);
    const send = (c: Record<string, unknown>) => (super.query as (c: Record<string, unknown>) => Promise<unknown>).call(this, c);
    const outsideTransaction = this.transactionStatus === 'I';
    const result = send({ ...config, name }).catch((error: unknown) => {
      const e = error as { code?: string; message?: string };
      if (e.code !== '0A000' || !/cached plan/.test(e.message ?? '')) throw error;
      this.names.delete(text);
      this.unnamed.add(text);
      if (!outsideTransaction) throw error;
      return send(config);
    });
    const callback = args.find((a) => typeof a === 'function') as ((error: Error | null, result?: unknown) => void) | undefined;
    if (!callback) return result as never;
    result.then(
      (r) => callback(null, r),
      (e: Error) => callback(e),
    );
    return undefined as never;
  }

  private nameFor(text: string): string | undefined {
    const known = this.names.get(text);
    if (known) return known;
    if (this.unnamed.has(text) || this.names.size >= MAX_PREPARED) return undefined;
    const used = (this.uses.get(text) ?? 0) + 1;
    if (used < PREPARE_AFTER) {
      if (this.uses.size >= MAX_COUNTED) this.uses.clear();
      this.uses.set(text, used);
      return undefined;
    }
    this.uses.delete(text);
    const name = `hangar_${createHash('sha1').update(text).digest('base64url').slice(0, 22)}`;
    this.names.set(text, name);
    return name;
  }
}
