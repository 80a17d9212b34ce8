import { describe, expect, it } from 'vitest';
import { parseSince, timezoneOption } from './options.js';

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

describe('timezoneOption', () => {
  /** What it answered before its shortcut through the runtime's list of zones, for every zone. */
  const resolved = (zone: string) => new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;

  it('names every listed zone, in any case, as a date formatter resolves it', () => {
    for (const zone of Intl.supportedValuesOf('timeZone')) {
      expect(timezoneOption(zone)).toBe(resolved(zone));
      expect(timezoneOption(zone.toLowerCase())).toBe(resolved(zone));
    }
    for (const zone of ['UTC', 'utc', 'Etc/UTC', 'US/Pacific', 'Asia/Kolkata', 'EST']) expect(timezoneOption(zone)).toBe(resolved(zone));
  });

  it('refuses a name that is no time zone', () => {
    expect(() => timezoneOption('Europe/Nowhere')).toThrow(/not a time zone/);
  });
});
