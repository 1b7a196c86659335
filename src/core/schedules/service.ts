// Schedules: an agent run started at every tick of a cron expression. This service owns the records
// (create, read, change, delete) and their `next_run_at`; the scheduler (scheduler.ts) fires them.
import { sql, type Selectable, type Transaction } from 'kysely';
import type { Database, Db } from '../../db/index.js';
import type { RunsTable } from '../../db/tables/runtime.js';
import type { SchedulesTable, ScheduleTicksTable } from '../../db/tables/schedules.js';
import type { AgentService } from '../agents/service.js';
import { type Caller, requireWrite } from '../caller.js';
import { HangarError, invalidField } from '../errors.js';
import { checkRunMetadata, MULTITASK_STRATEGIES, type MultitaskStrategy } from '../runs/service.js';
import { toRun, type Run } from '../threads/service.js';
import { nextTick, parseSchedule } from './cron.js';
import { webhookUrlFor } from '../webhooks/service.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One input message of a scheduled run. */
export interface ScheduleMessage {
  role: 'user' | 'assistant' | 'system';
  content: string;
}

/** What every run of a schedule is sent. */
export interface ScheduleInput {
  messages: ScheduleMessage[];
}

/** A schedule as services see it. */
export interface Schedule {
  id: string;
  workspaceId: string;
  agentId: string;
  schedule: string;
  timezone: string;
  input: ScheduleInput;
  /** `null`: a fresh thread per run. */
  threadId: string | null;
  multitaskStrategy: MultitaskStrategy;
  enabled: boolean;
  endTime: Date | null;
  metadata: Record<string, unknown>;
  webhook: string | null;
  principal: string;
  nextRunAt: Date | null;
  lastRun: ScheduleTick | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A tick of a schedule: the run it started, or why it started none. */
export interface ScheduleTick {
  tickAt: Date;
  state: 'claimed' | 'started' | 'skipped' | 'failed';
  catchUp: boolean;
  runId: string | null;
  threadId: string | null;
  error: { error: string; message: string } | null;
  run: Run | null;
}

/** Fields of a create request (validated shapes; the service checks meaning). */
export interface CreateScheduleInput {
  agent_id: string;
  schedule: string;
  timezone?: string | undefined;
  input: ScheduleInput;
  /** `new` (default) or a thread id of the same agent. */
  thread?: string | undefined;
  multitask_strategy?: MultitaskStrategy | undefined;
  enabled?: boolean | undefined;
  end_time?: string | null | undefined;
  metadata?: Record<string, unknown> | undefined;
  webhook?: string | null | undefined;
}

/** Fields a PATCH may change; absent fields keep their value. */
export type UpdateScheduleInput = Partial<Omit<CreateScheduleInput, 'agent_id'>>;

/** Columns a schedule list may be sorted by. */
export type ScheduleSortColumn = 'id' | 'agent_id' | 'thread_id' | 'next_run_at' | 'end_time' | 'created_at' | 'updated_at';

/** Filters of a schedule list. */
export interface ScheduleFilter {
  agent_id?: string | undefined;
  thread_id?: string | undefined;
  enabled?: boolean | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** Create, read, change and delete schedules. */
export class ScheduleService {
  /** Called after a change that may make a schedule due sooner (the local scheduler re-reads). */
  nudge: () => void = () => {};

  constructor(
    private readonly db: Db,
    private readonly agents: AgentService,
    /** Refuses a webhook URL the outbound policy forbids (a 422 naming `webhook`). */
    private readonly checkWebhook: (url: string) => void = () => {},
  ) {}

