// Statements sent again when the database connection was lost under them: a restarted or failed-over
// database, or an operator's `pg_terminate_backend`. The pool opens a new connection for the next
// attempt. Only for statements that are safe to repeat (reads, upserts, updates guarded by the state
// they change); backoff and attempts come from p-retry.
import pRetry from 'p-retry';

/** SQLSTATEs of a connection that is gone or not accepting yet: admin, crash and startup shutdowns. */
const LOST_STATES = new Set(['57P01', '57P02', '57P03']);
/** Socket errors of a connection that broke or could not be made. */
const LOST_SOCKETS = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT']);

/**
 * Whether `error` comes from PostgreSQL or its client saying the connection is gone: a FATAL or
 * PANIC server error (the session ended: a terminated backend, a database closed to connections),
 * SQLSTATE class 08 or 57P01–57P03, or pg's own errors for a socket that closed under a statement.
 * Unlike `isConnectionLost`, never true for another service's error (a model provider's).
 */
export function isDatabaseGone(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const severity = (error as { severity?: unknown }).severity;
  if (severity === 'FATAL' || severity === 'PANIC') return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (LOST_STATES.has(code) || (code.startsWith('08') && severity !== undefined))) return true;
  return /^Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect/.test(error.message);
}

/** Whether `error` says the connection was lost (or could not be made), not that the statement was wrong. */
export function isConnectionLost(error: unknown): boolean {
  if (isDatabaseGone(error)) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('08') || LOST_SOCKETS.has(code));
}

/**
 * Run `statement`, again after a lost connection: `retries` more times (default 6, about 2.5 s in
 * all, backing off from 50 ms to 1 s), and for no longer than `withinMs` when given. Any other
 * error, or the last one, is thrown as it is.
 */
export async function reconnecting<T>(statement: () => Promise<T>, options: { retries?: number; withinMs?: number; signal?: AbortSignal } = {}): Promise<T> {
  // The first attempt goes without p-retry's machinery: it is on every statement's path.
  try {
    return await statement();
  } catch (error) {
    if (!isConnectionLost(error) || options.retries === 0) throw error;
  }
  return pRetry(statement, {
    retries: (options.retries ?? 6) - 1,
    minTimeout: 50,
    maxTimeout: 1000,
    factor: 2,
    randomize: true,
    shouldRetry: ({ error }) => isConnectionLost(error),
    ...(options.withinMs !== undefined ? { maxRetryTime: options.withinMs } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
