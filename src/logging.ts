// Structured JSON logs. Fields that can carry secrets are redacted by pino before anything is written.
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
