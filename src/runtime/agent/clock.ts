// The user's local date and time, put into the system prompt of every model call of a run.

// Building an Intl.DateTimeFormat costs milliseconds: one per zone, reused by every model call.
const formats = new Map<string, Intl.DateTimeFormat | null>();

function formatFor(zone: string): Intl.DateTimeFormat | null {
  let format = formats.get(zone);
  if (format === undefined) {
    try {
      format = new Intl.DateTimeFormat('en-GB', {
        timeZone: zone,
        weekday: 'long',
        year: 'numeric',
        month: 'long',
        day: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      });
    } catch {
      format = null;
    }
    if (formats.size < 1000) formats.set(zone, format);
  }
  return format;
}

/** Whether `zone` is an IANA time zone name this runtime knows. */
export function isTimeZone(zone: unknown): zone is string {
  return typeof zone === 'string' && zone !== '' && formatFor(zone) !== null;
}

/** A line such as "The user's local date and time: Sunday, 22 November 2026 at 14:05 (Europe/Paris)." (UTC when absent or invalid). */
export function localDateTimeLine(zone: unknown, now: Date = new Date()): string {
  const timeZone = isTimeZone(zone) ? zone : 'UTC';
  const text = formatFor(timeZone)!.format(now);
  return `The user's local date and time: ${text} (${timeZone}).`;
}
