// Abuse limits: failed authentication throttled per client address, and an optional request rate
// per API key. In memory, per process (rate-limiter-flexible): a replica counts its own traffic.
import type { Context } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { HangarError } from '../core/errors.js';

/** Settings of {@link AbuseLimits} (`HANGAR_AUTH_FAILURE_*`, `HANGAR_KEY_RATE_LIMIT`). */
export interface AbuseSettings {
  /** Failed authentications per address per window; 0 turns throttling off. */
  authFailureLimit: number;
  authFailureWindowSeconds: number;
  /** Requests per second per key; 0 turns the limit off. */
  keyRateLimit: number;
}

/** The limiters of one app. */
export class AbuseLimits {
  private readonly failures: RateLimiterMemory | undefined;
  private readonly perKey: RateLimiterMemory | undefined;

  constructor(private readonly settings: AbuseSettings) {
    if (settings.authFailureLimit > 0) {
      this.failures = new RateLimiterMemory({ points: settings.authFailureLimit, duration: settings.authFailureWindowSeconds });
    }
    if (settings.keyRateLimit > 0) this.perKey = new RateLimiterMemory({ points: settings.keyRateLimit, duration: 1 });
  }

  /** Refuse an address that used up its failed attempts (an in-memory look-up; no database work). */
  async assertNotThrottled(c: Context): Promise<void> {
    if (!this.failures) return;
    const state = await this.failures.get(clientAddress(c));
    if (state && state.consumedPoints >= this.settings.authFailureLimit) throw tooMany(c, state, 'too many failed authentications from this address');
  }

  /** Count a failed authentication of the request's address. */
  async recordFailure(c: Context): Promise<void> {
    if (!this.failures) return;
    await this.failures.consume(clientAddress(c)).catch(() => {});
  }

  /** Count one request of a key; throws 429 beyond the per-key rate. */
  async chargeKey(c: Context, keyId: string): Promise<void> {
    if (!this.perKey) return;
    try {
      await this.perKey.consume(keyId);
    } catch (error) {
      if (error instanceof RateLimiterRes) throw tooMany(c, error, `this key is limited to ${this.settings.keyRateLimit} requests per second`);
      throw error;
    }
  }
}

/** The peer address of the connection (forwarded headers are not trusted: they are the client's to set). */
function clientAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function tooMany(c: Context, state: RateLimiterRes, why: string): HangarError {
  const seconds = Math.max(1, Math.ceil(state.msBeforeNext / 1000));
  c.header('Retry-After', String(seconds));
  return new HangarError('too_many_requests', `${why}; retry after ${seconds} s`);
}
