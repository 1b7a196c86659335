// LangGraph's own storage on Hangar's database: checkpoints (PostgresSaver) and the long-term store
// (PostgresStore), both in the `langgraph` schema so they never mix with Hangar's tables.
import type { RunnableConfig } from '@langchain/core/runnables';
import { emptyCheckpoint, WRITES_IDX_MAP, type ChannelVersions, type Checkpoint, type CheckpointMetadata, type PendingWrite } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { PostgresStore } from '@langchain/langgraph-checkpoint-postgres/store';
import type pg from 'pg';
import { survivePoolErrors } from '../db/index.js';
import { reconnecting } from '../db/reconnect.js';

/** The schema of LangGraph's tables. */
export const LANGGRAPH_SCHEMA = 'langgraph';

const SETUP_LOCK = 7_246_004; // arbitrary, constant: "hangar langgraph setup"

/**
 * A `configurable` key of a run's config: the id (a uuid6 made when the run started) of an empty root
 * checkpoint to write before the run's first checkpoint when the thread has none yet, in the same
 * statement. With `exit` durability a run writes one checkpoint, when it ends, whose parent is the
 * checkpoint it started from; a thread's first run started from none. With this root (LangGraph's own
 * input checkpoint of step -1, `source: input`) its input can still be edited: a fork from before it,
 * `useStream`'s `firstSeenState.parent_checkpoint`. It carries the run's id, so a rollback of the run
 * deletes it too. (Two underscores: LangChain copies other configurable keys into traces' metadata.)
 */
export const ROOT_CHECKPOINT_KEY = '__hangar_root_checkpoint_id';

/**
 * PostgresSaver writing a checkpoint in one statement: the library sends BEGIN, one INSERT per changed
 * channel, the checkpoint's INSERT and COMMIT (about eleven round trips for a model turn); here the
 * blobs go as arrays in a CTE of the checkpoint's INSERT. One statement is one transaction, so a
 * crash leaves the checkpoint and its blobs written together or not at all, as before. The tables,
 * conflict rules and values are the library's own; reads are unchanged.
 */
export class SingleStatementSaver extends PostgresSaver {
  private readonly sql: string;
  /** The same, written only while the run's lease is the writer's (`fence`). */
  private readonly fencedSql: string;
  /** Pending writes in one statement: `[fenced][upsert]` (`putWrites`). */
  private readonly writesSql: [[string, string], [string, string]];
  /** Runs executing in this process, and the lease each executes under (`fence`). */
  private readonly leases = new Map<string, CheckpointLease>();

