// LangGraph's own storage on Hangar's database: checkpoints (PostgresSaver) and the long-term store
// (PostgresStore), both in the `langgraph` schema so they never mix with Hangar's tables.
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { PostgresStore } from '@langchain/langgraph-checkpoint-postgres/store';
import type pg from 'pg';

/** The schema of LangGraph's tables. */
export const LANGGRAPH_SCHEMA = 'langgraph';

const SETUP_LOCK = 7_246_004; // arbitrary, constant: "hangar langgraph setup"

/** Checkpointer and store, ready to use. */
export interface LangGraphStorage {
  checkpointer: PostgresSaver;
  store: PostgresStore;
  close(): Promise<void>;
}

/** Open (and on first use create) LangGraph's tables; replicas starting together take turns. */
export async function openLangGraphStorage(url: string, pool: pg.Pool): Promise<LangGraphStorage> {
  const checkpointer = new PostgresSaver(pool, undefined, { schema: LANGGRAPH_SCHEMA });
  const store = new PostgresStore({ connectionOptions: { connectionString: url, max: 10 }, schema: LANGGRAPH_SCHEMA, ensureTables: false });
  // The store builds its own pool and leaves its 'error' event unhandled: an idle connection dropped
  // by the server (a database restart, shutdown) would crash the process. The pool reconnects on use.
  (store as unknown as { core: { pool: pg.Pool } }).core.pool.on('error', () => {});
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [SETUP_LOCK]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${LANGGRAPH_SCHEMA}`);
    await checkpointer.setup();
    await store.setup();
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [SETUP_LOCK]).catch(() => {});
    client.release();
  }
  return {
    checkpointer,
    store,
    // The saver uses Hangar's pool (closed with the database); the store has its own.
    close: () => store.stop(),
  };
}
