// The process's one PostgreSQL notification bus: a single supervised LISTEN connection that every
// subscriber (queue wake-ups, cancels, run events) shares. When the connection drops (the database
// restarted, a network cut, pg_terminate_backend) it reconnects with exponential backoff, listens to
// every channel again, and then calls each subscriber's `onGap`: notifications sent while it was
// down are lost, so whoever waits on one must re-read the database. Sending goes through the pool.
//
// Written here rather than taken from a library: pg-listen (the usual choice) is unmaintained since
// 2021 and does not report the gap to subscribers, which is the property this bus exists for.
import pg from 'pg';
import type { Logger } from '../logging.js';

/** One subscription of a channel. */
export interface BusHandler {
  /** A notification on the channel (payload may be empty). */
  onMessage(payload: string): void;
  /** Notifications may have been lost (reconnected after a drop): re-read what you wait for. */
  onGap?(): void;
}

/** Options of a bus. */
export interface BusOptions {
  connectionString: string;
  pool: pg.Pool;
  logger: Logger;
  /** First reconnect delay; doubled up to `maxBackoffMs` (defaults 100 ms, 5 s). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** Called on every reconnect after a drop (the composition root counts them in /metrics). */
  onReconnect?: () => void;
}

/** The `application_name` of the bus connection (how operators and tests find it in pg_stat_activity). */
export const BUS_APPLICATION_NAME = 'hangar-bus';

const CHANNEL = /^[a-z_][a-z0-9_]*$/;

/** A supervised LISTEN connection shared by every subscriber in the process. */
export class NotificationBus {
  private readonly channels = new Map<string, Set<BusHandler>>();
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;
  private backoff: number;
  /** Times the connection was (re)established; 1 after a clean start. */
  connects = 0;

  constructor(private readonly options: BusOptions) {
    this.backoff = options.minBackoffMs ?? 100;
  }

  /** Connect (throws if the database cannot be reached at start). */
  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  /** Whether the listening connection is up now. */
  get connected(): boolean {
    return this.client !== undefined && this.connecting === undefined;
  }

  /** Subscribe `handler` to `channel`; returns an unsubscribe function. */
  async subscribe(channel: string, handler: BusHandler): Promise<() => Promise<void>> {
    if (!CHANNEL.test(channel)) throw new Error(`invalid channel name ${channel}`);
    let set = this.channels.get(channel);
    if (!set) {
      this.channels.set(channel, (set = new Set()));
      // A failure here is a drop: the reconnect listens to every channel again.
      await this.client?.query(`LISTEN ${channel}`).catch(() => {});
    }
    set.add(handler);
    return async () => {
      set.delete(handler);
      if (set.size === 0 && this.channels.get(channel) === set) {
        this.channels.delete(channel);
        await this.client?.query(`UNLISTEN ${channel}`).catch(() => {});
      }
    };
  }

  /** Send a notification (through the pool: the listening connection only listens). */
  async notify(channel: string, payload = ''): Promise<void> {
    await this.options.pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    await this.connecting?.catch(() => {});
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private connect(): Promise<void> {
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.connectionString, application_name: BUS_APPLICATION_NAME });
    client.on('notification', (msg) => {
      const handlers = this.channels.get(msg.channel);
      if (!handlers) return;
      for (const h of handlers) {
        try {
          h.onMessage(msg.payload ?? '');
        } catch (error) {
          this.options.logger.error({ err: error, channel: msg.channel }, 'notification handler failed');
        }
      }
    });
    // Both fire on a drop (error first, when there is one); `lost` acts once per client.
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      for (const channel of this.channels.keys()) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => {});
      throw error;
    }
    if (this.stopped) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.connects++;
    this.backoff = this.options.minBackoffMs ?? 100;
    if (this.connects > 1) {
      this.options.logger.info({ connects: this.connects }, 'notification bus reconnected');
      this.options.onReconnect?.();
      this.gap();
    }
  }

  private lost(client: pg.Client, error?: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => {});
    if (this.stopped) return;
    this.options.logger.warn({ err: error }, 'notification bus connection lost; reconnecting');
    // Subscribers re-read at once (the database may be fine, only this connection went) and again
    // once the bus is back.
    this.gap();
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    const delay = this.backoff;
    this.backoff = Math.min(this.backoff * 2, this.options.maxBackoffMs ?? 5_000);
    this.retry = setTimeout(() => {
      this.connect().catch((error: unknown) => {
        this.options.logger.warn({ err: error, retry_ms: this.backoff }, 'notification bus could not reconnect');
        this.schedule();
      });
    }, delay);
  }

  private gap(): void {
    for (const handlers of this.channels.values()) {
      for (const h of handlers) {
        try {
          h.onGap?.();
        } catch (error) {
          this.options.logger.error({ err: error }, 'notification gap handler failed');
        }
      }
    }
  }
}
