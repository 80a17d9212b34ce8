import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keyValues, Message } from '../../../test/collector/otlp-wire.js';
import { loadConfig } from '../config.js';
import type { TelemetryBatch } from '../model.js';
import { decodeOtlpProtobuf } from '../sources/otlp-protobuf.js';
import { receivedLogs, receivedMetrics, receivedSpans } from '../sources/otlp-received.js';
import { createOtlpSink } from './create-otlp-sink.js';
import { OTLP_SINK_DEFAULTS, OtlpSink, type OtlpSinkOptions } from './otlp-sink.js';
import { OtlpConfigError, parseRetryAfter, resolveTargets } from './otlp-transport.js';

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  at: number;
}

type Answer = { status: number; headers?: Record<string, string>; delayMs?: number } | 'reset';

/** A stand-in collector on loopback that can answer anything, go down and come back on the same port. */
class FakeCollector {
  readonly received: Received[] = [];
  answer: (request: Received) => Answer = () => ({ status: 200 });
  private server: Server | undefined;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks), at: Date.now() };
        const answer = this.answer(request);
        if (answer === 'reset') {
          req.socket.destroy();
          return;
        }
        this.received.push(request);
        setTimeout(() => res.writeHead(answer.status, answer.headers).end(), answer.delayMs ?? 0);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return; // stopped already (a test that failed while it was down)
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    this.server = undefined;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Ids in every accepted request body, in arrival order: span ids, record ids, point ids. */
  ids(): string[] {
    return this.received.flatMap((request) => idsIn(request.path, request.headers['content-encoding'] === 'gzip' ? gunzipSync(request.body) : request.body));
  }
}

function idsIn(path: string, body: Buffer): string[] {
  const scopes = new Message(body).messages(1).flatMap((resource) => resource.messages(2));
  if (path.endsWith('traces')) return scopes.flatMap((scope) => scope.messages(2).map((span) => span.hex(2)));
  if (path.endsWith('logs')) return scopes.flatMap((scope) => scope.messages(2).map((log) => String(keyValues(log.messages(6))['ccotel.record.id'])));
  return scopes.flatMap((scope) =>
    scope.messages(2).flatMap((metric) => metric.message(metric.has(7) ? 7 : 9).messages(1).map((point) => String(keyValues(point.message(point.has(8) ? 8 : 5).messages(7))['ccotel.point.id']))),
  );
}

const queueFiles = (queueDir: string) => readdirSync(queueDir).filter((name) => name.endsWith('.pb'));

function batch(tag: string, spans = 2, logs = 1, points = 1): TelemetryBatch {
  const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
  const base = Number.parseInt(tag, 16) * 1000;
  return {
    spans: Array.from({ length: spans }, (_, i) => ({
      traceId: hex(base, 32), spanId: hex(base + i + 1, 16), parentSpanId: '', name: 'chat m', kind: 'internal' as const,
      startMs: 1_700_000_000_000, endMs: 1_700_000_001_000, status: 'ok' as const, statusMessage: '', attributes: { 'session.id': tag }, events: [],
    })),
    logs: Array.from({ length: logs }, (_, i) => ({
      id: `log-${tag}-${i}`, timeMs: 1_700_000_000_000, eventName: 'ccotel.prompt.submitted', severity: 'INFO' as const, traceId: '', spanId: '', body: 'x', attributes: {},
    })),
    metrics: Array.from({ length: points }, (_, i) => ({
      id: `point-${tag}-${i}`, name: 'ccotel.turns', unit: '{turn}', description: '', kind: 'sum' as const, timeMs: 1_700_000_000_000, value: 1,
      attributes: { outcome: 'completed' }, traceId: '', spanId: '',
    })),
  };
}

function idsOf(b: TelemetryBatch): string[] {
  return [...b.spans.map((s) => s.spanId), ...b.logs.map((l) => l.id), ...b.metrics.map((p) => p.id)];
}

async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

let collector: FakeCollector;
let dir: string;
let logged: string[];
const sinks: OtlpSink[] = [];

async function newSink(overrides: Partial<OtlpSinkOptions> = {}): Promise<OtlpSink> {
  const sink = new OtlpSink({
    ...OTLP_SINK_DEFAULTS,
    targets: await resolveTargets(collector.url),
    resource: { 'service.name': 'ccotel' },
    queueDir: join(dir, 'queue'),
    spillAfterMs: 200,
    initialBackoffMs: 20,
    maxBackoffMs: 100,
    closeTimeoutMs: 2000,
    log: (message) => logged.push(message),
    ...overrides,
  });
  sinks.push(sink);
  return sink;
}

