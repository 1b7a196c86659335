// The user's local date and time, put into the system prompt of every model call of a run.

/** Whether `zone` is an IANA time zone name this runtime knows. */
export function isTimeZone(zone: unknown): zone is string {
  if (typeof zone !== 'string' || zone === '') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** A line such as "The user's local date and time: Sunday, 22 November 2026, 14:05 (Europe/Paris)." (UTC when absent or invalid). */
export function localDateTimeLine(zone: unknown, now: Date = new Date()): string {
  const timeZone = isTimeZone(zone) ? zone : 'UTC';
  const text = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    weekday: 'long',
    year: 'numeric',
    month: 'long',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(now);
  return `The user's local date and time: ${text} (${timeZone}).`;
}