  constructor(
    private readonly db: pg.Pool,
    schema: string,
  ) {
    super(db, undefined, { schema });
    const blobs = `"${schema}".checkpoint_blobs`;
    const checkpoints = `"${schema}".checkpoints`;
    // The checkpoint ($7, parent $8), after the thread's root checkpoint ($11, $12, $13) when there is
    // one to write (ROOT_CHECKPOINT_KEY: the first checkpoint of a run that started the thread; else $11
    // is null and only the checkpoint is written).
    const rows = `(VALUES ($11::text, NULL::text, $12::jsonb, $13::jsonb), ($7::text, COALESCE($8::text, $11::text), $9::jsonb, $10::jsonb)) AS r(id, parent, c, m)`;
    // As RunEventHub.write fences a run's events: the run's row is locked (FOR KEY SHARE) and checked
    // before anything is written, so a sweep handing the run on either waits for this statement or
    // has handed it on first, and then nothing is written. The run, worker and attempt are $n…$n+2.
    const held = (n: number) => `held AS MATERIALIZED (
        SELECT id FROM runs WHERE id = $${n}::uuid AND lease_owner = $${n + 1} AND attempt = $${n + 2}
          -- A cancelled run's lease holds its thread only until it expires: then the next run may execute.
          AND (status = 'running' OR lease_expires_at > now())
        FOR KEY SHARE
      )`;
    const ifHeld = (fenced: boolean) => (fenced ? 'AND EXISTS (SELECT 1 FROM held)' : '');
    const checkpointSql = (fenced: boolean) => `WITH ${fenced ? `${held(14)}, ` : ''}blobs AS (
        INSERT INTO ${blobs} (thread_id, checkpoint_ns, channel, version, type, blob)
        SELECT $1, $2, c, v, t, b FROM unnest($3::text[], $4::text[], $5::text[], $6::bytea[]) AS x(c, v, t, b)
        WHERE true ${ifHeld(fenced)}
        ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
      )
      INSERT INTO ${checkpoints} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
      SELECT $1, $2, id, parent, c, m FROM ${rows} WHERE id IS NOT NULL ${ifHeld(fenced)}
      ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`;
    this.sql = checkpointSql(false);
    this.fencedSql = checkpointSql(true);
    // A task's pending writes (the library sends BEGIN, one INSERT per write and COMMIT) as arrays in
    // one INSERT; fenced as the checkpoint is, so a stalled worker cannot leave writes (an interrupt, a
    // task's output) under the checkpoint the next attempt resumes from. The conflict rules are the
    // library's: writes to its special channels replace the task's earlier ones, others are kept.
    const writes = `"${schema}".checkpoint_writes`;
    const insert = (upsert: boolean, fenced: boolean) => `INSERT INTO ${writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
        SELECT $1, $2, $3, $4, i, c, t, b FROM unnest($5::int[], $6::text[], $7::text[], $8::bytea[]) AS x(i, c, t, b) WHERE true ${ifHeld(fenced)}
        ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO ${upsert ? 'UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob' : 'NOTHING'}`;
    // Fenced, it always returns one row: whether the lease was held (the writes may all have been there).
    const writesSql = (fenced: boolean, upsert: boolean) => (fenced ? `WITH ${held(9)}, written AS (${insert(upsert, true)}) SELECT EXISTS (SELECT 1 FROM held) AS held` : insert(upsert, false));
    this.writesSql = [
      [writesSql(false, false), writesSql(false, true)],
      [writesSql(true, false), writesSql(true, true)],
    ];
  }

  /**
   * Write the checkpoints and pending writes of run `runId` (its graph's, subagents' included: they carry its id) only
   * while its lease is `lease`'s (for a cancelled run, until that lease expires: the thread's next run
   * may then start): a worker that stalled past its lease and was replaced by the next
   * attempt cannot fork the thread's state under it (its write fails, and so does its run there).
   * Returns what ends the fence (the run's execution here is over).
   */
  fence(runId: string, lease: CheckpointLease): () => void {
    this.leases.set(runId, lease);
    return () => {
      if (this.leases.get(runId) === lease) this.leases.delete(runId);
    };
  }

  /** The run a write comes from (LangGraph puts its id in every config's metadata), and the lease it is fenced by here. */
  private writer(config: RunnableConfig): { runId: string | undefined; lease: CheckpointLease | undefined } {
    const runId = (config.metadata as { run_id?: unknown } | undefined)?.run_id;
    return typeof runId === 'string' ? { runId, lease: this.leases.get(runId) } : { runId: undefined, lease: undefined };
  }

  /**
   * The next version of a channel: one more than `current`, plus a random fraction. The library counts
   * 1, 2, 3…, so two runs from the same checkpoint (a fork: a run from a past checkpoint) would write
   * their values under the same versions, and a blob being kept on conflict, the second would read
   * the first's values. As LangGraph's Python savers do (`"<n+1>.<random>"`), each write gets its own
   * version; it stays a number, so versions already stored (integers) compare with it as before.
   */
  override getNextVersion(current: number | undefined): number {
    const base = typeof current === 'number' ? Math.floor(current) : 0;
    // In (0, 1): never the integer itself, and never the next one.
    return base + 1 + (Math.floor(Math.random() * 999_999) + 1) / 1_000_000;
  }

