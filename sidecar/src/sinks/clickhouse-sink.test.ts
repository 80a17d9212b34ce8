import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MetricPoint, TelemetryBatch } from '../model.js';
import { INSERT_SETTINGS, openStore, type Store, type StoreWriter } from '../store/open-store.js';
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
  const sink = (singleWriter: boolean) => new ClickHouseSink(store.writers, new RowMapper({ 'service.name': 'ccotel' }, 'test'), 'default', { singleWriter });

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
    const flaky = (writer: StoreWriter): StoreWriter => ({
      ...writer,
      insertRows: async (into, rows) => {
        mostAtOnce = Math.max(mostAtOnce, ++running);
        try {
          if (into.includes('.otel_logs ') && refuseLogs) {
            refuseLogs = false;
            throw new Error('insert refused');
          }
          if (into.includes('.otel_metrics_sum ')) await new Promise((wait) => setTimeout(wait, 200));
          return await writer.insertRows(into, rows);
        } finally {
          running--;
        }
      },
    });
    const { spans, metrics } = batch(3, Date.parse('2026-11-02T10:00:00Z'));
    const fresh: TelemetryBatch = {
      spans: spans.map((span, i) => ({ ...span, spanId: `f${i.toString(16).padStart(15, '0')}` })),
      logs: [{ ...batch(0).logs[0], id: 'f'.repeat(32) }],
      metrics: [{ ...metrics[0], id: 'f'.repeat(32) }],
    };
    const before = await rows();
    const lanes = new ClickHouseSink(store.writers.map(flaky), new RowMapper({ 'service.name': 'ccotel' }, 'test'), 'default');
    await expect(lanes.write(fresh)).rejects.toThrow('insert refused');
    expect(running).toBe(0); // the sums lane was waited for
    expect(mostAtOnce).toBe(2);
    await lanes.write(fresh);
    expect(await rows()).toBe(before + 5);
  });
});

