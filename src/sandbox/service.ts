// The sandbox service: the one owner of sandbox rows and their lifecycle. A sandbox is created on
// first use (by scope: one per thread, or one per agent shared by its threads), is `running` while
// used, is stopped after `idle_ttl_seconds` without a command and removed (files and all)
// `delete_after_stop_seconds` after that. A sandbox whose row is gone (its thread deleted, a crash
// between the two writes) is an orphan: the sweeper removes it, and once at start.
//
// Every command holds a lease (a row of `sandbox_commands`, renewed while it runs) from before its
// sandbox is made ready until it has ended, so that every process knows what runs where, whichever
// process runs it (migrations/2000_sandbox_commands.sql):
// - the sweepers never stop or remove a sandbox with a live lease: the removal of a deleted agent's
//   sandbox, say, waits until its commands have ended. Each decision is taken holding the sandbox's
//   row lock, which a command's claim takes too, so a claim and a sweep never cross;
// - a sandbox removed on purpose (reset, or its workspace deleted) while a command runs in it: the
//   row's deletion is announced on the bus (`hangar_sandboxes`), the process running the command
//   stops it (`stoppedBy: 'removed'`), and the last command to end removes the sandbox's files or pod.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { sql, type Transaction } from 'kysely';
import { ALLOW_NETWORK_POLICY, type SandboxSpec, type SandboxStatus } from '../core/agents/backend.js';
import type { NotificationBus } from '../db/bus.js';
import type { Db } from '../db/index.js';
import type { Database } from '../db/schema.js';
import type { Logger } from '../logging.js';
import type { ExecRequest, ExecResult, SandboxDriver, SandboxRef } from './driver.js';

/** Which sandbox a command is for. */
export interface SandboxTarget {
  workspaceId: string;
  agentId: string;
  threadId: string;
  spec: SandboxSpec;
}

/** Settings of the service. */
export interface SandboxServiceOptions {
  db: Db;
  driver: SandboxDriver;
  logger: Logger;
  /** How often the sweeper stops idle sandboxes and removes expired and orphaned ones. */
  sweepMs: number;
  /**
   * How long a command's lease lasts without renewal (renewed every third of it while the command
   * runs): how long the sandbox of a process that died mid-command stays protected. Default 30 s.
   */
  leaseMs?: number | undefined;
}

/** The channel on which the deletion of a sandbox row with commands running is announced. */
export const SANDBOX_CHANNEL = 'hangar_sandboxes';

/** A command running in this process, and its lease. */
interface Lease {
  id: string;
  sandboxId: string;
  /** Its sandbox was removed while it ran: stop the command. */
  removed: boolean;
  stop(): void;
}

/** A command's lease is live (its process renews it). */
const LIVE_LEASE = sql<boolean>`EXISTS (SELECT 1 FROM sandbox_commands c WHERE c.sandbox_id = sandboxes.id AND c.expires_at > now())`;

/** Why the sweeper acts on a sandbox, as a condition on its row. */
const SWEEPS = {
  idle: sql<boolean>`status = 'running' AND last_used_at + make_interval(secs => idle_ttl_seconds) <= now()`,
  expired: sql<boolean>`status = 'stopped' AND stopped_at + make_interval(secs => delete_after_stop_seconds) <= now()`,
  // An agent-scoped sandbox whose agent is deleted can never run a command again (its threads' runs
  // are refused): its files go now, not after its idle and deletion TTLs (a week by default).
  abandoned: sql<boolean>`scope = 'agent' AND EXISTS (SELECT 1 FROM agents a WHERE a.id = sandboxes.agent_id AND a.deleted_at IS NOT NULL)`,
} as const;