  // Every statement of the saver is safe to repeat (reads and upserts): a connection lost under one
  // (a restarted database) costs the run a retry, not its life.
  override getTuple(config: RunnableConfig): ReturnType<PostgresSaver['getTuple']> {
    return reconnecting(() => super.getTuple(config));
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    if (writes.length === 0) return;
    const { thread_id, checkpoint_ns = '', checkpoint_id } = (config.configurable ?? {}) as { thread_id?: string; checkpoint_ns?: string; checkpoint_id?: string };
    if (thread_id === undefined || checkpoint_id === undefined) throw new Error('pending writes need the thread_id and checkpoint_id of their checkpoint in "configurable"');
    const upsert = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    let rows = await this._dumpWrites(thread_id, checkpoint_ns, checkpoint_id, taskId, writes);
    // The library writes them one after the other: a later write to the same index replaces (upsert) or
    // loses to (insert) an earlier one. One statement may not touch a row twice, so that is settled here.
    if (upsert) rows = [...new Map(rows.map((r) => [r[4], r])).values()];
    const values = [thread_id, checkpoint_ns, checkpoint_id, taskId, rows.map((r) => r[4]), rows.map((r) => r[5]), rows.map((r) => r[6]), rows.map((r) => r[7])];
    const { runId, lease } = this.writer(config);
    if (!lease) {
      await reconnecting(() => this.db.query(this.writesSql[0][upsert ? 1 : 0], values));
      return;
    }
    const { rows: held } = await reconnecting(() => this.db.query<{ held: boolean }>(this.writesSql[1][upsert ? 1 : 0], [...values, runId, lease.workerId, lease.attempt]));
    if (held[0]?.held !== true) throw new CheckpointRefused(runId!);
  }

  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    if (config.configurable === undefined) throw new Error(`Missing "configurable" field in "config" param`);
    const { thread_id, checkpoint_ns = '', checkpoint_id } = config.configurable as { thread_id: string; checkpoint_ns?: string; checkpoint_id?: string };
    // The run that wrote the checkpoint, as LangGraph's Python runtime records it (LangGraph JS keeps
    // only step, source and parents): what a rollback deletes, and how a retried run knows its own.
    const { runId, lease } = this.writer(config);
    const withRun = (m: CheckpointMetadata) => (runId !== undefined ? ({ ...m, run_id: runId } as CheckpointMetadata) : m);
    // The thread's first checkpoint, of a run that asked for a root before it (`ROOT_CHECKPOINT_KEY`),
    // whose id sorts before this one's (it was made when the run started).
    const rootId = (config.configurable as Record<string, unknown>)[ROOT_CHECKPOINT_KEY];
    const root = checkpoint_id === undefined && checkpoint_ns === '' && metadata.source !== 'input' && typeof rootId === 'string' && rootId < checkpoint.id ? rootId : null;
    const [blobs, serializedMetadata, rootMetadata] = await Promise.all([
      this._dumpBlobs(thread_id, checkpoint_ns, checkpoint.channel_values, newVersions),
      this._dumpMetadata(withRun(metadata)),
      root === null ? null : this._dumpMetadata(withRun({ source: 'input', step: -1, parents: {} })),
    ]);
    const values = [
      thread_id,
      checkpoint_ns,
      blobs.map((b) => b[2]),
      blobs.map((b) => b[3]),
      blobs.map((b) => b[4]),
      blobs.map((b) => b[5] ?? null),
      checkpoint.id,
      checkpoint_id,
      this._dumpCheckpoint(checkpoint),
      serializedMetadata,
      root,
      root === null ? null : { ...this._dumpCheckpoint(emptyCheckpoint()), id: root },
      rootMetadata,
    ];
    if (!lease) await reconnecting(() => this.db.query(this.sql, values));
    else {
      const { rowCount } = await reconnecting(() => this.db.query(this.fencedSql, [...values, runId, lease.workerId, lease.attempt]));
      if (rowCount === 0) throw new CheckpointRefused(runId!);
    }
    return { configurable: { thread_id, checkpoint_ns, checkpoint_id: checkpoint.id } };
  }
}

/** The lease a run executes under here: its worker and attempt. */
export interface CheckpointLease {
  workerId: string;
  attempt: number;
}

