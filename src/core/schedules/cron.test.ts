import { describe, expect, it } from 'vitest';
import { nextTick, nextTicks, parseSchedule } from './cron.js';

function parse(expression: string, timezone = 'UTC') {
  const parsed = parseSchedule(expression, timezone);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.cron;
}

describe('cron expressions', () => {
  it('accepts 5 fields and 6 with seconds first; refuses other shapes and zones with the field named', () => {
    expect(nextTick(parse('*/15 * * * *'), new Date('2026-01-01T00:07:00Z'), null)?.toISOString()).toBe('2026-01-01T00:15:00.000Z');
    expect(nextTick(parse('*/10 * * * * *'), new Date('2026-01-01T00:00:03Z'), null)?.toISOString()).toBe('2026-01-01T00:00:10.000Z');
    expect(parseSchedule('* * * *', 'UTC')).toMatchObject({ ok: false, field: 'schedule' });
    expect(parseSchedule('0 0 0 * * * 2030', 'UTC')).toMatchObject({ ok: false, field: 'schedule' });
    expect(parseSchedule('61 * * * *', 'UTC')).toMatchObject({ ok: false, field: 'schedule' });
    expect(parseSchedule('0 9 * * *', 'Mars/Olympus')).toMatchObject({ ok: false, field: 'timezone' });
  });

  it('keeps local wall-clock time across a spring-forward change (Europe/Berlin, 29 March 2026)', () => {
    // 09:00 local is 08:00 UTC in winter (CET) and 07:00 UTC in summer (CEST).
    const ticks = nextTicks(parse('0 9 * * *', 'Europe/Berlin'), new Date('2026-03-28T00:00:00Z'), null, 3).map((d) => d.toISOString());
    expect(ticks).toEqual(['2026-03-28T08:00:00.000Z', '2026-03-29T07:00:00.000Z', '2026-03-30T07:00:00.000Z']);
  });

  it('fires a tick in the skipped hour once, at the first valid instant after the jump', () => {
    // 02:30 does not exist in Berlin on 29 March 2026 (02:00 → 03:00).
    const ticks = nextTicks(parse('30 2 * * *', 'Europe/Berlin'), new Date('2026-03-28T00:00:00Z'), null, 3).map((d) => d.toISOString());
    expect(ticks[0]).toBe('2026-03-28T01:30:00.000Z');
    expect(ticks).toHaveLength(3);
    expect(new Set(ticks).size).toBe(3);
    expect(ticks[2]).toBe('2026-03-30T00:30:00.000Z');
  });

  it('fires a tick in the repeated hour once on a fall-back change (America/New_York, 1 November 2026)', () => {
    // 01:30 happens twice in New York on 1 November 2026 (EDT 05:30Z, then EST 06:30Z).
    const ticks = nextTicks(parse('30 1 * * *', 'America/New_York'), new Date('2026-10-31T12:00:00Z'), null, 3).map((d) => d.toISOString());
    expect(ticks[0]).toBe('2026-11-01T05:30:00.000Z');
    expect(ticks[1]).toBe('2026-11-02T06:30:00.000Z');
  });

  it('keeps an hourly schedule hourly through the repeated hour (America/New_York, 1 November 2026)', () => {
    // Minute 0 of every hour: 01:00 EDT (05:00Z) and 01:00 EST (06:00Z) are an hour apart, both fire.
    const ticks = nextTicks(parse('0 * * * *', 'America/New_York'), new Date('2026-11-01T04:30:00Z'), null, 4).map((d) => d.toISOString());
    expect(ticks).toEqual(['2026-11-01T05:00:00.000Z', '2026-11-01T06:00:00.000Z', '2026-11-01T07:00:00.000Z', '2026-11-01T08:00:00.000Z']);
  });

  it('stops at end_time', () => {
    const cron = parse('0 * * * *');
    expect(nextTicks(cron, new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T02:30:00Z'), 5)).toHaveLength(2);
    expect(nextTick(cron, new Date('2026-01-01T03:00:00Z'), new Date('2026-01-01T02:30:00Z'))).toBeNull();
  });
});
