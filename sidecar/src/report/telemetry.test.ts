import { UNCACHED_INPUT_ATTRIBUTE } from '../../../schemas/usage.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpanRecord } from '../model.js';
import { RowMapper } from '../sinks/clickhouse-rows.js';
import { ClickHouseSink } from '../sinks/clickhouse-sink.js';
import { receivedLogs, receivedMetrics } from '../sources/otlp-received.js';
import { openStore, type Store } from '../store/open-store.js';
import { renderTelemetry } from '../commands/report.js';
import { telemetryReport, type TelemetryReport } from './telemetry.js';

const T0 = Date.parse('2026-11-20T10:00:00Z');
const MODEL = 'claude-opus-4-6';

interface Request {
  id: string;
  atMs: number;
  tokens: { input: number; output: number; cacheRead: number; cacheCreation: number };
}

const requestsOf = (session: string): Request[] =>
  [0, 1, 2].map((i) => ({ id: `req_${session}_${i}`, atMs: T0 + i * 60_000, tokens: { input: 100 + i, output: 20 * (i + 1), cacheRead: 1000 * i, cacheCreation: i === 0 ? 500 : 0 } }));

function chatSpan(session: string, request: Request, model = MODEL): SpanRecord {
  return {
    traceId: 'a'.repeat(32), spanId: request.id.replace(/\W/g, '').padEnd(16, '0').slice(-16), parentSpanId: '', name: `chat ${model}`, kind: 'client',
    startMs: request.atMs, endMs: request.atMs + 900, status: 'ok', statusMessage: '',
    attributes: {
      'session.id': session, request_id: request.id, 'gen_ai.request.model': model,
      'gen_ai.usage.input_tokens': request.tokens.input + request.tokens.cacheRead + request.tokens.cacheCreation,
      [UNCACHED_INPUT_ATTRIBUTE]: request.tokens.input, 'gen_ai.usage.output_tokens': request.tokens.output,
      'gen_ai.usage.cache_read.input_tokens': request.tokens.cacheRead, 'gen_ai.usage.cache_creation.input_tokens': request.tokens.cacheCreation,
      'ccotel.cost.usd': 0.01,
    },
    events: [],
  };
}

const kv = (attributes: Record<string, string | number>) =>
  Object.entries(attributes).map(([key, value]) => ({ key, value: typeof value === 'number' ? { intValue: String(value) } : { stringValue: value } }));
const resource = { attributes: kv({ 'service.name': 'claude-code', 'service.version': '2.1.332' }) };
const nanos = (ms: number) => `${BigInt(ms) * 1_000_000n}`;

/** What Claude Code exports for these requests: an api_request event each, token and cost points each. */
function nativeExport(session: string, requests: Request[], options: { model?: string; shiftMs?: number } = {}) {
  const shift = options.shiftMs ?? 0;
  const logs = {
    resourceLogs: [{ resource, scopeLogs: [{ scope: { name: 'com.anthropic.claude_code.events' }, logRecords: requests.map((r) => ({
      timeUnixNano: nanos(r.atMs + 950 + shift), body: { stringValue: 'claude_code.api_request' },
      attributes: kv({ 'session.id': session, 'event.name': 'api_request', request_id: r.id, model: options.model ?? MODEL, query_source: 'main' }),
    })) }] }],
  };
  const point = (r: Request, type: string, value: number) => ({
    startTimeUnixNano: nanos(r.atMs + shift), timeUnixNano: nanos(r.atMs + 1000 + shift), asDouble: value,
    attributes: kv({ 'session.id': session, type, model: options.model ?? MODEL, query_source: 'main' }),
  });
  const metrics = {
    resourceMetrics: [{ resource, scopeMetrics: [{ scope: { name: 'com.anthropic.claude_code' }, metrics: [
      { name: 'claude_code.token.usage', unit: 'tokens', sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: requests.flatMap((r) => Object.entries(r.tokens).map(([type, value]) => point(r, type, value))) } },
      { name: 'claude_code.cost.usage', unit: 'USD', sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: requests.map((r) => point(r, '', 0.01)) } },
    ] }] }],
  };
  return { logs, metrics };
}