beforeEach(async () => {
  for (const key of Object.keys(process.env)) if (key.startsWith('OTEL_') || key.startsWith('CCOTEL_')) delete process.env[key];
  dir = mkdtempSync(join(tmpdir(), 'ccotel-otlp-'));
  logged = [];
  collector = new FakeCollector();
  await collector.start();
});

afterEach(async () => {
  for (const sink of sinks.splice(0)) await sink.close();
  await collector.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('OtlpSink', () => {
  it('resolves write only once the collector answered, one request per signal to its own path', async () => {
    collector.answer = () => ({ status: 200, delayMs: 150 });
    const sink = await newSink({ maxConcurrentRequests: 1 });
    const b = batch('a1', 3, 2, 2);
    const started = Date.now();
    await sink.write(b);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3 * 150 - 10);
    expect(collector.received.map((r) => r.path)).toEqual(['/v1/traces', '/v1/logs', '/v1/metrics']);
    expect(collector.received.every((r) => r.headers['content-type'] === 'application/x-protobuf')).toBe(true);
    expect(collector.ids()).toEqual(idsOf(b));
    expect(sink.stats.sent).toEqual({ traces: 3, logs: 2, metrics: 2 });
    expect(sink.queued.requests).toBe(0);
  });

  it("forwards received telemetry (the agent's own) as it came: its resource, scope, kinds, links, severities, points", async () => {
    const sample = join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'real', 'bash-success', 'otel');
    const exportsOf = (signal: string) => readFileSync(join(sample, `${signal}.jsonl`), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
    const received = {
      spans: exportsOf('traces').flatMap((body) => receivedSpans(body).batch.spans),
      logs: exportsOf('logs').flatMap((body) => receivedLogs(body).batch.logs),
      metrics: exportsOf('metrics').flatMap((body) => receivedMetrics(body).batch.metrics),
    };
    // A link, as the join gives a native span to ccotel's (processors/native-join.ts).
    received.spans[0] = { ...received.spans[0], origin: { ...received.spans[0].origin!, links: [{ traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), traceState: '', attributes: { 'ccotel.link.type': 'chat' } }] } };
    const own = batch('b1', 1, 1, 1);
    const sink = await newSink();
    await sink.write({ spans: [...own.spans, ...received.spans], logs: [...own.logs, ...received.logs], metrics: [...own.metrics, ...received.metrics] });
    const forwarded = (signal: 'traces' | 'logs' | 'metrics') =>
      collector.received.filter((r) => r.path === `/v1/${signal}`).map((r) => decodeOtlpProtobuf(signal, r.headers['content-encoding'] === 'gzip' ? gunzipSync(r.body) : r.body));
    const again = {
      spans: forwarded('traces').flatMap((body) => receivedSpans(body).batch.spans).filter((span) => span.origin?.resource['service.name'] === 'claude-code'),
      logs: forwarded('logs').flatMap((body) => receivedLogs(body).batch.logs).filter((log) => log.origin?.resource['service.name'] === 'claude-code'),
      metrics: forwarded('metrics').flatMap((body) => receivedMetrics(body).batch.metrics).filter((point) => point.origin?.resource['service.name'] === 'claude-code'),
    };
    // Read back as the receiver reads: the same items, but for what forwarding adds (each log record's id, each point's exemplar).
    expect(again.spans).toEqual(received.spans);
    expect(again.logs.map(({ id: _id, attributes: { 'ccotel.record.id': recordId, ...attributes }, ...log }) => ({ ...log, attributes, recordId }))).toEqual(
      received.logs.map(({ id, ...log }) => ({ ...log, recordId: id })),
    );
    expect(again.metrics.map(({ id: _id, ...point }) => point)).toEqual(received.metrics.map(({ id: _id, ...point }) => point));
    // The sidecar's own items still go under its own resource.
    expect(collector.ids()).toEqual(expect.arrayContaining(idsOf(own)));
  });

  it('keeps up to maxConcurrentRequests requests in flight, and no more', async () => {
    let inFlight = 0;
    let most = 0;
    collector.answer = () => {
      most = Math.max(most, ++inFlight);
      setTimeout(() => inFlight--, 100);
      return { status: 200, delayMs: 100 };
    };
    const sink = await newSink({ maxItemsPerRequest: 2, maxConcurrentRequests: 3 });
    const b = batch('a3', 20, 0, 0);
    await sink.write(b);
    expect(most).toBe(3); // ten requests, three at a time, not one after another
    expect(new Set(collector.ids())).toEqual(new Set(idsOf(b)));
  });

  it('splits large batches into requests of at most maxItemsPerRequest items', async () => {
    const sink = await newSink({ maxItemsPerRequest: 4, maxConcurrentRequests: 1 });
    const b = batch('a2', 10, 0, 0);
    await sink.write(b);
    expect(collector.received.map((r) => idsIn(r.path, r.body).length)).toEqual([4, 4, 2]);
    expect(collector.ids()).toEqual(idsOf(b));
  });

  it('queues on disk while the collector is down and delivers everything, in write order, when it is back', async () => {
    await collector.stop();
    const sink = await newSink({ maxConcurrentRequests: 1 });
    const batches = ['b1', 'b2', 'b3'].map((tag) => batch(tag));
    for (const b of batches) await sink.write(b);
    expect(sink.queued.requests).toBe(9);
    expect(queueFiles(join(dir, 'queue'))).toHaveLength(9);
    expect(logged.some((m) => m.includes('not reachable'))).toBe(true);

    await collector.start();
    await waitFor(() => sink.queued.requests === 0);
    expect(collector.ids()).toEqual(batches.flatMap(idsOf));
    expect(queueFiles(join(dir, 'queue'))).toHaveLength(0);
    expect(sink.stats.spilled).toEqual({ traces: 6, logs: 3, metrics: 3 });
    expect(sink.stats.dropped).toEqual({ traces: 0, logs: 0, metrics: 0 });
    // Once drained, writes go straight to the collector again.
    await sink.write(batch('b4'));
    expect(sink.queued.requests).toBe(0);
    expect(collector.ids().slice(-4)).toEqual(idsOf(batch('b4')));
  });

  it('waits as long as Retry-After says before trying again', async () => {
    let calls = 0;
    collector.answer = () => (++calls === 1 ? { status: 503, headers: { 'Retry-After': '1' } } : { status: 200 });
    const sink = await newSink({ spillAfterMs: 5000 });
    await sink.write(batch('c1', 1, 0, 0));
    expect(calls).toBe(2);
    expect(collector.received[1].at - collector.received[0].at).toBeGreaterThanOrEqual(950);
    expect(sink.stats.failedAttempts).toBe(1);
  });

  it('retries a request whose connection was reset mid-way', async () => {
    let calls = 0;
    collector.answer = () => (++calls === 1 ? 'reset' : { status: 200 });
    const sink = await newSink();
    const b = batch('c2', 2, 0, 0);
    await sink.write(b);
    expect(collector.ids()).toEqual(idsOf(b));
    expect(sink.stats.failedAttempts).toBe(1);
  });

  it('counts, logs and reports what the collector rejects for good, then carries the report in the next batch', async () => {
    collector.answer = (request) => (request.path === '/v1/traces' && collector.received.length === 0 ? { status: 400 } : { status: 200 });
    const sink = await newSink();
    await sink.write(batch('d1', 5, 0, 0));
    expect(sink.stats.dropped.traces).toBe(5);
    expect(sink.stats.droppedByReason).toEqual({ rejected: 5 });
    expect(logged.some((m) => m.includes('rejected 5 traces items: HTTP 400'))).toBe(true);

    await sink.write(batch('d2', 1, 0, 0));
    const logsBody = collector.received.find((r) => r.path === '/v1/logs')!.body;
    const record = new Message(logsBody).message(1).message(2).message(2);
    expect(record.string(12)).toBe('ccotel.export.dropped');
    expect(keyValues(record.messages(6))).toMatchObject({ signal: 'traces', reason: 'rejected', 'ccotel.items': 5 });
    const metricsBody = collector.received.find((r) => r.path === '/v1/metrics')!.body;
    const metric = new Message(metricsBody).message(1).message(2).message(2);
    expect([metric.string(1), metric.message(7).message(1).double(4)]).toEqual(['ccotel.sidecar.export.dropped', 5]);
  });

  it('drops (and counts) items whose ids are not OTLP ids instead of losing their whole request', async () => {
    const sink = await newSink({ maxConcurrentRequests: 1 });
    const b = batch('d3', 3, 2, 0);
    b.spans[1].spanId = 'not-a-span-id!!!';
    b.logs[0].traceId = 'abc';
    await sink.write(b);
    expect(sink.stats.droppedByReason).toEqual({ invalid_id: 2 });
    expect(collector.ids()).toEqual([b.spans[0].spanId, b.spans[2].spanId, b.logs[1].id]);
  });

  it('keeps the queue within its bound by dropping the oldest entries, and counts them', async () => {
    await collector.stop();
    const sink = await newSink({ queueMaxBytes: 2500, maxConcurrentRequests: 1 });
    const batches = ['e1', 'e2', 'e3', 'e4', 'e5', 'e6'].map((tag) => batch(tag, 4, 0, 0));
    for (const b of batches) await sink.write(b);
    expect(sink.queued.bytes).toBeLessThanOrEqual(2500);
    const dropped = sink.stats.dropped.traces;
    expect(dropped).toBeGreaterThan(0);
    expect(sink.stats.droppedByReason.queue_full).toBe(dropped);
    expect(logged.some((m) => m.includes('disk queue is full'))).toBe(true);

    await collector.start();
    await waitFor(() => sink.queued.requests === 0);
    const delivered = collector.ids().filter((id) => !id.startsWith('log-') && !id.startsWith('point-') && id.length === 16);
    const written = batches.flatMap(idsOf);
    // The entry being retried when the bound was hit is kept; then the newest; what is missing was counted.
    expect(delivered.slice(0, 4)).toEqual(written.slice(0, 4));
    expect(delivered.slice(-4)).toEqual(written.slice(-4));
    expect(written.length - delivered.length).toBe(dropped);
  });

  it('leaves what it could not send on disk at close, and a new sink sends it first', async () => {
    await collector.stop();
    const first = await newSink({ closeTimeoutMs: 100, maxConcurrentRequests: 1 });
    await first.write(batch('f1'));
    await first.close();
    sinks.splice(sinks.indexOf(first), 1);
    expect(logged.some((m) => m.includes('stay queued'))).toBe(true);

    await collector.start();
    const second = await newSink({ maxConcurrentRequests: 1 });
    await second.write(batch('f2'));
    await waitFor(() => second.queued.requests === 0);
    expect(collector.ids()).toEqual([...idsOf(batch('f1')), ...idsOf(batch('f2'))]);
  });
});

