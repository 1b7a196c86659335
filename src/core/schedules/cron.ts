// Cron expressions and their next times, through croner (a maintained, dependency-free cron library
// that handles seconds, IANA time zones and daylight-saving changes; see notes/issue-16.md for why).
import { Cron } from 'croner';

/** Why an expression or zone was refused, or the parsed schedule. */
export type ParsedSchedule = { ok: true; cron: Cron } | { ok: false; field: 'schedule' | 'timezone'; message: string };

/** Whether `zone` is an IANA time zone this runtime knows. */
export function isIanaZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * Parse a standard 5-field cron expression (minute hour day-of-month month day-of-week) or a 6-field
 * one with seconds first, in `timezone`. Day-of-month and day-of-week combine with OR, as in Vixie cron.
 */
export function parseSchedule(expression: string, timezone: string): ParsedSchedule {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    return { ok: false, field: 'schedule', message: `must have 5 fields (minute hour day month weekday) or 6 with seconds first; got ${fields.length}` };
  }
  if (!isIanaZone(timezone)) return { ok: false, field: 'timezone', message: `unknown IANA time zone ${JSON.stringify(timezone)}` };
  try {
    const cron = new Cron(fields.join(' '), { timezone, paused: true, legacyMode: true });
    if (!cron.nextRun(new Date())) return { ok: false, field: 'schedule', message: 'never fires' };
    return { ok: true, cron };
  } catch (error) {
    const message = error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error);
    return { ok: false, field: 'schedule', message };
  }
}

/** The first tick strictly after `after`, or null when there is none before `endTime`. */
export function nextTick(cron: Cron, after: Date, endTime: Date | null): Date | null {
  const next = cron.nextRun(after);
  if (!next) return null;
  if (endTime && next.getTime() > endTime.getTime()) return null;
  return next;
}

/** The next `count` ticks after `after` (fewer when the schedule ends). */
export function nextTicks(cron: Cron, after: Date, endTime: Date | null, count: number): Date[] {
  const out: Date[] = [];
  let from = after;
  while (out.length < count) {
    const next = nextTick(cron, from, endTime);
    if (!next) break;
    out.push(next);
    from = next;
  }
  return out;
}
