// Opening the database: a pg pool, the typed query layer on top of it, and migrations.
import { Kysely, PostgresDialect, type CompiledQuery, type DatabaseConnection, type Driver, type QueryCompiler, type QueryResult, type TransactionSettings } from 'kysely';
import { isConnectionLost, reconnecting } from './reconnect.js';
import pg from 'pg';
import type { Database } from './schema.js';

export type { Database } from './schema.js';

// Return bigint columns (counts, sizes) as numbers: every value Hangar stores fits in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

/** The typed query layer Hangar's services use. */
export type Db = Kysely<Database>;

/** A connection pool and the query layer over it. */
export interface DatabaseHandle {
  db: Db;
  pool: pg.Pool;
  close(): Promise<void>;
}

/**
 * A pool whose connections may be cut (a restarted or failed-over database, an operator's
 * `pg_terminate_backend`) without crashing the process. pg-pool handles errors of idle clients
 * through the pool's 'error' event, which needs a listener; a client checked out between two of its
 * statements (a transaction, a LISTEN, the gap between `connect` and `query`) has none while it is
 * out, so the error would be thrown as an uncaught exception. Each client gets a listener for its
 * life: the statements it was running are rejected with the error anyway, and the pool discards the
 * client on release because it is no longer queryable.
 */
export function survivePoolErrors(pool: pg.Pool): void {
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
}

/** Open a pool on `url`. */
export function openDatabase(url: string, options: { max?: number } = {}): DatabaseHandle {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 20 });
  survivePoolErrors(pool);
  const db = new Kysely<Database>({ dialect: new ReconnectingDialect({ pool }) });
  return {
    db,
    pool,
    // Kysely's destroy ends the pool it was given.
    close: () => db.destroy(),
  };
}

/** Postgres, with reads sent again over a new connection when theirs was lost (see `ReconnectingDriver`). */
class ReconnectingDialect extends PostgresDialect {
  override createDriver(): Driver {
    return new ReconnectingDriver(super.createDriver());
  }
}

/**
 * Kysely's Postgres driver, over connections that may be lost (a restarted or failed-over database,
 * `pg_terminate_backend`):
 * - a statement waits, with backoff, for a connection the pool could not open (it has not run);
 * - a SELECT outside a transaction whose connection was lost under it runs again on a fresh one.
 * Writes are not repeated here, since whether one committed before its connection broke is unknown
 * (the few that are safe to repeat say so where they are sent); neither are statements inside a
 * transaction, which died with its connection.
 */
class ReconnectingDriver implements Driver {
  /** The pool connection under each connection handed to Kysely: swapped when a read is sent again. */
  private readonly inner = new WeakMap<DatabaseConnection, { connection: DatabaseConnection | undefined }>();
  private readonly inTransaction = new WeakSet<DatabaseConnection>();

  constructor(private readonly driver: Driver) {}

  init(): Promise<void> {
    return this.driver.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    // A statement that could not get a connection has not run: any statement may wait for one.
    const acquire = () => reconnecting(() => this.driver.acquireConnection());
    const held: { connection: DatabaseConnection | undefined } = { connection: await acquire() };
    const wrapped: DatabaseConnection = {
      executeQuery: async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
        const connection = (held.connection ??= await acquire());
        try {
          return await connection.executeQuery<R>(query);
        } catch (error) {
          if (query.query.kind !== 'SelectQueryNode' || this.inTransaction.has(connection) || !isConnectionLost(error)) throw error;
          // The broken connection goes back first (the pool discards it): a read that held it while
          // waiting for a fresh one deadlocked a pool whose every connection was cut at once.
          await this.giveBack(held);
          return reconnecting(async () => {
            const fresh = (held.connection = await this.driver.acquireConnection());
            try {
              return await fresh.executeQuery<R>(query);
            } catch (retryError) {
              await this.giveBack(held);
              throw retryError;
            }
          });
        }
      },
      streamQuery: (query, chunkSize) => held.connection!.streamQuery(query, chunkSize),
    };
    this.inner.set(wrapped, held);
    return wrapped;
  }

  /** Release the connection `held` has now to the pool, once. */
  private async giveBack(held: { connection: DatabaseConnection | undefined }): Promise<void> {
    const connection = held.connection;
    held.connection = undefined;
    if (connection) await this.driver.releaseConnection(connection);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const inner = this.unwrap(connection);
    this.inTransaction.add(inner);
    await this.driver.beginTransaction(inner, settings);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const inner = this.unwrap(connection);
    this.inTransaction.delete(inner);
    await this.driver.commitTransaction(inner);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const inner = this.unwrap(connection);
    this.inTransaction.delete(inner);
    await this.driver.rollbackTransaction(inner);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const held = this.inner.get(connection);
    if (held?.connection) this.inTransaction.delete(held.connection);
    await (held ? this.giveBack(held) : this.driver.releaseConnection(connection));
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.driver.savepoint!(this.unwrap(connection), name, compile);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.driver.rollbackToSavepoint!(this.unwrap(connection), name, compile);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    await this.driver.releaseSavepoint!(this.unwrap(connection), name, compile);
  }

  destroy(): Promise<void> {
    return this.driver.destroy();
  }

  private unwrap(connection: DatabaseConnection): DatabaseConnection {
    const held = this.inner.get(connection);
    return held ? (held.connection ?? connection) : connection;
  }
}

/**
 * Check that the operator's database (DATABASE_URL) answers, before anything else uses it: a
 * failure names the setting and the URL (its password masked), not only the driver's message
 * (`connect ECONNREFUSED …`, `password authentication failed …`).
 */
export async function reachConfiguredDatabase(pool: pg.Pool, url: string): Promise<void> {
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    throw new Error(`cannot use the database of DATABASE_URL (--database-url) ${withoutPassword(url)}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** A database URL as it may be shown: without its password. */
function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}