describe('ClickHouseSink: RowBinary into the embedded engine', () => {
  let store: Store;
  afterAll(async () => store?.close());

  it('stores the same rows as JSON rows did, odd strings (unicode, NUL, control characters, empty lines, long values), maps, arrays and sub-millisecond times included', async () => {
    const at = Date.parse('2026-10-05T06:07:08.123Z') + 0.456789;
    const odd = {
      unicode: 'héllo — 日本語 🚀',
      nul: 'a\u0000b',
      controls: 'line 1\nline 2\r\n\t"quoted" \\ back\u0001',
      // Binary rows holding an empty line ("\n\n"): a blank line in a text, a length of 10 before a newline.
      blankLine: 'paragraph 1\n\nparagraph 2',
      ten: '\n234567890',
      long: `${'ü'.repeat(60_000)}end`,
      empty: '',
      number: 42.5,
      integer: -7,
      flag: true,
    };
    const received = { resource: { 'service.name': 'claude-code', 'os.type': 'linux' }, scopeName: 'com.anthropic.claude_code', scopeVersion: '2.1.0' };
    const span = (spanId: string, over: Partial<TelemetryBatch['spans'][number]> = {}): TelemetryBatch['spans'][number] => ({
      traceId: 'a'.repeat(32), spanId, parentSpanId: '', name: 'execute_tool Bash', kind: 'internal', startMs: at, endMs: at + 1234.5678,
      status: 'error', statusMessage: odd.controls, attributes: odd, events: [], ...over,
    });
    const point = (id: string, over: Partial<MetricPoint> = {}): MetricPoint => ({
      id, name: 'ccotel.tool.calls', unit: '{call}', description: odd.unicode, kind: 'sum', timeMs: at, value: 1.5, attributes: { outcome: odd.unicode, 'gen_ai.tool.name': 'Bash' }, traceId: 'a'.repeat(32), spanId: '1'.repeat(16), ...over,
    });
    const content: TelemetryBatch = {
      spans: [
        span('1'.repeat(16), { events: [{ name: 'PreToolUse', timeMs: at + 0.001, attributes: odd }, { name: odd.unicode, timeMs: at + 2, attributes: {} }] }),
        span('2'.repeat(16), { parentSpanId: '1'.repeat(16), name: odd.long, kind: 'client', status: 'ok', statusMessage: '', attributes: {} }),
        span('3'.repeat(16), { links: [{ traceId: 'b'.repeat(32), spanId: 'c'.repeat(16), traceState: '', attributes: { 'ccotel.link.type': 'tool_execution' } }] }),
        span('4'.repeat(16), { kind: 'server', origin: { ...received, spanKind: 'SPAN_KIND_PRODUCER', traceState: 'k=v', links: [{ traceId: 'd'.repeat(32), spanId: 'e'.repeat(16), traceState: 't=1', attributes: odd }] } }),
      ],
      logs: [
        { id: 'f'.repeat(32), timeMs: at, eventName: 'ccotel.tool.decided', severity: 'WARN', traceId: 'a'.repeat(32), spanId: '1'.repeat(16), body: odd.long, attributes: odd },
        { id: 'e'.repeat(32), timeMs: at + 1, eventName: '', severity: 'DEBUG', traceId: '', spanId: '', body: odd.nul, attributes: {} },
        { id: 'd'.repeat(32), timeMs: at + 2, eventName: 'claude_code.api_request', severity: 'INFO', traceId: '', spanId: '', body: odd.controls, attributes: { cost: 0.25 }, origin: { ...received, severityText: 'info', severityNumber: 9, traceFlags: 1 } },
      ],
      metrics: [
        point('9'.repeat(32)),
        point('8'.repeat(32), { timeMs: at + 5_000, value: 2 }),
        point('7'.repeat(32), { name: 'ccotel.tool.duration', unit: 's', kind: 'histogram', value: 0.3 }),
        point('6'.repeat(32), { name: 'ccotel.tool.duration', unit: 's', kind: 'histogram', value: 42, timeMs: at + 1_000 }),
        point('5'.repeat(32), { name: 'claude_code.cost.usage', value: 0.125, origin: { ...received, startMs: at - 60_000, temporality: 2, monotonic: false } }),
        point('4'.repeat(32), { name: 'claude_code.session.count', kind: 'gauge', value: 3, origin: { ...received, startMs: at - 1, temporality: 0, monotonic: false } }),
        point('3'.repeat(32), { name: 'claude_code.latency', kind: 'histogram', value: 7.5, origin: { ...received, startMs: at - 10_000, temporality: 1, monotonic: false, histogram: { count: 3, bucketCounts: [1, 2, 0], bounds: [1, 5], min: 0.5, max: 6 } } }),
      ],
    };
    store = await openStore(mkdtempSync(join(tmpdir(), 'ccotel-rowbinary-')), { command: 'test', access: 'write', rawTtlDays: 0 });
    expect(store.writers.map((writer) => writer.format)).toEqual(['RowBinary', 'RowBinary']);
    const tables = { otel_traces: 4, otel_logs: 3, otel_metrics_sum: 2, otel_metrics_histogram: 2, otel_metrics_gauge: 1 };
    const dump = async () => {
      const rows: Record<string, string[]> = {};
      for (const table of Object.keys(tables)) {
        const result = await store.client.query({ query: `SELECT * FROM ${table}`, format: 'JSONEachRow' });
        rows[table] = (await result.text()).split('\n').filter(Boolean).sort();
      }
      return rows;
    };
    const mapper = new RowMapper({ 'service.name': 'ccotel', 'host.name': odd.unicode }, 'test');
    // The JSON rows the sink inserted before, on the same engine, then the binary ones.
    const jsonWriter: StoreWriter = {
      client: store.client,
      format: 'JSONCompactEachRow',
      insertRows: async (into, rows) => void (await store.client.command({ query: `INSERT INTO ${into} SETTINGS ${INSERT_SETTINGS} FORMAT JSONCompactEachRow\n${String(rows)}` })),
    };
    await new ClickHouseSink([jsonWriter, jsonWriter], mapper, 'default', { singleWriter: true }).write(content);
    const fromJson = await dump();
    for (const table of Object.keys(tables)) await store.client.command({ query: `TRUNCATE TABLE ${table}` });
    await new ClickHouseSink(store.writers, mapper, 'default', { singleWriter: true }).write(content);
    const fromBinary = await dump();
    expect(Object.fromEntries(Object.entries(fromBinary).map(([table, rows]) => [table, rows.length]))).toEqual(tables);
    expect(fromBinary).toEqual(fromJson);
    // And the odd strings are the strings sent.
    const attributes = await store.client.query({ query: `SELECT SpanAttributes AS a, StatusMessage AS m FROM otel_traces WHERE SpanId = '${'1'.repeat(16)}'`, format: 'JSONEachRow' });
    const [row] = await attributes.json<{ a: Record<string, string>; m: string }>();
    expect(row).toEqual({ a: { ...odd, number: '42.5', integer: '-7', flag: 'true' }, m: odd.controls });
  });

  it('stores a lone surrogate (a string cut inside a surrogate pair) as U+FFFD, where JSON rows refused the whole insert', async () => {
    const cut = '🚀🚀'.slice(0, 3); // '🚀' and half of the second
    const span = { ...batch(1, Date.parse('2026-10-06T00:00:00Z')).spans[0], spanId: '5'.repeat(16), statusMessage: cut, attributes: { text: `x${cut}` } };
    await new ClickHouseSink(store.writers, new RowMapper({ 'service.name': 'ccotel' }, 'test'), 'default').write({ spans: [span], logs: [], metrics: [] });
    const result = await store.client.query({ query: `SELECT StatusMessage AS m, SpanAttributes['text'] AS t FROM otel_traces WHERE SpanId = '${'5'.repeat(16)}'`, format: 'JSONEachRow' });
    expect(await result.json()).toEqual([{ m: '🚀\ufffd', t: 'x🚀\ufffd' }]);
  });

  it('gives rows past the raw window to their facts only, and keeps no metric point past it', async () => {
    const dayMs = 86_400_000;
    const at = (daysAgo: number, id: string): TelemetryBatch => {
      const { spans: [span], metrics: [point] } = batch(1, Date.now() - daysAgo * dayMs);
      return {
        spans: [{ ...span, spanId: id.repeat(16), traceId: id.repeat(32) }],
        logs: [{ id: id.repeat(32), timeMs: span.startMs, eventName: 'ccotel.permission.blocked', severity: 'INFO', traceId: '', spanId: '', body: '', attributes: { 'session.id': 'window' } }],
        metrics: [{ ...point, id: id.repeat(32), attributes: { outcome: `window-${id}` } }],
      };
    };
    const [recent, old] = [at(1, 'd'), at(40, 'e')];
    const windowed = new ClickHouseSink(store.writers, new RowMapper({ 'service.name': 'ccotel' }, 'test'), 'default', { rawWindowDays: 30 });
    await windowed.write({ spans: [...recent.spans, ...old.spans], logs: [...recent.logs, ...old.logs], metrics: [...recent.metrics, ...old.metrics] });
    const ids = async (query: string) => (await (await store.client.query({ query, format: 'JSONEachRow' })).json<{ id: string }>()).map((row) => row.id[0]).sort();
    expect(await ids(`SELECT SpanId AS id FROM otel_traces WHERE SpanId IN ('${'d'.repeat(16)}', '${'e'.repeat(16)}')`)).toEqual(['d']);
    expect(await ids(`SELECT SpanId AS id FROM ccotel_span_facts FINAL WHERE SpanId IN ('${'d'.repeat(16)}', '${'e'.repeat(16)}')`)).toEqual(['d', 'e']);
    expect(await ids(`SELECT LogAttributes['ccotel.record.id'] AS id FROM otel_logs WHERE LogAttributes['session.id'] = 'window'`)).toEqual(['d']);
    expect(await ids(`SELECT RecordId AS id FROM ccotel_event_facts FINAL WHERE SessionId = 'window'`)).toEqual(['d', 'e']);
    expect(await ids(`SELECT substring(Attributes['outcome'], 8) AS id FROM otel_metrics_sum WHERE startsWith(Attributes['outcome'], 'window-')`)).toEqual(['d']);
    expect(windowed.stats).toMatchObject({ inserted: { spans: 2, logs: 2, metrics: 1 }, pastRawWindow: 3 });
  });
});
