// Authenticated keys cached in process, kept correct across processes by PostgreSQL LISTEN/NOTIFY:
// revoking a key or changing a workspace (from any replica or the CLI) notifies every listener,
// which drops the affected entries. While the listening connection is down nothing is cached.
import pg from 'pg';
import type { Caller } from '../caller.js';

/** The notification channel; payload `key:<id>` or `workspace:<id>`. */
export const AUTH_CHANNEL = 'hangar_auth';

interface Entry {
  caller: Caller;
  expires: number;
}

/** A cache of callers by key hash, invalidated by notifications. */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private client: pg.Client | undefined;
  private listening = false;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: { url: string; ttlMs?: number; maxEntries?: number; onError?: (error: unknown) => void },
  ) {}

  /** Start listening; until this resolves (or after the connection drops) nothing is cached. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    this.listening = false;
    this.entries.clear();
    await this.client?.end().catch(() => {});
    this.client = undefined;
  }

  get(hash: string): Caller | undefined {
    if (!this.listening) return undefined;
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expires < Date.now()) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.caller;
  }

  set(hash: string, caller: Caller): void {
    if (!this.listening) return;
    if (this.entries.size >= (this.options.maxEntries ?? 10_000)) this.entries.clear();
    this.entries.set(hash, { caller, expires: Date.now() + (this.options.ttlMs ?? 60_000) });
  }

  /** Drop entries named by a notification payload. */
  invalidate(payload: string): void {
    const [kind, id] = payload.split(':');
    for (const [hash, { caller }] of this.entries) {
      if ((kind === 'key' && caller.keyId === id) || (kind === 'workspace' && caller.workspaceId === id)) this.entries.delete(hash);
    }
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.url });
    const lost = (error?: unknown) => {
      if (this.client !== client) return;
      this.listening = false;
      this.entries.clear();
      this.client = undefined;
      if (error) this.options.onError?.(error);
      client.end().catch(() => {});
      if (!this.stopped) this.retry = setTimeout(() => void this.connect().catch(() => {}), 1000);
    };
    client.on('notification', (n) => {
      if (n.channel === AUTH_CHANNEL && n.payload) this.invalidate(n.payload);
    });
    client.on('error', lost);
    client.on('end', () => lost());
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${AUTH_CHANNEL}`);
      this.listening = true;
    } catch (error) {
      lost(error);
    }
  }
}
