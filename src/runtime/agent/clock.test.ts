import { describe, expect, it } from 'vitest';
import { isTimeZone, localDateTimeLine } from './clock.js';

// ICU decides punctuation ("Monday, 23 November 2026 at 08:30"), so the parts are checked, not the glue.
describe('local date and time line', () => {
  const at = new Date('2026-11-22T23:30:00Z');
  it('uses the given IANA zone', () => {
    const line = localDateTimeLine('Asia/Tokyo', at);
    for (const part of ["The user's local date and time:", 'Monday', '23 November 2026', '08:30', '(Asia/Tokyo)']) expect(line).toContain(part);
  });
  it('falls back to UTC when absent or unknown', () => {
    const line = localDateTimeLine(undefined, at);
    for (const part of ['Sunday', '22 November 2026', '23:30', '(UTC)']) expect(line).toContain(part);
    expect(localDateTimeLine('Mars/Olympus', at)).toBe(line);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
    expect(isTimeZone('Europe/Paris')).toBe(true);
  });
});