describe('report telemetry: native figures beside ccotel’s, and telemetry_gap', () => {
  let dir: string;
  let store: Store;
  let report: TelemetryReport;
  const session = (id: string) => report.sessions.find((s) => s.session === id)!;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ccotel-telemetry-report-'));
    store = await openStore(dir, { command: 'test', access: 'write', rawTtlDays: 0 });
    const sink = new ClickHouseSink(store.writers, new RowMapper({ 'service.name': 'ccotel' }, 'test'), 'default');
    const write = async (native: ReturnType<typeof nativeExport>) => {
      await sink.write(receivedLogs(native.logs).batch);
      await sink.write(receivedMetrics(native.metrics).batch);
    };
    for (const id of ['clean', 'cut', 'renamed', 'twice', 'resent']) {
      const model = id === 'renamed' ? `${MODEL}[1m]` : MODEL;
      await sink.write({ spans: requestsOf(id).map((r) => chatSpan(id, r, model)), logs: [], metrics: [] });
    }
    await write(nativeExport('clean', requestsOf('clean')));
    // The exporter stopped after the first request (Claude Code's issue #92776).
    await write(nativeExport('cut', requestsOf('cut').slice(0, 1)));
    // The `[1m]` suffix dropped (#63536).
    await write(nativeExport('renamed', requestsOf('renamed')));
    // The same usage exported twice as other points (not a retry of the same request): counted twice.
    await write(nativeExport('twice', requestsOf('twice')));
    await write({ logs: { resourceLogs: [] }, metrics: nativeExport('twice', requestsOf('twice'), { shiftMs: 30_000 }).metrics });
    // A request retried byte for byte (the receiver answered too late) is stored once.
    await write(nativeExport('resent', requestsOf('resent')));
    await write(nativeExport('resent', requestsOf('resent')));
    report = await telemetryReport(store.client);
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds no gap where the export matches the transcript, and shows both figures', () => {
    const tokens = { input: 303, output: 120, cacheRead: 3000, cacheCreation: 500 };
    expect(session('clean')).toEqual({ session: 'clean', ccotel: { requests: 3, tokens, cost_usd: 0.03 }, native: { requests: 3, tokens, cost_usd: 0.03 }, gaps: [] });
    expect(session('resent').gaps).toEqual([]);
  });

  it('names an export cut off mid-session, and from when', () => {
    expect(session('cut').gaps).toEqual([
      '2 of 3 requests of the transcript not exported',
      'input tokens: 303 in the transcript, 100 exported',
      'output tokens: 120 in the transcript, 20 exported',
      'cacheRead tokens: 3000 in the transcript, 0 exported',
    ]);
    expect(session('cut').missing_from).toBe(new Date(requestsOf('cut')[1].atMs).toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z'));
  });

  it('names a renamed model and usage counted twice', () => {
    expect(session('renamed').gaps).toEqual([`model ${MODEL}[1m] exported as ${MODEL}`]);
    expect(session('twice').gaps).toEqual([
      'input tokens: 303 in the transcript, 606 exported',
      'output tokens: 120 in the transcript, 240 exported',
      'cacheRead tokens: 3000 in the transcript, 6000 exported',
      'cacheCreation tokens: 500 in the transcript, 1000 exported',
    ]);
    expect(report.gaps).toBe(3);
  });

  it('prints both figures per session, and each gap with when it began', () => {
    const text = renderTelemetry(report);
    expect(text).toMatch(/clean\s.*3 \/ 3.*303 \/ 303.*\bno\b/);
    expect(text).toMatch(/cut\s.*3 \/ 1.*303 \/ 100.*\byes\b/);
    expect(text).toContain(`cut: 2 of 3 requests of the transcript not exported; input tokens: 303 in the transcript, 100 exported`);
    expect(text).toContain(`(from ${session('cut').missing_from})`);
    expect(renderTelemetry({ sessions: [], gaps: 0 })).toMatch(/No session with Claude Code's own telemetry/);
  });
});