  async create(caller: Caller, input: CreateScheduleInput): Promise<Schedule> {
    requireWrite(caller);
    await this.agents.findRow(caller.workspaceId, input.agent_id);
    const timezone = input.timezone ?? 'UTC';
    const cron = checkedCron(input.schedule, timezone);
    if (input.webhook) this.checkWebhook(input.webhook);
    // Its runs carry its metadata.
    checkRunMetadata(input.metadata);
    const endTime = parseEndTime(input.end_time);
    // A schedule that ends before its first tick would be stored, shown as enabled, and never fire.
    if (endTime && !nextTick(cron, new Date(), endTime)) throw invalidField(['end_time'], `no tick of the schedule falls before it (${endTime.toISOString()}): it would never fire`);
    const threadId = await this.checkedThread(caller, input.thread ?? 'new', input.agent_id);
    const enabled = input.enabled ?? true;
    const row = await this.db
      .insertInto('schedules')
      .values({
        workspace_id: caller.workspaceId,
        agent_id: input.agent_id,
        schedule: normalise(input.schedule),
        timezone,
        input: JSON.stringify(input.input),
        thread_id: threadId,
        multitask_strategy: input.multitask_strategy ?? 'reject',
        enabled,
        end_time: endTime,
        metadata: JSON.stringify(input.metadata ?? {}),
        webhook: input.webhook ?? null,
        principal: caller.principal,
        next_run_at: enabled ? nextTick(cron, new Date(), endTime) : null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    this.nudge();
    return toSchedule(row, null);
  }

  async get(caller: Caller, scheduleId: string): Promise<Schedule> {
    const row = await this.row(caller, scheduleId);
    return shownTo(caller, toSchedule(row, await this.lastTick(row.id)));
  }

  /** Schedules matching `filter`, newest first. */
  async list(
    caller: Caller,
    filter: ScheduleFilter,
    page: { limit: number; offset: number; sortBy?: ScheduleSortColumn; sortOrder?: 'asc' | 'desc' },
  ): Promise<Schedule[]> {
    let query = this.db.selectFrom('schedules').selectAll().where('workspace_id', '=', caller.workspaceId);
    if (filter.agent_id) query = query.where('agent_id', '=', filter.agent_id);
    if (filter.thread_id) query = query.where('thread_id', '=', filter.thread_id);
    if (filter.enabled !== undefined) query = query.where('enabled', '=', filter.enabled);
    if (filter.metadata) query = query.where(sql<boolean>`metadata @> ${JSON.stringify(filter.metadata)}::jsonb`);
    const rows = await query
      .orderBy(page.sortBy ?? 'created_at', page.sortOrder ?? 'desc')
      .orderBy('id')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
    const last = await this.lastTicks(rows.map((r) => r.id));
    return rows.map((r) => shownTo(caller, toSchedule(r, last.get(r.id) ?? null)));
  }

  async count(caller: Caller, filter: ScheduleFilter): Promise<number> {
    let query = this.db.selectFrom('schedules').select((eb) => eb.fn.countAll<string>().as('n')).where('workspace_id', '=', caller.workspaceId);
    if (filter.agent_id) query = query.where('agent_id', '=', filter.agent_id);
    if (filter.thread_id) query = query.where('thread_id', '=', filter.thread_id);
    if (filter.enabled !== undefined) query = query.where('enabled', '=', filter.enabled);
    if (filter.metadata) query = query.where(sql<boolean>`metadata @> ${JSON.stringify(filter.metadata)}::jsonb`);
    return Number((await query.executeTakeFirstOrThrow()).n);
  }

  /** Change a schedule; a new expression, zone, end time or re-enabling recomputes `next_run_at` from now. */
  async update(caller: Caller, scheduleId: string, input: UpdateScheduleInput, options: { ifMatch?: string | undefined } = {}): Promise<Schedule> {
    requireWrite(caller);
    // The row stays locked from read to write, so a PATCH never writes back what it read over a change
    // made meanwhile (the scheduler disabling a schedule whose agent is gone, or another PATCH).
    const row = await this.db.transaction().execute(async (trx) => {
      const current = await this.row(caller, scheduleId, trx);
      // A client that computed its change from what it read: only while nothing changed it since.
      if (options.ifMatch !== undefined && !versionMatches(options.ifMatch, current.updated_at.toISOString())) {
        throw new HangarError('schedule_changed', `schedule ${current.id} was changed at ${current.updated_at.toISOString()}, after the version this update names (If-Match: ${options.ifMatch.slice(0, 100)}); read it again`);
      }
      if (input.enabled === true) await this.checkAgentLives(caller, current.agent_id);
      const expression = input.schedule ?? current.schedule;
      const timezone = input.timezone ?? current.timezone;
      const cron = checkedCron(expression, timezone);
      if (input.webhook) this.checkWebhook(input.webhook);
      checkRunMetadata(input.metadata);
      const endTime = input.end_time === undefined ? current.end_time : parseEndTime(input.end_time);
      const threadId = input.thread === undefined ? current.thread_id : await this.checkedThread(caller, input.thread, current.agent_id);
      const enabled = input.enabled ?? current.enabled;
      const timing = input.schedule !== undefined || input.timezone !== undefined || input.end_time !== undefined || input.enabled !== undefined;
      const nextRunAt = !enabled ? null : timing || !current.next_run_at ? nextTick(cron, new Date(), endTime) : current.next_run_at;
      return trx
        .updateTable('schedules')
        .set({
          schedule: normalise(expression),
          timezone,
          end_time: endTime,
          thread_id: threadId,
          enabled,
          next_run_at: nextRunAt,
          updated_at: nextVersion,
          ...(input.input ? { input: JSON.stringify(input.input) } : {}),
          ...(input.multitask_strategy ? { multitask_strategy: input.multitask_strategy } : {}),
          ...(input.metadata ? { metadata: JSON.stringify(input.metadata) } : {}),
          ...(input.webhook !== undefined ? { webhook: input.webhook } : {}),
        })
        .where('id', '=', current.id)
        .returningAll()
        .executeTakeFirstOrThrow();
    });
    this.nudge();
    return shownTo(caller, toSchedule(row, await this.lastTick(row.id)));
  }

  /** Delete a schedule (its runs and threads stay); `schedule_not_found` when there is none. */
  async delete(caller: Caller, scheduleId: string): Promise<void> {
    requireWrite(caller);
    if (!UUID.test(scheduleId)) throw notFound(scheduleId);
    const deleted = await this.db.deleteFrom('schedules').where('workspace_id', '=', caller.workspaceId).where('id', '=', scheduleId).executeTakeFirst();
    if (Number(deleted.numDeletedRows) === 0) throw notFound(scheduleId);
  }

  /** The ticks of a schedule, newest first, with the runs they started. */
  async ticks(caller: Caller, scheduleId: string, page: { limit: number; offset: number }): Promise<ScheduleTick[]> {
    const schedule = await this.row(caller, scheduleId);
    const rows = await this.db
      .selectFrom('schedule_ticks')
      .selectAll()
      .where('schedule_id', '=', schedule.id)
      .orderBy('tick_at', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
    const runIds = rows.flatMap((r) => (r.run_id ? [r.run_id] : []));
    const runs = runIds.length === 0 ? [] : await this.db.selectFrom('runs').selectAll().where('id', 'in', runIds).execute();
    const byId = new Map(runs.map((r) => [r.id, r]));
    return rows.map((r) => toTick(r, r.run_id ? byId.get(r.run_id) : undefined));
  }

  /** The caller's schedule; inside a transaction `trx`, locked until it ends. */
  private async row(caller: Caller, scheduleId: string, trx?: Transaction<Database>): Promise<Selectable<SchedulesTable>> {
    if (!UUID.test(scheduleId)) throw notFound(scheduleId);
    const query = (trx ?? this.db).selectFrom('schedules').selectAll().where('workspace_id', '=', caller.workspaceId).where('id', '=', scheduleId);
    const row = await (trx ? query.forUpdate() : query).executeTakeFirst();
    if (!row) throw notFound(scheduleId);
    return row;
  }

  /** A 422 on `enabled` when the schedule's agent was deleted: it would fail at its next tick and turn itself off. */
  private async checkAgentLives(caller: Caller, agentId: string): Promise<void> {
    try {
      await this.agents.findRow(caller.workspaceId, agentId);
    } catch (err) {
      if (err instanceof HangarError && err.code === 'agent_not_found') {
        throw invalidField(['enabled'], `agent ${agentId} was deleted; a schedule of it cannot run again (create one for another agent)`);
      }
      throw err;
    }
  }

  private async lastTick(scheduleId: string): Promise<ScheduleTick | null> {
    return (await this.lastTicks([scheduleId])).get(scheduleId) ?? null;
  }

  /** The newest tick of each schedule, with its run. */
  private async lastTicks(scheduleIds: string[]): Promise<Map<string, ScheduleTick>> {
    if (scheduleIds.length === 0) return new Map();
    const { rows } = await sql<Selectable<ScheduleTicksTable> & { run: Selectable<RunsTable> | null }>`
      SELECT DISTINCT ON (t.schedule_id) t.*, to_jsonb(r) AS run
      FROM schedule_ticks t LEFT JOIN runs r ON r.id = t.run_id
      WHERE t.schedule_id IN (${sql.join(scheduleIds)})
      ORDER BY t.schedule_id, t.tick_at DESC`.execute(this.db);
    return new Map(rows.map((r) => [r.schedule_id, toTick(r, r.run ? reviveRun(r.run) : undefined)]));
  }

  /** `null` for `new`; otherwise the id of a thread of the workspace, of the same agent or of none yet. */
  private async checkedThread(caller: Caller, thread: string, agentId: string): Promise<string | null> {
    if (thread === 'new') return null;
    if (!UUID.test(thread)) throw invalidField(['thread'], 'must be "new" or a thread id');
    const row = await this.db.selectFrom('threads').select(['agent_id']).where('workspace_id', '=', caller.workspaceId).where('id', '=', thread).executeTakeFirst();
    if (!row) throw invalidField(['thread'], `no thread with id ${thread} in this workspace`);
    // A thread with no agent yet (no run so far, as LangGraph clients create them) is bound by its first run.
    if (row.agent_id !== null && row.agent_id !== agentId) throw invalidField(['thread'], `thread ${thread} belongs to another agent (${row.agent_id})`);
    return thread;
  }
}

/** The parsed cron of a request, or a 422 naming the field. */
export function checkedCron(expression: string, timezone: string) {
  const parsed = parseSchedule(expression, timezone);
  if (!parsed.ok) throw invalidField([parsed.field], parsed.message);
  return parsed.cron;
}

function parseEndTime(value: string | null | undefined): Date | null {
  if (value === undefined || value === null) return null;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw invalidField(['end_time'], 'must be an ISO 8601 date-time');
  return date;
}

function normalise(expression: string): string {
  return expression.trim().split(/\s+/).join(' ');
}

/**
 * The `updated_at` of a schedule's next version: the database's clock, and always at least a
 * millisecond after the version it replaces, to the millisecond. `updated_at` is the schedule's
 * entity tag, read to the millisecond (as JSON shows it), so two changes in the same millisecond
 * must not share it: a client that read the first could otherwise overwrite the second unseen.
 */
export const nextVersion = sql<Date>`date_trunc('milliseconds', greatest(clock_timestamp(), updated_at + interval '1 millisecond'))`;

/** Whether an `If-Match` value (entity tags, `*`, quoted or weak) names the version `updatedAt`. */
function versionMatches(ifMatch: string, updatedAt: string): boolean {
  return ifMatch.split(',').some((tag) => {
    const bare = tag.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
    return bare === '*' || bare === updatedAt;
  });
}

function notFound(id: string): HangarError {
  return new HangarError('schedule_not_found', `no schedule with id ${id} in this workspace`);
}

/** Whether a value is a multitask strategy. */
export function isMultitaskStrategy(value: string): value is MultitaskStrategy {
  return (MULTITASK_STRATEGIES as readonly string[]).includes(value);
}

/** A schedule as `caller` may see it: its webhook URL masked for keys that cannot change it. */
function shownTo(caller: Caller, schedule: Schedule): Schedule {
  return { ...schedule, webhook: webhookUrlFor(caller, schedule.webhook) };
}

/** A schedule row as a service value. */
export function toSchedule(row: Selectable<SchedulesTable>, lastRun: ScheduleTick | null): Schedule {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    agentId: row.agent_id,
    schedule: row.schedule,
    timezone: row.timezone,
    input: row.input as unknown as ScheduleInput,
    threadId: row.thread_id,
    multitaskStrategy: isMultitaskStrategy(row.multitask_strategy) ? row.multitask_strategy : 'reject',
    enabled: row.enabled,
    endTime: row.end_time,
    metadata: row.metadata,
    webhook: row.webhook,
    principal: row.principal,
    nextRunAt: row.next_run_at,
    lastRun,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toTick(row: Selectable<ScheduleTicksTable>, run: Selectable<RunsTable> | undefined): ScheduleTick {
  return {
    tickAt: new Date(row.tick_at),
    state: row.state,
    catchUp: row.catch_up,
    runId: row.run_id,
    threadId: row.thread_id,
    error: row.error,
    run: run ? toRun(run) : null,
  };
}

/** A run row read back through `to_jsonb` (timestamps as strings). */
function reviveRun(json: Selectable<RunsTable>): Selectable<RunsTable> {
  const date = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string));
  return {
    ...json,
    created_at: date(json.created_at)!,
    updated_at: date(json.updated_at)!,
    started_at: date(json.started_at),
    ended_at: date(json.ended_at),
    lease_expires_at: date(json.lease_expires_at),
  };
}
