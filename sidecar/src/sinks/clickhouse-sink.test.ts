import type { ClickHouseClient, CommandParams } from '@clickhouse/client';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TelemetryBatch } from '../model.js';
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
