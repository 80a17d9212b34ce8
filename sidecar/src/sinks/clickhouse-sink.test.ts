import type { ClickHouseClient, CommandParams } from '@clickhouse/client';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MetricPoint, TelemetryBatch } from '../model.js';
import { openStore, type Store } from '../store/open-store.js';
import { RowMapper } from './clickhouse-rows.js';
import { ClickHouseSink } from './clickhouse-sink.js';

function batch(n: number, timeMs = Date.parse('2026-11-01T10:00:00Z')): TelemetryBatch {
  return {
    spans: Array.from({ length: n }, (_, i) => ({
      traceId: 'a'.repeat(32), spanId: i.toString(16).padStart(16, '0'), parentSpanId: '', name: 'execute_tool Bash', kind: 'internal' as const,
      startMs: timeMs + i, endMs: timeMs + i + 5, status: 'unset' as const, statusMessage: '', attributes: { 'session.id': 's' }, events: [],
    })),
    logs: [{ id: 'b'.repeat(32), timeMs, eventName: 'ccotel.tool.completed', severity: 'INFO', traceId: '', spanId: '', body: '', attributes: {} }],
    metrics: [{ id: 'c'.repeat(32), name: 'ccotel.tool.calls', unit: '{call}', description: '', kind: 'sum', timeMs, value: 1, attributes: { outcome: 'success' }, traceId: '', spanId: '' }],
  };
}

