import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flattenLogs, flattenMetrics, flattenSpans } from '../../../test/harness/otlp-receiver.js';
import { type LogRecord, type MetricPoint, type SpanRecord, type TelemetryBatch } from '../model.js';
import { RowMapper } from '../sinks/clickhouse-rows.js';
import { ClickHouseSink } from '../sinks/clickhouse-sink.js';
import { OtlpEncoder } from '../sinks/otlp-convert.js';
import { openStore, type Store } from '../store/open-store.js';
import { startTelemetryReceiver, type TelemetryReceiver } from './otlp-receiver.js';
import { decodeOtlpProtobuf } from './otlp-protobuf.js';
import { HISTOGRAM_BOUNDS } from '../semconv.js';

const SAMPLE = join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'real', 'bash-success', 'otel');
const exportsOf = (signal: string) => readFileSync(join(SAMPLE, `${signal}.jsonl`), 'utf8').split('\n').filter(Boolean);

async function post(url: string, path: string, body: Uint8Array | string, headers: Record<string, string>) {
  const response = await fetch(`${url}${path}`, { method: 'POST', body: typeof body === 'string' ? body : new Uint8Array(body), headers });
  return { status: response.status, type: response.headers.get('content-type'), body: Buffer.from(await response.arrayBuffer()) };
}
const json = { 'content-type': 'application/json' };
const protobuf = { 'content-type': 'application/x-protobuf' };

