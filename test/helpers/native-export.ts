// Generated sessions as ccotel's chat spans and as what Claude Code exports of them (OTLP/JSON requests), for the
// telemetry_gap tests (report telemetry, the detector): clean, or with a fault planted.
import { UNCACHED_INPUT_ATTRIBUTE } from '../../schemas/usage.js';
import type { LogRecord, SpanRecord } from '../../sidecar/src/model.js';

export const T0 = Date.parse('2026-11-20T10:00:00Z');
export const MODEL = 'claude-opus-4-6';

export interface Request {
  id: string;
  atMs: number;
  tokens: { input: number; output: number; cacheRead: number; cacheCreation: number };
}

export const requestsOf = (session: string): Request[] =>
  [0, 1, 2].map((i) => ({ id: `req_${session}_${i}`, atMs: T0 + i * 60_000, tokens: { input: 100 + i, output: 20 * (i + 1), cacheRead: 1000 * i, cacheCreation: i === 0 ? 500 : 0 } }));

/** ccotel's record of a session's start (the transcript's first row). */
export function sessionStarted(session: string): LogRecord {
  return { id: `start-${session}`, timeMs: T0 - 1000, eventName: 'ccotel.session.started', severity: 'INFO', traceId: '', spanId: '', body: '', attributes: { 'session.id': session, source: 'startup' } };
}

export function chatSpan(session: string, request: Request, model = MODEL): SpanRecord {
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
export function nativeExport(session: string, requests: Request[], options: { model?: string; shiftMs?: number } = {}) {
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