describe('ClickHouseSink: a row id is stored once', () => {
  let store: Store;
  const rows = async () => {
    const result = await store.client.query({
      query: 'SELECT (SELECT count() FROM otel_traces) + (SELECT count() FROM otel_logs) + (SELECT count() FROM otel_metrics_sum) AS n',
      format: 'JSONEachRow',
    });
    return Number((await result.json<{ n: string }>())[0].n);
  };
  const sink = (singleWriter: boolean) => new ClickHouseSink(store.writers, new RowMapper({ 'service.name': 'ccotel' }, 'test'), 'default', singleWriter);

  beforeAll(async () => {
    process.env.CCOTEL_RAW_TTL_DAYS = '0';
    store = await openStore(mkdtempSync(join(tmpdir(), 'ccotel-sink-')), { command: 'test', access: 'write', rawTtlDays: 0 });
  });
  afterAll(async () => store?.close());

  it('drops repeats within a run (single writer, from memory) and in later runs (from the store)', async () => {
    const first = sink(true);
    await first.write(batch(5));
    await first.write(batch(7)); // 5 of the spans, the log and the point are repeats
    expect(await rows()).toBe(9);
    expect(first.stats.repeatsDropped).toBe(7);
    // A store that is not empty at the start is asked, whatever the writer.
    const second = sink(true);
    await second.write(batch(8));
    expect(second.stats.inserted.spans).toBe(1); // only span 7 was new
    const server = sink(false);
    await server.write(batch(8));
    expect(server.stats).toMatchObject({ inserted: { spans: 0, logs: 0, metrics: 0 }, repeatsDropped: 10 });
    expect(await rows()).toBe(10);
  });

  it('stores the points of one series and minute as one row (values added, each point an exemplar); a repeat of some is known by its exemplar', async () => {
    const minute = Date.parse('2026-11-03T10:00:00Z');
    const point = (i: number, outcome: string, at = minute + i * 1000): MetricPoint => ({
      id: `9${i.toString(16).padStart(31, '0')}`, name: 'ccotel.tool.calls', unit: '{call}', description: '', kind: 'sum', timeMs: at, value: i, attributes: { outcome, 'gen_ai.tool.name': 'Bash' }, traceId: '', spanId: '',
    });
    const duration = (i: number, value: number): MetricPoint => ({ ...point(i, 'success'), id: `8${i.toString(16).padStart(31, '0')}`, name: 'ccotel.tool.duration', unit: 's', kind: 'histogram', value });
    const series = async () => {
      const result = await store.client.query({
        query: `SELECT Attributes['outcome'] AS outcome, toString(TimeUnix) AS time, Value AS value, length(Exemplars.TimeUnix) AS points
                FROM otel_metrics_sum WHERE MetricName = 'ccotel.tool.calls' AND TimeUnix >= '2026-11-03 00:00:00' ORDER BY time, outcome, points`,
        format: 'JSONEachRow',
      });
      return result.json();
    };
    // Three points of one series in the minute, one of another outcome, one in the next minute.
    const first = [point(1, 'success'), point(2, 'success'), point(3, 'success'), point(4, 'error'), point(5, 'success', minute + 60_000)];
    await sink(false).write({ spans: [], logs: [], metrics: [...first, duration(1, 0.2), duration(2, 3), duration(3, 0.5)] });
    expect(await series()).toEqual([
      { outcome: 'error', time: '2026-11-03 10:01:00', value: 4, points: 1 },
      { outcome: 'success', time: '2026-11-03 10:01:00', value: 6, points: 3 },
      { outcome: 'success', time: '2026-11-03 10:02:00', value: 5, points: 1 },
    ]);
    const histogram = await store.client.query({
      query: `SELECT Count AS count, Sum AS sum, Min AS min, Max AS max, arraySum(BucketCounts) AS counted, length(Exemplars.Value) AS points FROM otel_metrics_histogram WHERE MetricName = 'ccotel.tool.duration' AND TimeUnix >= '2026-11-03 00:00:00'`,
      format: 'JSONEachRow',
    });
    expect(await histogram.json()).toEqual([{ count: 3, sum: 3.7, min: 0.2, max: 3, counted: 3, points: 3 }]);
    // The store is asked (not the sink's memory): points 1-3 are stored in one row, point 7 is new in that minute.
    const again = sink(false);
    await again.write({ spans: [], logs: [], metrics: [point(2, 'success'), point(7, 'success'), point(1, 'success'), point(3, 'success')] });
    expect(again.stats).toMatchObject({ inserted: { metrics: 1 }, repeatsDropped: 3 });
    expect(await series()).toEqual([
      { outcome: 'error', time: '2026-11-03 10:01:00', value: 4, points: 1 },
      { outcome: 'success', time: '2026-11-03 10:01:00', value: 7, points: 1 },
      { outcome: 'success', time: '2026-11-03 10:01:00', value: 6, points: 3 },
      { outcome: 'success', time: '2026-11-03 10:02:00', value: 5, points: 1 },
    ]);
  });

  it('stores a batch whose rows span a year of days (one partition a day: more than ClickHouse allows per insert by default)', async () => {
    const dayMs = 86_400_000;
    const start = Date.parse('2025-11-01T10:00:00Z');
    const spans = Array.from({ length: 365 }, (_, day) => batch(1, start + day * dayMs).spans[0]).map((span, i) => ({ ...span, traceId: `d${i.toString(16).padStart(31, '0')}`, spanId: `e${i.toString(16).padStart(15, '0')}` }));
    const year = sink(false);
    await year.write({ spans, logs: [], metrics: [] });
    expect(year.stats.inserted.spans).toBe(365);
  });

  it('inserts in two lanes at once; a lane that fails rejects the write only once the other is done, and the retry stores each row once', async () => {
    let refuseLogs = true;
    let running = 0;
    let mostAtOnce = 0;
    // The store's writers, but the first logs insert is refused and every sums insert takes 200 ms.
    const flaky = (client: ClickHouseClient) =>
      ({
        query: client.query.bind(client),
        command: async (params: CommandParams) => {
          mostAtOnce = Math.max(mostAtOnce, ++running);
          try {
            if (params.query.includes('.otel_logs ') && refuseLogs) {
              refuseLogs = false;
              throw new Error('insert refused');
            }
            if (params.query.includes('.otel_metrics_sum ')) await new Promise((wait) => setTimeout(wait, 200));
            return await client.command(params);
          } finally {
            running--;
          }
        },
      }) as unknown as ClickHouseClient;
    const { spans, metrics } = batch(3, Date.parse('2026-11-02T10:00:00Z'));
    const fresh: TelemetryBatch = {
      spans: spans.map((span, i) => ({ ...span, spanId: `f${i.toString(16).padStart(15, '0')}` })),
      logs: [{ ...batch(0).logs[0], id: 'f'.repeat(32) }],
      metrics: [{ ...metrics[0], id: 'f'.repeat(32) }],
    };
    const before = await rows();
    const lanes = new ClickHouseSink(store.writers.map(flaky), new RowMapper({ 'service.name': 'ccotel' }, 'test'), 'default', false);
    await expect(lanes.write(fresh)).rejects.toThrow('insert refused');
    expect(running).toBe(0); // the sums lane was waited for
    expect(mostAtOnce).toBe(2);
    await lanes.write(fresh);
    expect(await rows()).toBe(before + 5);
  });
});
