// Structured JSON logs. Fields that can carry secrets are redacted by pino before anything is written.
import { formatWithOptions } from 'node:util';
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';

/** The logger every part of Hangar writes to. */
export type Logger = PinoLogger;

/** Field names whose values never reach a log line, wherever they appear (two levels deep). */
export const REDACTED_FIELDS = [
  'headers',
  'authorization',
  'x-api-key',
  'api_key',
  'apiKey',
  'key',
  'password',
  'secret',
  'secrets',
  'client_secret',
  'access_token',
  'refresh_token',
  'token',
  'code_verifier',
];

/** A logger at `level`, writing to `destination` (standard output by default). */
export function createLogger(options: { level: string; destination?: DestinationStream }): Logger {
  const paths = REDACTED_FIELDS.flatMap((f) => [quote(f), `*.${quote(f)}`, `*.*.${quote(f)}`]);
  return pino(
    {
      level: options.level,
      base: { service: 'hangar' },
      redact: { paths, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination,
  );
}

function quote(field: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(field) ? field : `["${field}"]`;
}

type ConsoleMethod = 'log' | 'info' | 'debug' | 'trace' | 'warn' | 'error';
const CONSOLE_LEVELS: Record<ConsoleMethod, 'debug' | 'info' | 'warn'> = { log: 'info', info: 'info', debug: 'debug', trace: 'debug', warn: 'warn', error: 'warn' };
const consoleTargets: Logger[] = [];
let originalConsole: Partial<Record<ConsoleMethod, (...args: unknown[]) => void>> | undefined;

/**
 * Route `console.*` of third-party code (provider clients print raw lines on malformed output) into
 * `logger` as JSON lines (`component: console`), so that standard output stays structured. Returns a
 * function that undoes it; several servers in one process stack (the newest receives the lines).
 */
export function captureConsole(logger: Logger): () => void {
  const target = logger.child({ component: 'console' });
  if (consoleTargets.length === 0) {
    originalConsole = {};
    for (const method of Object.keys(CONSOLE_LEVELS) as ConsoleMethod[]) {
      originalConsole[method] = console[method];
      console[method] = (...args: unknown[]) => {
        const top = consoleTargets.at(-1);
        if (top) top[CONSOLE_LEVELS[method]](formatWithOptions({ breakLength: Infinity }, ...args));
        else originalConsole?.[method]?.(...args);
      };
    }
  }
  consoleTargets.push(target);
  return () => {
    const at = consoleTargets.lastIndexOf(target);
    if (at >= 0) consoleTargets.splice(at, 1);
    if (consoleTargets.length === 0 && originalConsole) {
      for (const [method, fn] of Object.entries(originalConsole)) (console as unknown as Record<string, unknown>)[method] = fn;
      originalConsole = undefined;
    }
  };
}