describe('OTLP configuration', () => {
  it('honours OTEL_EXPORTER_OTLP_HEADERS, compression, timeout and per-signal endpoints', async () => {
    process.env.OTEL_EXPORTER_OTLP_HEADERS = 'authorization=Bearer%20test-token,x-tenant=t1';
    process.env.OTEL_EXPORTER_OTLP_LOGS_HEADERS = 'x-tenant=logs-tenant';
    process.env.OTEL_EXPORTER_OTLP_COMPRESSION = 'gzip';
    process.env.OTEL_EXPORTER_OTLP_METRICS_TIMEOUT = '1234';
    process.env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT = `${collector.url}/custom/logs`;
    const targets = await resolveTargets(collector.url);
    expect(targets.metrics.timeoutMs).toBe(1234);
    expect(targets.traces.timeoutMs).toBe(10_000);
    const sink = await newSink({ targets, maxConcurrentRequests: 1 });
    const b = batch('0a1');
    await sink.write(b);
    expect(collector.received.map((r) => r.path)).toEqual(['/v1/traces', '/custom/logs', '/v1/metrics']);
    expect(collector.received.map((r) => r.headers.authorization)).toEqual(['Bearer test-token', 'Bearer test-token', 'Bearer test-token']);
    expect(collector.received.map((r) => r.headers['x-tenant'])).toEqual(['t1', 'logs-tenant', 't1']);
    expect(collector.received.every((r) => r.headers['content-encoding'] === 'gzip')).toBe(true);
    expect(collector.ids()).toEqual(idsOf(b));
  });

  it('refuses protocols other than http/protobuf with a clear error', async () => {
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'grpc';
    await expect(resolveTargets(collector.url)).rejects.toThrow(OtlpConfigError);
    await expect(resolveTargets(collector.url)).rejects.toThrow(/http\/protobuf/);
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('7')).toBe(7000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.UTC(2015, 9, 21, 7, 28, 0))).toBe(10_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });

  it('createOtlpSink queues under the state dir, sizes the queue from CCOTEL_OTLP_QUEUE_MAX_MB and rejects a bad size', async () => {
    const env = { HOME: dir, CCOTEL_STATE_DIR: join(dir, 'state'), OTEL_EXPORTER_OTLP_ENDPOINT: collector.url };
    const config = loadConfig({}, env);
    process.env.CCOTEL_OTLP_QUEUE_MAX_MB = 'lots';
    await expect(createOtlpSink(config)).rejects.toThrow(/CCOTEL_OTLP_QUEUE_MAX_MB/);
    process.env.CCOTEL_OTLP_QUEUE_MAX_MB = '1';
    await collector.stop();
    const sink = await createOtlpSink(config, { spillAfterMs: 50, log: (m) => logged.push(m) });
    sinks.push(sink);
    await sink.write(batch('0b1', 1, 0, 0));
    expect(queueFiles(join(dir, 'state', 'otlp-queue'))).toHaveLength(1);
    const big = batch('0b2', 3000, 0, 0);
    for (const span of big.spans) span.attributes = { payload: 'y'.repeat(1000) };
    await sink.write(big);
    expect(sink.queued.bytes).toBeLessThanOrEqual(1024 * 1024);
    expect(sink.stats.dropped.traces).toBeGreaterThan(0);
    await collector.start();
  });
});