/** A checkpoint of a run whose lease is no longer this worker's (it was handed on): not written. */
export class CheckpointRefused extends Error {
  constructor(runId: string) {
    super(`the checkpoint of run ${runId} was not written: the run is no longer held by this worker (its lease expired and it was handed on)`);
    this.name = 'CheckpointRefused';
  }
}

/** What `openLangGraphStorage` reaches inside PostgresStore: its pool and the helper every operation goes through. */
interface StoreCore {
  pool: pg.Pool;
  withClient<T>(operation: (client: pg.PoolClient) => Promise<T>): Promise<T>;
}

/** Checkpointer and store, ready to use. */
export interface LangGraphStorage {
  checkpointer: SingleStatementSaver;
  store: PostgresStore;
  close(): Promise<void>;
}

/** Open (and on first use create) LangGraph's tables; replicas starting together take turns. */
export async function openLangGraphStorage(url: string, pool: pg.Pool): Promise<LangGraphStorage> {
  const checkpointer = new SingleStatementSaver(pool, LANGGRAPH_SCHEMA);
  const store = new PostgresStore({ connectionOptions: { connectionString: url, max: 10 }, schema: LANGGRAPH_SCHEMA, ensureTables: false });
  // The store builds its own pool and leaves its errors unhandled: a connection dropped by the server
  // (a database restart, shutdown) would crash the process. The pool reconnects on use.
  const core = (store as unknown as { core: StoreCore }).core;
  survivePoolErrors(core.pool);
  // Each of the store's operations (reads, upserts, deletes) takes a client for itself and is safe to
  // repeat: a connection lost under one is retried on a fresh one, as the saver's statements are.
  const withClient = core.withClient.bind(core);
  core.withClient = (operation) => reconnecting(() => withClient(operation));
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

/**
 * Delete what run `runId` wrote into thread `threadId`'s checkpoints (LangGraph puts the run id in
 * every checkpoint's metadata), so that the thread's state is as if the run never started: its
 * checkpoints (every namespace, so subagents' too), their pending writes, and the channel values only
 * they referenced. Those must go too: channel versions count up from the parent checkpoint, so the
 * next run would write the same versions and, the blob being kept on conflict, read the old values.
 */
export async function rollbackRunCheckpoints(pool: pg.Pool, threadId: string, runId: string): Promise<number> {
  const s = `"${LANGGRAPH_SCHEMA}"`;
  const { rows } = await pool.query<{ n: number }>(
    `WITH doomed AS (
       DELETE FROM ${s}.checkpoints WHERE thread_id = $1 AND metadata ->> 'run_id' = $2
       RETURNING checkpoint_ns, checkpoint_id, checkpoint
     ), writes AS (
       DELETE FROM ${s}.checkpoint_writes w USING doomed d
       WHERE w.thread_id = $1 AND w.checkpoint_ns = d.checkpoint_ns AND w.checkpoint_id = d.checkpoint_id
     ), doomed_versions AS (
       SELECT DISTINCT d.checkpoint_ns, v.key AS channel, v.value #>> '{}' AS version
       FROM doomed d, jsonb_each(d.checkpoint -> 'channel_versions') v
     ), kept_versions AS (
       SELECT c.checkpoint_ns, v.key AS channel, v.value #>> '{}' AS version
       FROM ${s}.checkpoints c, jsonb_each(c.checkpoint -> 'channel_versions') v
       WHERE c.thread_id = $1 AND (c.metadata ->> 'run_id') IS DISTINCT FROM $2
     ), blobs AS (
       DELETE FROM ${s}.checkpoint_blobs b USING doomed_versions dv
       WHERE b.thread_id = $1 AND b.checkpoint_ns = dv.checkpoint_ns AND b.channel = dv.channel AND b.version = dv.version
         AND NOT EXISTS (SELECT 1 FROM kept_versions k WHERE k.checkpoint_ns = dv.checkpoint_ns AND k.channel = dv.channel AND k.version = dv.version)
     )
     SELECT count(*)::int AS n FROM doomed`,
    [threadId, runId],
  );
  return rows[0]?.n ?? 0;
}
