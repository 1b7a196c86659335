// The sandbox service: the one owner of sandbox rows and their lifecycle. A sandbox is created on
// first use (by scope: one per thread, or one per agent shared by its threads), is `running` while
// used, is stopped after `idle_ttl_seconds` without a command and removed (files and all)
// `delete_after_stop_seconds` after that. A sandbox whose row is gone (its thread deleted, a crash
// between the two writes) is an orphan: the sweeper removes it, and once at start.
import { sql } from 'kysely';
import { ALLOW_NETWORK_POLICY, type SandboxSpec, type SandboxStatus } from '../core/agents/backend.js';
import type { Db } from '../db/index.js';
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
}

/** Sandboxes of this Hangar: rows in PostgreSQL, files and processes with the driver. */
export class SandboxService {
  readonly name = 'sandboxes';
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private unavailable: Promise<string | null> | undefined;
  /** When each sandbox's disk use was last measured (measuring is a `du`: not after every command). */
  private readonly measuredAt = new Map<string, number>();
  /** Commands running now in this process, per sandbox: such a sandbox is not idle, whatever its last use. */
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly o: SandboxServiceOptions) {}

  get driverName(): string {
    return this.o.driver.name;
  }

  /** Run `request` in the sandbox of `target`, creating (or restarting) it first. */
  async exec(target: SandboxTarget, request: ExecRequest): Promise<ExecResult> {
    const { ref, idleTtlSeconds } = await this.claim(target);
    // In flight from here, while the driver makes the sandbox ready too: a pod that takes longer to
    // start than the sandbox's idle TTL must not be stopped by the sweeper half-way through starting.
    this.inFlight.set(ref.id, (this.inFlight.get(ref.id) ?? 0) + 1);
    // The sweepers of other processes (replicas) do not see this process's commands: the sandbox is
    // marked used every third of its idle TTL while the command runs, so none of them finds it idle
    // half-way (and deletes its pod under the command).
    const inUse = setInterval(() => {
      this.markUsed(ref.id).catch((err: unknown) => this.o.logger.warn({ err, sandbox_id: ref.id }, 'marking a sandbox in use failed'));
    }, (idleTtlSeconds * 1000) / 3);
    inUse.unref();
    try {
      await this.o.driver.ensure(ref);
      // Its run ended while the sandbox was being made ready (a pod starting can take minutes): the
      // command is not started at all.
      if (request.signal?.aborted) return { output: Buffer.alloc(0), exitCode: null, signal: null, truncated: false, stoppedBy: 'aborted', durationMs: 0 };
      return await this.o.driver.exec(ref, request);
    } finally {
      clearInterval(inUse);
      const left = (this.inFlight.get(ref.id) ?? 1) - 1;
      if (left > 0) this.inFlight.set(ref.id, left);
      else this.inFlight.delete(ref.id);
      await this.touch(ref.id);
    }
  }

  /** The sandbox of `target`, made to exist and marked running and used now. */
  async acquire(target: SandboxTarget): Promise<SandboxRef> {
    const { ref } = await this.claim(target);
    await this.o.driver.ensure(ref);
    return ref;
  }

  /** The sandbox row of `target`, created if needed and marked running and used now (the driver not asked yet). */
  private async claim(target: SandboxTarget): Promise<{ ref: SandboxRef; idleTtlSeconds: number }> {
    const problem = await (this.unavailable ??= this.o.driver.unavailable());
    if (problem) throw new Error(`sandboxes are unavailable on this server: ${problem}`);
    const key = scopeKey(target);
    const allowNetwork = target.spec.policyIds.includes(ALLOW_NETWORK_POLICY);
    for (let attempt = 0; attempt < 5; attempt++) {
      const row = await this.o.db
        .updateTable('sandboxes')
        .set({ status: 'running', stopped_at: null, last_used_at: sql<Date>`now()` })
        .where('scope_key', '=', key)
        .returning(['id', 'slot', 'idle_ttl_seconds'])
        .executeTakeFirst();
      if (row) return { ref: { id: row.id, slot: row.slot, allowNetwork }, idleTtlSeconds: row.idle_ttl_seconds };
      // Slots are unique among live sandboxes; a sequence wrapping at 60,000 may hit a live one: retry.
      const inserted = await this.o.db
        .insertInto('sandboxes')
        .values({
          workspace_id: target.workspaceId,
          agent_id: target.agentId,
          thread_id: target.spec.scope === 'thread' ? target.threadId : null,
          scope: target.spec.scope,
          scope_key: key,
          driver: this.o.driver.name,
          slot: sql<number>`(nextval('sandbox_slots') % 60000)::int`,
          idle_ttl_seconds: target.spec.idleTtlSeconds,
          delete_after_stop_seconds: target.spec.deleteAfterStopSeconds,
        })
        .onConflict((oc) => oc.doNothing())
        .returning(['id', 'slot', 'idle_ttl_seconds'])
        .executeTakeFirst();
      if (inserted) {
        this.o.logger.info({ sandbox_id: inserted.id, scope_key: key, driver: this.o.driver.name }, 'sandbox created');
        return { ref: { id: inserted.id, slot: inserted.slot, allowNetwork }, idleTtlSeconds: inserted.idle_ttl_seconds };
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

  /** Remove a sandbox now (its files too); the next command starts a fresh one. */
  async remove(id: string): Promise<void> {
    const row = await this.o.db.deleteFrom('sandboxes').where('id', '=', id).returning('id').executeTakeFirst();
    if (!row) return;
    try {
      await this.o.driver.remove(id);
    } catch (err) {
      // The row is gone, so the sandbox is an orphan now: the next sweep finishes the removal.
      this.o.logger.warn({ err, sandbox_id: id }, 'removing a sandbox failed; the orphan sweep retries');
    }
  }

  /** Record a command: last used now, and disk use as the driver measures it (at most every 10 s). */
  /** A command runs in the sandbox now (it is not idle); unlike `touch`, counts no command. */
  private async markUsed(id: string): Promise<void> {
    await this.o.db.updateTable('sandboxes').set({ last_used_at: sql<Date>`now()` }).where('id', '=', id).where('status', '=', 'running').execute();
  }

  private async touch(id: string): Promise<void> {
    const now = Date.now();
    const measured = this.measuredAt.get(id);
    const disk = measured !== undefined && now - measured < 10_000 ? null : await this.o.driver.diskUsage(id);
    if (disk !== null) this.measuredAt.set(id, now);
    if (this.measuredAt.size > 10_000) this.measuredAt.clear();
    await this.o.db
      .updateTable('sandboxes')
      .set({ last_used_at: sql<Date>`now()`, commands: sql<number>`commands + 1`, ...(disk !== null ? { disk_bytes: disk } : {}) })
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
    // A command longer than the idle TTL must not lose its pod (kubernetes driver) half-way.
    const busy = [...this.inFlight.keys()];
    const stopped = await this.o.db
      .updateTable('sandboxes')
      .set({ status: 'stopped', stopped_at: sql<Date>`now()` })
      .where('status', '=', 'running')
      .where(sql<boolean>`last_used_at + make_interval(secs => idle_ttl_seconds) <= now()`)
      .$if(busy.length > 0, (q) => q.where('id', 'not in', busy))
      .returning('id')
      .execute();
    // One sandbox the driver cannot stop or remove now (its cluster unreachable, say) does not hold
    // up the others; a removal is finished later by the orphan sweep.
    for (const { id } of stopped) {
      try {
        await this.o.driver.stop(id);
        this.o.logger.info({ sandbox_id: id }, 'idle sandbox stopped');
      } catch (err) {
        this.o.logger.warn({ err, sandbox_id: id }, 'stopping an idle sandbox failed');
      }
    }
    const expired = await this.o.db
      .deleteFrom('sandboxes')
      .where('status', '=', 'stopped')
      .where(sql<boolean>`stopped_at + make_interval(secs => delete_after_stop_seconds) <= now()`)
      .returning('id')
      .execute();
    await this.removeEach(expired, 'stopped sandbox');
    // An agent-scoped sandbox whose agent is deleted can never run a command again (its threads' runs
    // are refused): its files go now, not after its idle and deletion TTLs (a week by default).
    const abandoned = await this.o.db
      .deleteFrom('sandboxes')
      .where('scope', '=', 'agent')
      .where((eb) => eb.exists(eb.selectFrom('agents').select('agents.id').whereRef('agents.id', '=', 'sandboxes.agent_id').where('agents.deleted_at', 'is not', null)))
      .$if(busy.length > 0, (q) => q.where('id', 'not in', busy))
      .returning('id')
      .execute();
    await this.removeEach(abandoned, 'sandbox of a deleted agent');
    await this.removeOrphans();
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
    const known = new Set((await this.o.db.selectFrom('sandboxes').select('id').where('id', 'in', ids).execute()).map((r) => r.id));
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