/** Sandboxes of this Hangar: rows in PostgreSQL, files and processes with the driver. */
export class SandboxService {
  readonly name = 'sandboxes';
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private unavailable: Promise<string | null> | undefined;
  /** When each sandbox's disk use was last measured (measuring is a `du`: not after every command). */
  private readonly measuredAt = new Map<string, number>();
  /** Commands running now in this process, by lease id. */
  private readonly leases = new Map<string, Lease>();
  /** Who holds this process's leases (for operators reading `sandbox_commands`). */
  private readonly holder = `${os.hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  private readonly leaseMs: number;

  constructor(private readonly o: SandboxServiceOptions) {
    this.leaseMs = o.leaseMs ?? 30_000;
  }

  get driverName(): string {
    return this.o.driver.name;
  }

  /**
   * Run `request` in the sandbox of `target`, creating (or restarting) it first. The command holds a
   * lease on its sandbox from before the sandbox is made ready (a pod that takes longer to start than
   * its idle TTL is not stopped half-way through starting) until it has ended.
   */
  async exec(target: SandboxTarget, request: ExecRequest): Promise<ExecResult> {
    const { ref, leaseId } = await this.claim(target);
    // Stopped by its run (cancelled, beyond its time limit, shutdown) or by its sandbox's removal.
    const stop = new AbortController();
    const lease: Lease = {
      id: leaseId,
      sandboxId: ref.id,
      removed: false,
      stop: () => {
        lease.removed = true;
        stop.abort();
      },
    };
    const onRunAbort = () => stop.abort();
    if (request.signal?.aborted) stop.abort();
    else request.signal?.addEventListener('abort', onRunAbort, { once: true });
    this.leases.set(leaseId, lease);
    const renewing = setInterval(() => {
      this.renew(lease).catch((err: unknown) => this.o.logger.warn({ err, sandbox_id: ref.id }, 'renewing a sandbox command’s lease failed'));
    }, this.leaseMs / 3);
    renewing.unref();
    const stoppedBy = () => (lease.removed ? 'removed' : 'aborted');
    try {
      await this.o.driver.ensure(ref);
      // Its run ended (or its sandbox was removed) while the sandbox was being made ready (a pod
      // starting can take minutes): the command is not started at all.
      if (stop.signal.aborted) return { output: Buffer.alloc(0), exitCode: null, signal: null, truncated: false, stoppedBy: stoppedBy(), durationMs: 0 };
      const result = await this.o.driver.exec(ref, { ...request, signal: stop.signal });
      return result.stoppedBy === 'aborted' ? { ...result, stoppedBy: stoppedBy() } : result;
    } finally {
      clearInterval(renewing);
      request.signal?.removeEventListener('abort', onRunAbort);
      this.leases.delete(leaseId);
      try {
        if (!lease.removed) await this.touch(ref.id);
      } finally {
        // A lease that cannot be released now (the database unreachable) lapses by itself.
        await this.release(lease).catch((err: unknown) => this.o.logger.warn({ err, sandbox_id: ref.id }, 'releasing a sandbox command’s lease failed; it lapses'));
      }
    }
  }

  /** Keep a running command's lease alive; stop the command if its sandbox was removed. */
  private async renew(lease: Lease): Promise<void> {
    if (lease.removed) return;
    const expires = sql<Date>`now() + make_interval(secs => ${this.leaseMs / 1000})`;
    const renewed = await this.o.db
      .updateTable('sandbox_commands')
      .set({ expires_at: expires })
      .where('id', '=', lease.id)
      .returning(sql<boolean>`EXISTS (SELECT 1 FROM sandboxes s WHERE s.id = sandbox_commands.sandbox_id)`.as('live'))
      .executeTakeFirst();
    let live = renewed?.live ?? false;
    // (Not for a command that has ended meanwhile: its lease is gone on purpose.)
    if (!renewed && this.leases.has(lease.id)) {
      // The lease expired and was swept (the database unreachable for longer than a lease): take it
      // again while the sandbox still exists.
      const again = await sql<{ id: string }>`
        INSERT INTO sandbox_commands (id, sandbox_id, holder, expires_at)
        SELECT ${lease.id}, ${lease.sandboxId}, ${this.holder}, ${expires} WHERE EXISTS (SELECT 1 FROM sandboxes WHERE id = ${lease.sandboxId})
        ON CONFLICT (id) DO NOTHING RETURNING id`.execute(this.o.db);
      live = again.rows.length > 0;
    }
    if (!live && !lease.removed && this.leases.has(lease.id)) {
      this.o.logger.info({ sandbox_id: lease.sandboxId }, 'sandbox removed while a command ran in it; the command is stopped');
      lease.stop();
    }
  }

  /**
   * A command has ended: its lease goes. When its sandbox was removed while it ran and no other
   * command holds it, the sandbox's files (or pod) go now.
   */
  private async release(lease: Lease): Promise<void> {
    const released = await sql<{ orphaned: boolean }>`
      DELETE FROM sandbox_commands WHERE id = ${lease.id}
      RETURNING NOT EXISTS (SELECT 1 FROM sandboxes WHERE id = ${lease.sandboxId})
        AND NOT EXISTS (SELECT 1 FROM sandbox_commands c WHERE c.sandbox_id = ${lease.sandboxId} AND c.id <> ${lease.id} AND c.expires_at > now()) AS orphaned`.execute(this.o.db);
    if (!released.rows[0]?.orphaned) return;
    try {
      await this.o.driver.remove(lease.sandboxId);
      this.o.logger.info({ sandbox_id: lease.sandboxId }, 'removed sandbox cleared once its last command ended');
    } catch (err) {
      this.o.logger.warn({ err, sandbox_id: lease.sandboxId }, 'removing a sandbox failed; the orphan sweep retries');
    }
  }

  /**
   * Hear of sandboxes removed in other processes (and this one) while commands run in them: those
   * commands are stopped. Returns the unsubscribe function.
   */
  watch(bus: NotificationBus): Promise<() => Promise<void>> {
    return bus.subscribe(SANDBOX_CHANNEL, {
      onMessage: (sandboxId) => {
        for (const lease of this.leases.values()) if (lease.sandboxId === sandboxId && !lease.removed) lease.stop();
      },
      // Notifications may have been lost: every running command checks its sandbox now.
      onGap: () => {
        for (const lease of this.leases.values()) {
          this.renew(lease).catch((err: unknown) => this.o.logger.warn({ err, sandbox_id: lease.sandboxId }, 'renewing a sandbox command’s lease failed'));
        }
      },
    });
  }

  /** The sandbox of `target`, made to exist and marked running and used now (no command holds it after). */
  async acquire(target: SandboxTarget): Promise<SandboxRef> {
    const { ref, leaseId } = await this.claim(target);
    try {
      await this.o.driver.ensure(ref);
    } finally {
      await this.o.db.deleteFrom('sandbox_commands').where('id', '=', leaseId).execute();
    }
    return ref;
  }

  /**
   * The sandbox row of `target`, created if needed and marked running and used now, and a lease on
   * it for a command, in one statement (the driver not asked yet). The statement takes the row's lock,
   * as the sweeper does to stop or remove it: either the sweep comes first (the sandbox is stopped,
   * and restarted here; or removed, and a fresh one is made here), or the lease does (and the sweep
   * leaves the sandbox alone).
   */
  private async claim(target: SandboxTarget): Promise<{ ref: SandboxRef; leaseId: string }> {
    const problem = await (this.unavailable ??= this.o.driver.unavailable());
    if (problem) throw new Error(`sandboxes are unavailable on this server: ${problem}`);
    const key = scopeKey(target);
    const allowNetwork = target.spec.policyIds.includes(ALLOW_NETWORK_POLICY);
    const expires = sql<Date>`now() + make_interval(secs => ${this.leaseMs / 1000})`;
    type Claimed = { id: string; slot: number; lease_id: string };
    for (let attempt = 0; attempt < 5; attempt++) {
      const updated = await sql<Claimed>`
        WITH s AS (
          UPDATE sandboxes SET status = 'running', stopped_at = NULL, last_used_at = now() WHERE scope_key = ${key} RETURNING id, slot
        ), l AS (
          INSERT INTO sandbox_commands (sandbox_id, holder, expires_at) SELECT id, ${this.holder}, ${expires} FROM s RETURNING id
        )
        SELECT s.id, s.slot, l.id AS lease_id FROM s, l`.execute(this.o.db);
      const row = updated.rows[0];
      if (row) return { ref: { id: row.id, slot: row.slot, allowNetwork }, leaseId: row.lease_id };
      // Slots are unique among live sandboxes; a sequence wrapping at 60,000 may hit a live one: retry.
      const inserted = await sql<Claimed>`
        WITH s AS (
          INSERT INTO sandboxes (workspace_id, agent_id, thread_id, scope, scope_key, driver, slot, idle_ttl_seconds, delete_after_stop_seconds)
          VALUES (${target.workspaceId}, ${target.agentId}, ${target.spec.scope === 'thread' ? target.threadId : null}, ${target.spec.scope}, ${key},
                  ${this.o.driver.name}, (nextval('sandbox_slots') % 60000)::int, ${target.spec.idleTtlSeconds}, ${target.spec.deleteAfterStopSeconds})
          ON CONFLICT DO NOTHING RETURNING id, slot
        ), l AS (
          INSERT INTO sandbox_commands (sandbox_id, holder, expires_at) SELECT id, ${this.holder}, ${expires} FROM s RETURNING id
        )
        SELECT s.id, s.slot, l.id AS lease_id FROM s, l`.execute(this.o.db);
      const created = inserted.rows[0];
      if (created) {
        this.o.logger.info({ sandbox_id: created.id, scope_key: key, driver: this.o.driver.name }, 'sandbox created');
        return { ref: { id: created.id, slot: created.slot, allowNetwork }, leaseId: created.lease_id };
      }
    }
    throw new Error(`could not create a sandbox for ${key}`);
  }

  /** The sandbox a thread's commands run in (its own, or its agent's), or undefined when none. */
  async forThread(workspaceId: string, threadId: string, agentId: string | undefined): Promise<SandboxStatus | undefined> {
    const row = await this.o.db
      .selectFrom('sandboxes')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('scope_key', 'in', agentId ? [`thread:${threadId}`, `agent:${agentId}`] : [`thread:${threadId}`])
      .orderBy('scope', 'desc') // `thread` before `agent`
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      id: row.id,
      scope: row.scope,
      driver: row.driver,
      status: row.status,
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at,
      stoppedAt: row.stopped_at,
      diskBytes: row.disk_bytes === null ? null : Number(row.disk_bytes),
      commands: row.commands,
      idleTtlSeconds: row.idle_ttl_seconds,
      deleteAfterStopSeconds: row.delete_after_stop_seconds,
    };
  }

  /**
   * Remove a sandbox now (its files too); the next command starts a fresh one. Commands running in it
   * (in any process) are stopped; then the last of them to end removes its files.
   */
  async remove(id: string): Promise<void> {
    const row = await this.o.db
      .deleteFrom('sandboxes')
      .where('id', '=', id)
      .returning(LIVE_LEASE.as('busy'))
      .executeTakeFirst();
    if (!row) return;
    // This process's commands stop at once; other processes hear of it on the bus.
    for (const lease of this.leases.values()) if (lease.sandboxId === id && !lease.removed) lease.stop();
    if (row.busy) {
      this.o.logger.info({ sandbox_id: id }, 'sandbox removed while commands ran in it: they are stopped, and its files go when the last has ended');
      return;
    }
    try {
      await this.o.driver.remove(id);
    } catch (err) {
      // The row is gone, so the sandbox is an orphan now: the next sweep finishes the removal.
      this.o.logger.warn({ err, sandbox_id: id }, 'removing a sandbox failed; the orphan sweep retries');
    }
  }

  /** Record a command: last used now, and disk use as the driver measures it (at most every 10 s). */
  private async touch(id: string): Promise<void> {
    const now = Date.now();
    const measured = this.measuredAt.get(id);
    const disk = measured !== undefined && now - measured < 10_000 ? null : await this.o.driver.diskUsage(id);
    if (disk !== null) this.measuredAt.set(id, now);
    if (this.measuredAt.size > 10_000) this.measuredAt.clear();
    // Measuring that ran out of time leaves the size unknown (null), not the last one measured.
    if (disk === 'timed_out') this.o.logger.warn({ sandbox_id: id }, 'measuring a sandbox’s disk use (du) ran beyond HANGAR_SANDBOX_DU_TIMEOUT_MS and was stopped: its disk_bytes is null until a measure ends in time');
    await this.o.db
      .updateTable('sandboxes')
      .set({ last_used_at: sql<Date>`now()`, commands: sql<number>`commands + 1`, ...(disk !== null ? { disk_bytes: disk === 'timed_out' ? null : disk } : {}) })
      .where('id', '=', id)
      .execute();
  }

  /** One pass: stop idle sandboxes, remove expired ones, remove orphans. */
  sweep(): Promise<void> {
    this.sweeping ??= this.sweepOnce().finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
  }

  private async sweepOnce(): Promise<void> {
    // Leases of processes that died mid-command count for nothing once expired; they go a lease later.
    await this.o.db
      .deleteFrom('sandbox_commands')
      .where(sql<boolean>`expires_at < now() - make_interval(secs => ${this.leaseMs / 1000})`)
      .execute();
    // A command longer than the idle TTL keeps its sandbox (and its pod, on the kubernetes driver).
    for (const id of await this.candidates('idle')) {
      await this.underLock(id, 'idle', async (trx) => {
        await trx.updateTable('sandboxes').set({ status: 'stopped', stopped_at: sql<Date>`now()` }).where('id', '=', id).execute();
        // Under the row's lock: a command claiming the sandbox now waits, then makes it run again.
        await this.o.driver.stop(id);
        this.o.logger.info({ sandbox_id: id }, 'idle sandbox stopped');
      }).catch((err: unknown) => this.o.logger.warn({ err, sandbox_id: id }, 'stopping an idle sandbox failed'));
    }
    // One sandbox the driver cannot remove now (its cluster unreachable, say) does not hold up the
    // others: its row is gone, and the orphan sweep finishes the removal later.
    for (const [why, what] of [
      ['expired', 'stopped sandbox'],
      ['abandoned', 'sandbox of a deleted agent'],
    ] as const) {
      for (const id of await this.candidates(why)) {
        const deleted = await this.underLock(id, why, async (trx) => {
          await trx.deleteFrom('sandboxes').where('id', '=', id).execute();
        });
        if (deleted) await this.removeEach([{ id }], what);
      }
    }
    await this.removeOrphans();
  }

  /** Sandboxes the sweep may act on for `why`, no command holding them. */
  private async candidates(why: keyof typeof SWEEPS): Promise<string[]> {
    const rows = await this.o.db
      .selectFrom('sandboxes')
      .select('id')
      .where(SWEEPS[why])
      .where(sql<boolean>`NOT ${LIVE_LEASE}`)
      .limit(1000)
      .execute();
    return rows.map((r) => r.id);
  }

  /**
   * Run `act` on sandbox `id` holding its row's lock, if it still qualifies for `why` and no command
   * holds a lease on it; whether it ran. The lease is read after the lock is held (a statement of its
   * own sees every lease committed by then): a claim either committed before, and its lease is seen,
   * or waits for the lock.
   */
  private async underLock(id: string, why: keyof typeof SWEEPS, act: (trx: Transaction<Database>) => Promise<void>): Promise<boolean> {
    return this.o.db.transaction().execute(async (trx) => {
      const locked = await trx.selectFrom('sandboxes').select('id').where('id', '=', id).where(SWEEPS[why]).forUpdate().skipLocked().executeTakeFirst();
      if (!locked) return false;
      const busy = await trx.selectFrom('sandbox_commands').select('id').where('sandbox_id', '=', id).where('expires_at', '>', sql<Date>`now()`).executeTakeFirst();
      if (busy) return false;
      await act(trx);
      return true;
    });
  }

  /** Remove the driver's sandboxes of rows just deleted; one that fails is left to the orphan sweep. */
  private async removeEach(rows: { id: string }[], what: string): Promise<void> {
    for (const { id } of rows) {
      try {
        await this.o.driver.remove(id);
        this.o.logger.info({ sandbox_id: id }, `${what} removed`);
      } catch (err) {
        this.o.logger.warn({ err, sandbox_id: id }, `removing a ${what} failed; the orphan sweep retries`);
      }
    }
  }

  /** Remove the driver's sandboxes that have no row (their thread deleted, or a crash). */
  async removeOrphans(): Promise<number> {
    const ids = await this.o.driver.list();
    if (ids.length === 0) return 0;
    // A sandbox whose row is gone while a command still runs in it is cleared when the command ends.
    const known = new Set([
      ...(await this.o.db.selectFrom('sandboxes').select('id').where('id', 'in', ids).execute()).map((r) => r.id),
      ...(await this.o.db.selectFrom('sandbox_commands').select('sandbox_id as id').where('sandbox_id', 'in', ids).where('expires_at', '>', sql<Date>`now()`).execute()).map((r) => r.id),
    ]);
    let removed = 0;
    for (const id of ids) {
      if (known.has(id)) continue;
      try {
        await this.o.driver.remove(id);
        removed++;
      } catch (err) {
        this.o.logger.warn({ err, sandbox_id: id }, 'removing an orphaned sandbox failed');
      }
    }
    if (removed > 0) this.o.logger.info({ removed }, 'orphaned sandboxes removed');
    return removed;
  }

  /** Background task: orphans removed at start, then a sweep every `sweepMs`. */
  async start(): Promise<void> {
    await this.removeOrphans().catch((err: unknown) => this.o.logger.warn({ err }, 'sandbox orphan sweep failed'));
    this.timer = setInterval(() => {
      this.sweep().catch((err: unknown) => this.o.logger.warn({ err }, 'sandbox sweep failed'));
    }, this.o.sweepMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.sweeping;
  }
}

function scopeKey(target: SandboxTarget): string {
  return target.spec.scope === 'agent' ? `agent:${target.agentId}` : `thread:${target.threadId}`;
}