describe('telemetry receiver into the store', () => {
  let dir: string;
  let store: Store;
  let receiver: TelemetryReceiver;
  const rows = async <T>(query: string) => (await (await store.client.query({ query, format: 'JSONEachRow' })).json<T>());

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ccotel-receiver-'));
    store = await openStore(dir, { command: 'test', access: 'write', rawTtlDays: 0 });
    const sink = new ClickHouseSink(store.writers, new RowMapper({ 'service.name': 'ccotel' }, 'test'), 'default');
    receiver = await startTelemetryReceiver({ port: 0, deliver: (batch) => sink.write(batch) });
    for (const signal of ['traces', 'metrics', 'logs']) {
      for (const body of exportsOf(signal)) {
        const answer = await post(receiver.url, `/v1/${signal}`, body, json);
        expect(answer).toMatchObject({ status: 200, type: 'application/json' });
        expect(JSON.parse(answer.body.toString())).toEqual({});
      }
    }
  });
  afterAll(async () => {
    await receiver?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("stores Claude Code's spans as the Collector's exporter does: its ids, resource, scope, kind, times", async () => {
    const sent = flattenSpans(exportsOf('traces').map((line) => JSON.parse(line)));
    const stored = await rows<Record<string, string & Record<string, string>>>(
      `SELECT TraceId, SpanId, ParentSpanId, SpanName, SpanKind, ServiceName, ResourceAttributes, ScopeName, SpanAttributes, Duration,
              toUnixTimestamp64Nano(Timestamp) AS start FROM otel_traces WHERE ServiceName = 'claude-code' ORDER BY SpanId`,
    );
    expect(stored).toHaveLength(sent.length);
    const raw = JSON.parse(exportsOf('traces')[0]).resourceSpans[0];
    for (const span of sent) {
      const row = stored.find((r) => r.SpanId === span.spanId)!;
      expect(row).toMatchObject({ TraceId: span.traceId, ParentSpanId: span.parentSpanId, SpanName: span.name, SpanKind: 'SPAN_KIND_INTERNAL', ScopeName: raw.scopeSpans[0].scope.name });
      expect(row.ResourceAttributes).toEqual(Object.fromEntries(Object.entries(span.resource).map(([k, v]) => [k, String(v)])));
      expect(row.SpanAttributes['session.id']).toBe(span.attributes['session.id']);
      // Times to the microsecond (the model keeps fractional milliseconds).
      expect(Math.abs(Number(row.start) - Number(span.startTimeUnixNano))).toBeLessThan(1000);
      expect(Math.abs(Number(row.Duration) - (Number(span.endTimeUnixNano) - Number(span.startTimeUnixNano)))).toBeLessThan(1000);
    }
    const llm = sent.find((span) => span.name === 'claude_code.llm_request')!;
    expect(stored.find((r) => r.SpanId === llm.spanId)!.SpanAttributes.request_id).toBe(String(llm.attributes.request_id));
  });

  it('stores its log records (body, event attributes, severity as sent) and its delta sums point by point', async () => {
    const sentLogs = flattenLogs(exportsOf('logs').map((line) => JSON.parse(line)));
    const logs = await rows<{ Body: string; event: string; SeverityNumber: number }>(
      `SELECT Body, LogAttributes['event.name'] AS event, SeverityNumber FROM otel_logs WHERE ServiceName = 'claude-code'`,
    );
    expect(logs.map((l) => l.event).sort()).toEqual(sentLogs.map((l) => String(l.attributes['event.name'])).sort());
    expect(logs.every((l) => l.Body === `claude_code.${l.event}`)).toBe(true);

    const sentPoints = flattenMetrics(exportsOf('metrics').map((line) => JSON.parse(line)));
    const sums = await rows<{ MetricName: string; total: number; n: string; temporality: number }>(
      `SELECT MetricName, sum(Value) AS total, count() AS n, any(AggregationTemporality) AS temporality FROM otel_metrics_sum
       WHERE ServiceName = 'claude-code' GROUP BY MetricName ORDER BY MetricName`,
    );
    const names = [...new Set(sentPoints.map((p) => p.name))].sort();
    expect(sums.map((s) => s.MetricName)).toEqual(names);
    for (const name of names) {
      const points = sentPoints.filter((p) => p.name === name);
      const row = sums.find((s) => s.MetricName === name)!;
      expect(Number(row.n)).toBe(points.length);
      expect(row.total).toBeCloseTo(points.reduce((total, p) => total + p.value, 0), 9);
      expect(row.temporality).toBe(points[0].temporality);
    }
  });

  it('stores gauges and histograms in their tables, and refuses exponential histograms and summaries as a partial success', async () => {
    const t = (s: number) => `${BigInt(Date.parse('2026-11-20T10:00:00Z') + s * 1000) * 1_000_000n}`;
    const attributes = [{ key: 'session.id', value: { stringValue: 'gauge-session' } }];
    const body = {
      resourceMetrics: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] }, scopeMetrics: [{ scope: { name: 'm' }, metrics: [
        { name: 'queue.depth', unit: '1', gauge: { dataPoints: [{ attributes, timeUnixNano: t(1), asInt: '7' }] } },
        { name: 'api.latency', unit: 'ms', histogram: { aggregationTemporality: 2, dataPoints: [{ attributes, startTimeUnixNano: t(0), timeUnixNano: t(60), count: '3', sum: 60, bucketCounts: ['1', '2', '0'], explicitBounds: [10, 50], min: 5, max: 30 }] } },
        { name: 'x.exp', exponentialHistogram: { dataPoints: [{ attributes }] } },
        { name: 'x.summary', summary: { dataPoints: [{ attributes }, { attributes }] } },
      ] }] }],
    };
    const answer = await post(receiver.url, '/v1/metrics', JSON.stringify(body), json);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body.toString())).toEqual({ partialSuccess: { rejectedDataPoints: '3', errorMessage: 'exponential histograms and summaries are not stored' } });
    expect(await rows(`SELECT MetricName, Value, toString(TimeUnix) AS time FROM otel_metrics_gauge WHERE Attributes['session.id'] = 'gauge-session'`))
      .toEqual([{ MetricName: 'queue.depth', Value: 7, time: '2026-11-20 10:00:01' }]);
    expect(await rows(`SELECT Count, Sum, BucketCounts, ExplicitBounds, Min, Max, AggregationTemporality FROM otel_metrics_histogram WHERE Attributes['session.id'] = 'gauge-session'`))
      .toEqual([{ Count: 3, Sum: 60, BucketCounts: [1, 2, 0], ExplicitBounds: [10, 50], Min: 5, Max: 30, AggregationTemporality: 2 }]);
  });

  it('stores an export sent again once (Claude Code retries what it was not told was stored)', async () => {
    const count = async () => (await rows<{ n: string }>(`SELECT (SELECT count() FROM otel_logs) + (SELECT count() FROM otel_metrics_sum) + (SELECT count() FROM otel_traces) AS n`))[0].n;
    const before = await count();
    for (const signal of ['traces', 'metrics', 'logs']) for (const body of exportsOf(signal)) expect((await post(receiver.url, `/v1/${signal}`, body, json)).status).toBe(200);
    expect(await count()).toBe(before);
  });
});

