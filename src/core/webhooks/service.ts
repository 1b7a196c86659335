// Run webhooks: when a run that asked for one ends, its URL receives a signed POST. Deliveries are an
// outbox table drained by a background task (deliverer.ts), so a delivery survives restarts and is
// made by exactly one replica. Signatures follow the Standard Webhooks scheme (`webhook-id`,
// `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>`) under a per-workspace secret.
import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import { Webhook } from 'standardwebhooks';
import type { Db } from '../../db/index.js';
import type { WebhookAttempt, WebhookDeliveriesTable } from '../../db/tables/schedules.js';
import { canWrite, type Caller } from '../caller.js';
import { HangarError } from '../errors.js';
import type { Cipher } from '../secrets/cipher.js';
import type { EgressGuard } from '../../net/egress.js';
import { checkOutboundUrl } from '../egress.js';

/** A webhook delivery as the API shows it. */
export interface WebhookDelivery {
  id: string;
  runId: string;
  threadId: string;
  url: string;
  scheduleId: string | null;
  state: 'pending' | 'delivered' | 'failed';
  attempts: WebhookAttempt[];
  nextAttemptAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A workspace's signing secret. */
export interface WebhookSecret {
  secret: string;
  createdAt: Date;
}

/** Register deliveries, read their log, and keep each workspace's signing secret. */
export class WebhookService {
  constructor(
    private readonly db: Db,
    private readonly cipher: Cipher,
    private readonly egress: EgressGuard,
  ) {}

  /** A 422 on `loc` unless the outbound policy lets Hangar POST to `url` (checked again at connect time). */
  check(url: string, loc: (string | number)[] = ['webhook']): void {
    checkOutboundUrl(this.egress, loc, url);
  }

  /**
   * Deliver a POST to `url` when the run ends, for a run already recorded. A new run's webhook is not
   * registered here but by the statement that records the run (`StartRunInput.webhook`).
   */
  async register(workspaceId: string, run: { runId: string; threadId: string }, url: string, scheduleId: string | null = null): Promise<void> {
    await this.db
      .insertInto('webhook_deliveries')
      .values({ workspace_id: workspaceId, run_id: run.runId, thread_id: run.threadId, url, schedule_id: scheduleId })
      .execute();
  }

  /** The deliveries of one run (the caller must be able to read the run). */
  async forRun(caller: Caller, threadId: string, runId: string): Promise<WebhookDelivery[]> {
    const run = await this.db
      .selectFrom('runs')
      .select('id')
      .where('workspace_id', '=', caller.workspaceId)
      .where('thread_id', '=', threadId)
      .where('id', '=', runId)
      .executeTakeFirst();
    if (!run) throw new HangarError('run_not_found', `no run with id ${runId} on thread ${threadId}`);
    const rows = await this.db.selectFrom('webhook_deliveries').selectAll().where('run_id', '=', runId).orderBy('created_at').execute();
    return rows.map((r) => ({ ...toDelivery(r), url: webhookUrlFor(caller, r.url) }));
  }

  /** The workspace's signing secret, created on first use. Admins only: it lets anyone forge deliveries. */
  async secret(caller: Caller): Promise<WebhookSecret> {
    requireAdmin(caller);
    return this.secretOf(caller.workspaceId);
  }

  /** Replace the workspace's signing secret; deliveries from now on are signed with the new one. */
  async rotate(caller: Caller): Promise<WebhookSecret> {
    requireAdmin(caller);
    const secret = newSecret();
    const row = await this.db
      .insertInto('webhook_secrets')
      .values({ workspace_id: caller.workspaceId, secret: this.cipher.encrypt(secret) })
      .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ secret: (eb) => eb.ref('excluded.secret'), created_at: new Date() }))
      .returning('created_at')
      .executeTakeFirstOrThrow();
    return { secret, createdAt: row.created_at };
  }

  /** The signing secret of a workspace (created when missing). */
  async secretOf(workspaceId: string): Promise<WebhookSecret> {
    await this.db
      .insertInto('webhook_secrets')
      .values({ workspace_id: workspaceId, secret: this.cipher.encrypt(newSecret()) })
      .onConflict((oc) => oc.column('workspace_id').doNothing())
      .execute();
    const row = await this.db.selectFrom('webhook_secrets').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
    return { secret: this.cipher.decrypt(row.secret), createdAt: row.created_at };
  }

  /** Standard Webhooks headers for `body`, signed with the workspace's secret. */
  async sign(workspaceId: string, deliveryId: string, body: string, at: Date): Promise<Record<string, string>> {
    const { secret } = await this.secretOf(workspaceId);
    return {
      'webhook-id': deliveryId,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(deliveryId, at, body),
    };
  }
}

function requireAdmin(caller: Caller): void {
  if (caller.role !== 'admin') throw new HangarError('forbidden', 'only an admin key may read or rotate the webhook signing secret');
}

/**
 * A webhook URL as `caller` may see it. Receivers often take their token in the URL (the query, the
 * userinfo, or the path as chat webhooks do), so a key that cannot change resources sees only where the
 * POSTs go: `scheme://host[:port]` and `/…` when the URL had anything after it.
 */
export function webhookUrlFor(caller: Caller, url: string): string;
export function webhookUrlFor(caller: Caller, url: string | null): string | null;
export function webhookUrlFor(caller: Caller, url: string | null): string | null {
  if (url === null || canWrite(caller.role)) return url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '…';
  }
  const rest = parsed.pathname !== '/' || parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '';
  return `${parsed.protocol}//${parsed.host}${rest ? '/…' : ''}`;
}

/** A secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** A delivery row as a service value. */
export function toDelivery(row: Selectable<WebhookDeliveriesTable>): WebhookDelivery {
  return {
    id: row.id,
    runId: row.run_id,
    threadId: row.thread_id,
    url: row.url,
    scheduleId: row.schedule_id,
    state: row.state,
    attempts: row.attempts,
    nextAttemptAt: row.state === 'pending' ? row.next_attempt_at : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
