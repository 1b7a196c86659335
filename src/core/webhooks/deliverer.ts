// Drains the webhook outbox: deliveries whose run has ended are claimed (SKIP LOCKED, with a lease so
// no other replica sends them meanwhile), POSTed with a Standard Webhooks signature, and either marked
// delivered or scheduled again with exponential backoff until the attempts are used up.
import { sql, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { RunsTable } from '../../db/tables/runtime.js';
import type { WebhookAttempt, WebhookDeliveriesTable } from '../../db/tables/schedules.js';
import type { Logger } from '../../logging.js';
import type { ThreadStateReader } from '../threads/state.js';
import type { WebhookService } from './service.js';

/** Settings of webhook delivery. */
export interface DelivererSettings {
  pollMs: number;
  /** Attempts per delivery (the first included). */
  maxAttempts: number;
  /** Delay before the second attempt; doubles for each further one (capped at an hour). */
  backoffMs: number;
  /** Time limit of one attempt. */
  timeoutMs: number;
}

/** How a POST is sent (the outbound guard's fetch in a server). */
export type WebhookFetch = (url: string, init: RequestInit) => Promise<Response>;

/** What the deliverer needs. */
export interface DelivererDeps {
  db: Db;
  webhooks: WebhookService;
  state: ThreadStateReader;
  logger: Logger;
  settings: DelivererSettings;
  fetch?: WebhookFetch;
}

type Due = Selectable<WebhookDeliveriesTable> & { run: Selectable<RunsTable> | null };

/** The body of a delivery. */
export interface WebhookPayload {
  event: 'run.completed';
  delivery_id: string;
  run_id: string;
  thread_id: string;
  agent_id: string | null;
  schedule_id: string | null;
  status: string;
  created_at: string | null;
  started_at: string | null;
  ended_at: string | null;
  duration_ms: number | null;
  /** The last assistant message of the thread when the run ended. */
  message: { type: 'ai'; content: unknown; id: string | null } | null;
  /** What the thread waits for, when the run paused for a person. */
  interrupts: unknown[];
  error: { error: string; message: string } | null;
}

/** Sends run webhooks; a background task of the server. */
export class WebhookDeliverer {
  readonly name = 'webhooks';
  private stopped = true;
  private loop: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private readonly log: Logger;

  constructor(private readonly deps: DelivererDeps) {
    this.log = deps.logger.child({ component: 'webhooks' });
  }

  start(): void {
    this.stopped = false;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        while (!this.stopped && (await this.drain()) > 0);
      } catch (error) {
        this.log.error({ err: error }, 'webhook pass failed; retrying');
      }
      if (this.stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.deps.settings.pollMs);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Claim due deliveries of ended runs and send them; returns how many were sent. */
  async drain(): Promise<number> {
    const leaseMs = this.deps.settings.timeoutMs + 5_000;
    const due = await this.deps.db.transaction().execute(async (trx) => {
      const { rows } = await sql<Due>`
        SELECT d.*, to_jsonb(r) AS run FROM webhook_deliveries d LEFT JOIN runs r ON r.id = d.run_id
        WHERE d.state = 'pending' AND d.next_attempt_at <= now()
          AND (r.id IS NULL OR r.status IN ('success', 'error', 'interrupted', 'timeout'))
        ORDER BY d.next_attempt_at
        LIMIT 20
        FOR UPDATE OF d SKIP LOCKED`.execute(trx);
      if (rows.length > 0) {
        await trx
          .updateTable('webhook_deliveries')
          .set({ next_attempt_at: sql`now() + ${`${leaseMs} milliseconds`}::interval` })
          .where('id', 'in', rows.map((r) => r.id))
          .execute();
      }
      return rows;
    });
    await Promise.all(due.map((d) => this.deliver(d)));
    return due.length;
  }

  private async deliver(delivery: Due): Promise<void> {
    const attemptNo = delivery.attempts.length + 1;
    if (!delivery.run) {
      await this.finish(delivery, 'failed', [...delivery.attempts, { attempt: attemptNo, at: new Date().toISOString(), status_code: null, error: 'the run was deleted before it ended', duration_ms: 0 }]);
      return;
    }
    const body = JSON.stringify(await this.payload(delivery, delivery.run));
    const started = Date.now();
    const attempt: WebhookAttempt = { attempt: attemptNo, at: new Date(started).toISOString(), status_code: null, error: null, duration_ms: 0 };
    try {
      const headers = await this.deps.webhooks.sign(delivery.workspace_id, delivery.id, body, new Date(started));
      const response = await (this.deps.fetch ?? fetch)(delivery.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'Hangar-Webhooks/1', ...headers },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.deps.settings.timeoutMs),
      });
      attempt.status_code = response.status;
      // The status says it all: the body is not read (a receiver could stream one without end into
      // memory until the time limit) but cancelled, which hangs up on a receiver still sending.
      await response.body?.cancel().catch(() => undefined);
      if (!response.ok) attempt.error = `the receiver answered ${response.status}`;
    } catch (error) {
      attempt.error = describe(error);
    }
    attempt.duration_ms = Date.now() - started;
    const attempts = [...delivery.attempts, attempt];
    if (!attempt.error) {
      await this.finish(delivery, 'delivered', attempts);
    } else if (attemptNo >= this.deps.settings.maxAttempts) {
      this.log.warn({ delivery_id: delivery.id, run_id: delivery.run_id, attempts: attemptNo }, 'webhook delivery failed; no attempts left');
      await this.finish(delivery, 'failed', attempts);
    } else {
      const delay = Math.min(3_600_000, this.deps.settings.backoffMs * 2 ** (attemptNo - 1));
      await this.record(delivery, { attempts: JSON.stringify(attempts), next_attempt_at: new Date(Date.now() + delay), updated_at: new Date() });
    }
  }

  private async finish(delivery: Due, state: 'delivered' | 'failed', attempts: WebhookAttempt[]): Promise<void> {
    await this.record(delivery, { state, attempts: JSON.stringify(attempts), updated_at: new Date() });
  }

  /**
   * Record an attempt, only on the delivery as it was claimed (still pending, no attempt recorded
   * since): a process that stalled past its claim (`leaseMs`) finds that another process claimed the
   * delivery meanwhile and may have recorded it; its late attempt must not replace that record.
   */
  private async record(delivery: Due, set: Updateable<WebhookDeliveriesTable>): Promise<void> {
    const { numUpdatedRows } = await this.deps.db
      .updateTable('webhook_deliveries')
      .set(set)
      .where('id', '=', delivery.id)
      .where('state', '=', 'pending')
      .where(sql<number>`jsonb_array_length(attempts)`, '=', delivery.attempts.length)
      .executeTakeFirst();
    if (numUpdatedRows === 0n) {
      this.log.warn({ delivery_id: delivery.id, run_id: delivery.run_id }, 'webhook attempt not recorded: the delivery was claimed again and recorded by another process meanwhile (this one stalled past its claim)');
    }
  }

  private async payload(delivery: Due, run: Selectable<RunsTable>): Promise<WebhookPayload> {
    let message: WebhookPayload['message'] = null;
    let interrupts: unknown[] = [];
    try {
      const state = await this.deps.state.current(delivery.thread_id);
      const messages = Array.isArray(state.values.messages) ? (state.values.messages as Record<string, unknown>[]) : [];
      const last = [...messages].reverse().find((m) => m.type === 'ai' || m.type === 'AIMessageChunk');
      if (last) message = { type: 'ai', content: last.content, id: typeof last.id === 'string' ? last.id : null };
      interrupts = state.interrupts;
    } catch (error) {
      this.log.debug({ err: error, thread_id: delivery.thread_id }, 'no state for the webhook payload');
    }
    const at = (v: unknown) => (v ? new Date(v as string).toISOString() : null);
    const startedAt = at(run.started_at);
    const endedAt = at(run.ended_at);
    return {
      event: 'run.completed',
      delivery_id: delivery.id,
      run_id: run.id,
      thread_id: run.thread_id,
      agent_id: run.agent_id,
      schedule_id: delivery.schedule_id,
      status: run.status,
      created_at: at(run.created_at),
      started_at: startedAt,
      ended_at: endedAt,
      duration_ms: startedAt && endedAt ? Date.parse(endedAt) - Date.parse(startedAt) : null,
      message,
      interrupts,
      error: run.error ?? null,
    };
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError') return 'the receiver did not answer in time';
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ? `${error.message} (${cause.code})` : error.message;
  }
  return String(error);
}
