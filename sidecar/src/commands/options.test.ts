import { describe, expect, it } from 'vitest';
import { parseSince } from './options.js';

describe('parseSince', () => {
  const now = Date.UTC(2026, 11, 4);
  it('takes a duration ago, a date and a date-time', () => {
    expect(parseSince('7d', now)).toBe(now - 7 * 86_400_000);
    expect(parseSince('2025-02-28', now)).toBe(Date.UTC(2025, 1, 28));
    expect(parseSince('2025-11-30T10:00:00Z', now)).toBe(Date.UTC(2025, 10, 30, 10));
  });

  it('refuses a day the calendar lacks, which Date would roll over into the next month', () => {
    for (const day of ['2025-02-30', '2025-11-31', '2025-11-31T10:00:00Z']) expect(() => parseSince(day, now)).toThrow(/not a date/);
  });
});
