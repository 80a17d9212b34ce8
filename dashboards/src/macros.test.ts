import { describe, expect, it } from 'vitest';
import { expandMacros, interpolateVariables } from './macros.js';

// 2026-03-01T10:00:00.250Z .. 2026-03-02T11:30:00.999Z, interval 90.5 s
const ctx = { fromMs: 1772359200250, toMs: 1772451000999, intervalMs: 90_500 };

describe('expandMacros, as grafana/clickhouse-datasource pkg/macros expands them', () => {
  it('turns time filters into inclusive second-precision bounds', () => {
    expect(expandMacros('WHERE $__timeFilter(Timestamp)', ctx))
      .toBe('WHERE Timestamp >= toDateTime(1772359200) AND Timestamp <= toDateTime(1772451000)');
    expect(expandMacros('$__timeFilter_ms(t)', ctx))
      .toBe('t >= fromUnixTimestamp64Milli(1772359200250) AND t <= fromUnixTimestamp64Milli(1772451000999)');
    expect(expandMacros('$__dateFilter(d)', ctx)).toBe("d >= toDate('2026-03-01') AND d <= toDate('2026-03-02')");
    expect(expandMacros('$__dt(d, t)', ctx)).toBe(
      "(d >= toDate('2026-03-01') AND d <= toDate('2026-03-02')) AND (t >= toDateTime(1772359200) AND t <= toDateTime(1772451000))");
  });

  it('expands bare time macros and intervals (whole seconds, at least 1)', () => {
    expect(expandMacros('toStartOfFiveMinutes($__fromTime), $__toTime, $__fromTime_ms', ctx))
      .toBe('toStartOfFiveMinutes(toDateTime(1772359200)), toDateTime(1772451000), fromUnixTimestamp64Milli(1772359200250)');
    expect(expandMacros('$__timeInterval(Timestamp)', ctx)).toBe('toStartOfInterval(toDateTime(Timestamp), INTERVAL 90 second)');
    expect(expandMacros('$__timeInterval(x) $__interval_s', { ...ctx, intervalMs: 200 }))
      .toBe('toStartOfInterval(toDateTime(x), INTERVAL 1 second) 1');
    expect(expandMacros('$__timeInterval_ms(x)', ctx)).toBe('toStartOfInterval(toDateTime64(x, 3), INTERVAL 90500 millisecond)');
  });

  it('rejects wrong argument counts and unknown macros', () => {
    expect(() => expandMacros('$__timeFilter(a, b)', ctx)).toThrow(/expected 1 argument/);
    expect(() => expandMacros('$__timeFilter', ctx)).toThrow(/expected 1 argument/);
    expect(() => expandMacros('$__nope(x)', ctx)).toThrow(/unknown macro/);
  });

  it('interpolates template variables first', () => {
    expect(interpolateVariables("id = '${session_id}' AND h = '$host'", { session_id: 's-1', host: 'h1' }))
      .toBe("id = 's-1' AND h = 'h1'");
    expect(interpolateVariables("match(c, '\\$HOME')", { session_id: 's' })).toBe("match(c, '\\$HOME')");
  });
});