describe('telemetry receiver: encodings and refusals', () => {
  let receiver: TelemetryReceiver;
  const delivered: TelemetryBatch[] = [];
  let failing = false;

  beforeAll(async () => {
    receiver = await startTelemetryReceiver({
      port: 0,
      deliver: async (batch) => {
        if (failing) throw new Error('store down');
        delivered.push(batch);
      },
      limits: { maxConnections: 8, headersTimeoutMs: 5_000, maxBodyBytes: 64 << 10 },
    });
  });
  afterAll(async () => receiver?.close());

  const timeMs = Date.parse('2026-11-20T10:00:00.123Z');
  const encoder = new OtlpEncoder({ 'service.name': 'claude-code', 'service.version': '2.1.332', 'host.arch': 'amd64' }, '9.9.9');
  const span: SpanRecord = {
    traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', parentSpanId: '00f067aa0ba902b7', name: 'claude_code.llm_request', kind: 'client',
    startMs: timeMs, endMs: timeMs + 1234.5, status: 'error', statusMessage: 'overloaded',
    attributes: { 'session.id': 's-1', request_id: 'req_1', ttft_ms: 812, success: false, 'gen_ai.usage.input_tokens': 12_345 },
    events: [{ name: 'retry', timeMs: timeMs + 10, attributes: { attempt: 2 } }],
  };
  const log: LogRecord = {
    id: 'f'.repeat(32), timeMs, eventName: 'claude_code.api_request', severity: 'WARN', traceId: span.traceId, spanId: span.spanId, body: 'claude_code.api_request',
    attributes: { 'session.id': 's-1', cost_usd: 0.0123, duration_ms: 1234 },
  };
  const point: MetricPoint = {
    id: 'e'.repeat(32), name: 'claude_code.token.usage', unit: 'tokens', description: 'Number of tokens used', kind: 'sum', timeMs, value: 4321,
    attributes: { 'session.id': 's-1', type: 'input' }, traceId: span.traceId, spanId: span.spanId,
  };

  it('decodes protobuf (the official serializer, gzip) into what was encoded, with its resource and scope', async () => {
    delivered.length = 0;
    const body = gzipSync(encoder.traces([span]));
    const answer = await post(receiver.url, '/v1/traces', body, { ...protobuf, 'content-encoding': 'gzip' });
    expect(answer).toMatchObject({ status: 200, type: 'application/x-protobuf' });
    expect(answer.body).toHaveLength(0); // an empty ExportTraceServiceResponse
    const [received] = delivered[0].spans;
    const { origin, ...model } = received;
    expect(model).toEqual(span);
    expect(origin).toEqual({ resource: { 'service.name': 'claude-code', 'service.version': '2.1.332', 'host.arch': 'amd64' }, scopeName: 'ccotel', scopeVersion: '9.9.9', spanKind: 'SPAN_KIND_CLIENT', traceState: '', links: [] });
  });

  it('gives a record the same id whether it came as protobuf or as JSON', async () => {
    delivered.length = 0;
    await post(receiver.url, '/v1/logs', encoder.logs([log]), protobuf);
    // A histogram point too: its bucket counts and bounds are packed repeated fields.
    const observation: MetricPoint = { ...point, id: 'd'.repeat(32), name: 'claude_code.api.duration', unit: 's', kind: 'histogram', value: 2.5 };
    await post(receiver.url, '/v1/metrics', encoder.metrics([point, observation]), protobuf);
    const [fromProtobuf, pointsFromProtobuf] = delivered.splice(0);
    // The same requests in OTLP/JSON's shape: what the decoder makes of them, sent as JSON.
    await post(receiver.url, '/v1/logs', JSON.stringify(decodeOtlpProtobuf('logs', encoder.logs([log]))), json);
    await post(receiver.url, '/v1/metrics', JSON.stringify(decodeOtlpProtobuf('metrics', encoder.metrics([point, observation]))), json);
    const [fromJson, pointsFromJson] = delivered.splice(0);
    expect(fromJson.logs).toEqual(fromProtobuf.logs);
    expect(fromProtobuf.logs[0]).toMatchObject({ timeMs, body: log.body, severity: 'WARN', traceId: log.traceId, origin: { severityNumber: 13, severityText: 'WARN' } });
    expect(fromProtobuf.logs[0].attributes).toMatchObject(log.attributes);
    expect(pointsFromJson.metrics).toEqual(pointsFromProtobuf.metrics);
    expect(pointsFromProtobuf.metrics[0]).toMatchObject({ name: point.name, unit: 'tokens', value: 4321, kind: 'sum', origin: { temporality: 1, monotonic: true } });
    const histogram = pointsFromProtobuf.metrics[1];
    expect(histogram).toMatchObject({ kind: 'histogram', value: 2.5, origin: { histogram: { count: 1, min: 2.5, max: 2.5 } } });
    const { bucketCounts, bounds } = histogram.origin!.histogram!;
    expect(bounds).toEqual([...HISTOGRAM_BOUNDS]);
    expect(bucketCounts).toEqual(bucketCounts.map((_, i) => (i === HISTOGRAM_BOUNDS.findIndex((bound) => 2.5 <= bound) ? 1 : 0)));
  });

  it('refuses what is not an OTLP request (400), too large a body also once inflated (413), another encoding (415), another path (404)', async () => {
    delivered.length = 0;
    const garbage = await post(receiver.url, '/v1/traces', Buffer.from([0x0a, 0xff, 0xff, 0xff]), protobuf);
    expect(garbage.status).toBe(400);
    // A google.rpc.Status: code 3 (INVALID_ARGUMENT) in field 1.
    expect([...garbage.body.subarray(0, 2)]).toEqual([0x08, 3]);
    const badJson = await post(receiver.url, '/v1/logs', '{"resourceLogs": [', json);
    expect(badJson.status).toBe(400);
    expect(JSON.parse(badJson.body.toString())).toMatchObject({ code: 3 });
    expect((await post(receiver.url, '/v1/logs', 'x'.repeat(100 << 10), json)).status).toBe(413);
    expect((await post(receiver.url, '/v1/logs', gzipSync(Buffer.alloc(1 << 20, 0x20)), { ...json, 'content-encoding': 'gzip' })).status).toBe(413);
    expect((await post(receiver.url, '/v1/logs', '{}', { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post(receiver.url, '/v1/profiles', '{}', json)).status).toBe(404);
    expect(delivered).toHaveLength(0);
  });

  it('answers 503 (retry) when the store does not take the batch, and 200 once it does', async () => {
    failing = true;
    expect((await post(receiver.url, '/v1/logs', encoder.logs([log]), protobuf)).status).toBe(503);
    failing = false;
    expect((await post(receiver.url, '/v1/logs', encoder.logs([log]), protobuf)).status).toBe(200);
  });

  it('takes an export while a peer holds idle connections past its limit (the connection guard)', async () => {
    let closed = 0;
    const idle = await Promise.all(Array.from({ length: 12 }, () => new Promise<Socket>((resolve) => {
      const socket = connect(receiver.port, '127.0.0.1', () => resolve(socket));
      socket.on('error', () => {}).on('close', () => closed++);
    })));
    try {
      expect((await post(receiver.url, '/v1/logs', encoder.logs([log]), protobuf)).status).toBe(200);
      // Held to its limit of 8: the longest idle were closed for the newcomers.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(closed).toBeGreaterThanOrEqual(12 + 1 - 8);
    } finally {
      for (const socket of idle) socket.destroy();
    }
  });

  it('accepts an empty export without delivering anything', async () => {
    delivered.length = 0;
    expect((await post(receiver.url, '/v1/metrics', '{}', json)).status).toBe(200);
    expect(delivered).toEqual([]);
  });
});
