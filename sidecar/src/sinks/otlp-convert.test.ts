import { SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { millisToHrTime, type InstrumentationScope } from '@opentelemetry/core';
import { ProtobufLogsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes, type Resource as OtelResource } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { keyValues, Message } from '../../../test/collector/otlp-wire.js';
import type { LogRecord, MetricPoint, Origin, SpanRecord } from '../model.js';
import { HISTOGRAM_BOUNDS, histogramBounds, POINT_ID_KEY, RECORD_ID_KEY, SCHEMA_URL } from '../semconv.js';
import { OtlpEncoder, partialRejection } from './otlp-convert.js';

const resource = { 'service.name': 'ccotel', 'host.name': 'test-host', 'user.name': 'tester' };
const encoder = new OtlpEncoder(resource, '9.9.9');
const TRACE = '0af7651916cd43dd8448eb211c80319c';
const ROOT = 'b7ad6b7169203331';
const CHILD = '00f067aa0ba902b7';
// 2026-03-04T05:06:07.891Z plus 0.25 ms: sub-millisecond times must survive.
const T0 = Date.UTC(2026, 2, 4, 5, 6, 7, 891) + 0.25;

const ns = (ms: number) => BigInt(Math.trunc(ms / 1000)) * 1_000_000_000n + BigInt(Math.round((ms % 1000) * 1e6));

function span(over: Partial<SpanRecord>): SpanRecord {
  return {
    traceId: TRACE, spanId: ROOT, parentSpanId: '', name: 'invoke_agent claude-code', kind: 'internal',
    startMs: T0, endMs: T0 + 1500, status: 'unset', statusMessage: '', attributes: {}, events: [], ...over,
  };
}

function point(over: Partial<MetricPoint>): MetricPoint {
  return {
    id: 'p-1', name: 'ccotel.tool.calls', unit: '{call}', description: 'Tool calls', kind: 'sum', timeMs: T0, value: 1,
    attributes: { 'gen_ai.tool.name': 'Bash', outcome: 'success' }, traceId: TRACE, spanId: CHILD, ...over,
  };
}

describe('OtlpEncoder', () => {
  it('writes spans with their ids, parent, times, status, attributes, events, resource and scope', () => {
    const body = encoder.traces([
      span({ attributes: { 'session.id': 's-1', 'gen_ai.usage.input_tokens': 42, flag: true } }),
      span({
        spanId: CHILD, parentSpanId: ROOT, name: 'execute_tool Bash', status: 'error', statusMessage: 'exit 1',
        events: [{ name: 'PreToolUse', timeMs: T0 + 10, attributes: { decision: 'allow' } }],
      }),
    ]);
    const resourceSpans = new Message(body).message(1);
    expect(keyValues(resourceSpans.message(1).messages(1))).toEqual(resource);
    const scopeSpans = resourceSpans.message(2);
    expect([scopeSpans.message(1).string(1), scopeSpans.message(1).string(2)]).toEqual(['ccotel', '9.9.9']);
    const [root, child] = scopeSpans.messages(2);
    expect([root.hex(1), root.hex(2), root.has(4), root.string(5)]).toEqual([TRACE, ROOT, false, 'invoke_agent claude-code']);
    expect(root.fixed64(7)).toBe(ns(T0));
    expect(root.fixed64(8)).toBe(ns(T0 + 1500));
    expect(keyValues(root.messages(9))).toEqual({ 'session.id': 's-1', 'gen_ai.usage.input_tokens': 42, flag: true });
    expect([child.hex(4), child.message(15).varint(3), child.message(15).string(2)]).toEqual([ROOT, 2n, 'exit 1']);
    const [event] = child.messages(11);
    expect([event.string(2), event.fixed64(1), keyValues(event.messages(3))]).toEqual(['PreToolUse', ns(T0 + 10), { decision: 'allow' }]);
  });

  it('writes log records with the record id attribute, event name, severity, body and trace context', () => {
    const logs: LogRecord[] = [
      { id: 'r-1', timeMs: T0, eventName: 'ccotel.tool.decided', severity: 'WARN', traceId: TRACE, spanId: CHILD, body: 'denied by rule', attributes: { 'tool_use_id': 'toolu_1' } },
      { id: 'r-2', timeMs: T0 + 1, eventName: 'ccotel.record.skipped', severity: 'INFO', traceId: '', spanId: '', body: '', attributes: {} },
    ];
    const [withTrace, withoutTrace] = new Message(encoder.logs(logs)).message(1).message(2).messages(2);
    expect(keyValues(withTrace.messages(6))).toEqual({ tool_use_id: 'toolu_1', [RECORD_ID_KEY]: 'r-1' });
    expect([withTrace.string(12), withTrace.varint(2), withTrace.string(3), withTrace.message(5).string(1)]).toEqual(['ccotel.tool.decided', 13n, 'WARN', 'denied by rule']);
    expect([withTrace.hex(9), withTrace.hex(10), withTrace.fixed64(1), withTrace.fixed64(11)]).toEqual([TRACE, CHILD, ns(T0), ns(T0)]);
    expect([withoutTrace.has(9), withoutTrace.has(10), keyValues(withoutTrace.messages(6))]).toEqual([false, false, { [RECORD_ID_KEY]: 'r-2' }]);
  });

  it('writes each sum point as a monotonic delta point in its one-minute bucket with its id in an exemplar', () => {
    const later = T0 + 61_000;
    const metrics = new Message(encoder.metrics([point({}), point({ id: 'p-2', timeMs: later, value: 3, spanId: '', traceId: '' })])).message(1).message(2).messages(2);
    expect(metrics).toHaveLength(1); // same metric: one Metric message, two data points
    const metric = metrics[0];
    expect([metric.string(1), metric.string(2), metric.string(3)]).toEqual(['ccotel.tool.calls', 'Tool calls', '{call}']);
    const sum = metric.message(7);
    expect([sum.varint(2), sum.varint(3)]).toEqual([1n, 1n]); // DELTA, monotonic
    const [first, second] = sum.messages(1);
    const minute = Math.floor(T0 / 60_000) * 60_000;
    expect([first.fixed64(2), first.fixed64(3), first.double(4)]).toEqual([ns(minute), ns(minute + 60_000), 1]);
    expect(keyValues(first.messages(7))).toEqual({ 'gen_ai.tool.name': 'Bash', outcome: 'success' });
    const exemplar = first.message(5);
    expect(keyValues(exemplar.messages(7))).toEqual({ [POINT_ID_KEY]: 'p-1' });
    expect([exemplar.hex(5), exemplar.hex(4), exemplar.fixed64(2), exemplar.double(3)]).toEqual([TRACE, CHILD, ns(Math.floor(T0 / 1000) * 1000), 1]);
    expect([second.fixed64(2), second.double(4)]).toEqual([ns(minute + 60_000), 3]);
    expect([second.message(5).has(4), second.message(5).has(5), keyValues(second.message(5).messages(7))]).toEqual([false, false, { [POINT_ID_KEY]: 'p-2' }]);
  });

  it('writes a histogram observation with the shared bounds, one count in the right bucket, min, max and exemplar', () => {
    const metrics = new Message(encoder.metrics([
      point({ id: 'h-1', name: 'ccotel.tool.duration', unit: 's', kind: 'histogram', value: 0.3 }),
      point({ id: 'c-1' }),
    ])).message(1).message(2).messages(2);
    const histogramMetric = metrics.find((m) => m.string(1) === 'ccotel.tool.duration')!;
    expect(metrics).toHaveLength(2);
    const histogram = histogramMetric.message(9);
    expect(histogram.varint(2)).toBe(1n);
    const dataPoint = histogram.message(1);
    expect([dataPoint.fixed64(4), dataPoint.double(5), dataPoint.double(11), dataPoint.double(12)]).toEqual([1n, 0.3, 0.3, 0.3]);
    expect(dataPoint.packedDoubles(7)).toEqual(HISTOGRAM_BOUNDS);
    const counts = dataPoint.packedFixed64(6);
    expect(counts).toHaveLength(HISTOGRAM_BOUNDS.length + 1);
    expect(counts.indexOf(1n)).toBe(HISTOGRAM_BOUNDS.indexOf(0.5)); // 0.25 < 0.3 ≤ 0.5
    expect(counts.reduce((a, b) => a + b)).toBe(1n);
    expect(keyValues(dataPoint.message(8).messages(7))).toEqual({ [POINT_ID_KEY]: 'h-1' });
  });

  it("writes a GenAI histogram with the conventions' bounds, and the schema URL on resource and scope of every signal", () => {
    const resourceMetrics = new Message(encoder.metrics([point({ id: 't-1', name: 'gen_ai.client.token.usage', unit: '{token}', kind: 'histogram', value: 3000 })])).message(1);
    const dataPoint = resourceMetrics.message(2).messages(2)[0].message(9).message(1);
    expect(dataPoint.packedDoubles(7)).toEqual(histogramBounds('gen_ai.client.token.usage'));
    expect(dataPoint.packedDoubles(7)).not.toEqual(HISTOGRAM_BOUNDS);
    expect(dataPoint.packedFixed64(6).indexOf(1n)).toBe(histogramBounds('gen_ai.client.token.usage').indexOf(4096)); // 1024 < 3000 ≤ 4096
    for (const request of [resourceMetrics, new Message(encoder.traces([span({})])).message(1), new Message(encoder.logs([{ id: 'r', timeMs: T0, eventName: 'e', severity: 'INFO', traceId: '', spanId: '', body: '', attributes: {} }])).message(1)]) {
      expect([request.string(3), request.message(2).string(3)]).toEqual([SCHEMA_URL, SCHEMA_URL]);
    }
  });

  it('writes spans and logs as the official serializers write them from ReadableSpan / ReadableLogRecord, odd strings and received items included', () => {
    const odd = {
      unicode: 'héllo wörld — 日本語 🚀',
      nul: 'a\u0000b',
      lone: 'x\ud800y',
      newline: 'line 1\nline 2\r\n\t',
      long: 'ü'.repeat(10_000), // a 20 kB value: a three-byte length, and messages around it that grow past their reserved byte
      empty: '',
      integer: -42,
      big: 2 ** 53,
      float: 0.1,
      yes: true,
      no: false,
    };
    const received: Origin = { resource: { 'service.name': 'claude-code', 'host.arch': 'amd64' }, scopeName: 'com.anthropic.claude_code', scopeVersion: '2.1.0' };
    const spans: SpanRecord[] = [
      span({ attributes: odd, statusMessage: odd.unicode }),
      span({ spanId: CHILD, parentSpanId: ROOT, name: 'execute_tool Bash ✓', kind: 'client', status: 'error', statusMessage: odd.nul, events: [{ name: 'PreToolUse', timeMs: T0 + 10, attributes: odd }, { name: 'e2', timeMs: T0 + 0.001, attributes: {} }] }),
      span({ spanId: 'aaaaaaaaaaaaaaaa', endMs: T0 - 5, status: 'ok', links: [{ traceId: 'f'.repeat(32), spanId: 'e'.repeat(16), traceState: '', attributes: { linked: 'yes' } }] }),
      span({ spanId: 'bbbbbbbbbbbbbbbb', kind: 'server', origin: { ...received, spanKind: 'SPAN_KIND_PRODUCER', traceState: 'k=v', links: [{ traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), traceState: '', attributes: {} }] } }),
      span({ spanId: 'cccccccccccccccc', origin: { ...received, spanKind: 'SPAN_KIND_UNSPECIFIED', traceState: '', links: [] } }),
      span({ spanId: 'dddddddddddddddd', origin: { ...received, scopeVersion: '2.1.1', spanKind: 'SPAN_KIND_SERVER', traceState: '', links: [] } }),
      span({ spanId: 'eeeeeeeeeeeeeeee', attributes: { after: 'received' } }),
    ];
    const logs: LogRecord[] = [
      { id: 'r-1', timeMs: T0, eventName: 'ccotel.tool.decided', severity: 'WARN', traceId: TRACE, spanId: CHILD, body: odd.long, attributes: odd },
      { id: 'r-2', timeMs: T0 + 1, eventName: '', severity: 'DEBUG', traceId: '', spanId: '', body: '', attributes: {} },
      { id: 'r-3', timeMs: T0 + 2, eventName: 'e', severity: 'ERROR', traceId: TRACE, spanId: '', body: odd.lone, attributes: { [RECORD_ID_KEY]: 'overwritten', z: 1 } },
      { id: 'r-4', timeMs: T0 + 3, eventName: 'claude_code.api_request', severity: 'INFO', traceId: '', spanId: '', body: 'x', attributes: { n: 1 }, origin: { ...received, severityText: '', severityNumber: 0, traceFlags: 0 } },
      { id: 'r-5', timeMs: T0 + 4, eventName: 'claude_code.tool_result', severity: 'INFO', traceId: TRACE, spanId: ROOT, body: 'y', attributes: {}, origin: { ...received, severityText: 'info', severityNumber: 9, traceFlags: 1 } },
    ];
    const official = new OfficialPath();
    const sameMessage = (ours: Uint8Array, theirs: Uint8Array) => {
      // Plain Uint8Arrays on both sides (ours are Buffers): decoded field by field, then byte for byte.
      expect(new Message(Uint8Array.from(ours)).fields).toEqual(new Message(Uint8Array.from(theirs)).fields);
      expect(Buffer.from(ours).equals(Buffer.from(theirs))).toBe(true);
    };
    sameMessage(encoder.traces(spans), ProtobufTraceSerializer.serializeRequest(spans.map((s) => official.span(s)))!);
    sameMessage(encoder.logs(logs), ProtobufLogsSerializer.serializeRequest(logs.map((l) => official.log(l)))!);
    // What the strings decode to: the official UTF-8 (a lone surrogate as U+FFFD).
    const [first] = new Message(encoder.traces(spans)).message(1).message(2).messages(2);
    expect(keyValues(first.messages(9))).toMatchObject({ unicode: odd.unicode, nul: odd.nul, lone: 'x\ufffdy', long: odd.long, big: 2 ** 53 });
  });

  it('reads partial-success answers', () => {
    // ExportTraceServiceResponse { partial_success (1) { rejected_spans (1) = 3, error_message (2) = "bad" } }
    const answer = Uint8Array.from([0x0a, 0x07, 0x08, 0x03, 0x12, 0x03, ...Buffer.from('bad')]);
    expect(partialRejection('traces', answer)).toEqual({ rejected: 3, message: 'bad' });
    expect(partialRejection('logs', new Uint8Array())).toBeUndefined();
  });
});

/**
 * How spans and logs went through @opentelemetry/otlp-transformer's serializers before ccotel wrote them itself, as the
 * reference: the model as ReadableSpan / ReadableLogRecord. One resource and one scope object per source, since the
 * serializers group items by object.
 */
class OfficialPath {
  private readonly resources = new Map<string, OtelResource>();
  private readonly scopes = new Map<string, InstrumentationScope>();
  private readonly own: { resource: OtelResource; scope: InstrumentationScope };

  constructor() {
    this.own = { resource: resourceFromAttributes(resource, { schemaUrl: SCHEMA_URL }), scope: { name: 'ccotel', version: '9.9.9', schemaUrl: SCHEMA_URL } };
  }

  private source(origin: Origin | undefined): { resource: OtelResource; scope: InstrumentationScope } {
    if (!origin) return this.own;
    const resourceKey = JSON.stringify(origin.resource);
    if (!this.resources.has(resourceKey)) this.resources.set(resourceKey, resourceFromAttributes(origin.resource));
    const scopeKey = `${origin.scopeName} ${origin.scopeVersion}`;
    if (!this.scopes.has(scopeKey)) this.scopes.set(scopeKey, { name: origin.scopeName, version: origin.scopeVersion });
    return { resource: this.resources.get(resourceKey)!, scope: this.scopes.get(scopeKey)! };
  }

  span(span: SpanRecord): ReadableSpan {
    const kinds: Record<string, SpanKind> = { internal: SpanKind.INTERNAL, client: SpanKind.CLIENT, server: SpanKind.SERVER, SPAN_KIND_SERVER: SpanKind.SERVER, SPAN_KIND_CLIENT: SpanKind.CLIENT, SPAN_KIND_PRODUCER: SpanKind.PRODUCER, SPAN_KIND_CONSUMER: SpanKind.CONSUMER };
    const codes = { unset: SpanStatusCode.UNSET, ok: SpanStatusCode.OK, error: SpanStatusCode.ERROR };
    const { origin } = span;
    const { resource: spanResource, scope } = this.source(origin);
    return {
      name: span.name,
      kind: kinds[origin ? origin.spanKind : span.kind] ?? SpanKind.INTERNAL,
      spanContext: () => ({ traceId: span.traceId, spanId: span.spanId, traceFlags: TraceFlags.SAMPLED }),
      parentSpanContext: span.parentSpanId ? { traceId: span.traceId, spanId: span.parentSpanId, traceFlags: TraceFlags.SAMPLED } : undefined,
      startTime: millisToHrTime(span.startMs),
      endTime: millisToHrTime(Math.max(span.endMs, span.startMs)),
      duration: millisToHrTime(Math.max(0, span.endMs - span.startMs)),
      status: { code: codes[span.status], ...(span.statusMessage ? { message: span.statusMessage } : {}) },
      attributes: span.attributes,
      links: (origin?.links ?? span.links ?? []).map((link) => ({ context: { traceId: link.traceId, spanId: link.spanId, traceFlags: TraceFlags.NONE }, attributes: link.attributes, droppedAttributesCount: 0 })),
      events: span.events.map((event) => ({ name: event.name, time: millisToHrTime(event.timeMs), attributes: event.attributes })),
      ended: true,
      resource: spanResource,
      instrumentationScope: scope,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  }

  log(log: LogRecord): ReadableLogRecord {
    const severities = { DEBUG: SeverityNumber.DEBUG, INFO: SeverityNumber.INFO, WARN: SeverityNumber.WARN, ERROR: SeverityNumber.ERROR };
    const time = millisToHrTime(log.timeMs);
    const { origin } = log;
    const { resource: logResource, scope } = this.source(origin);
    return {
      hrTime: time,
      hrTimeObserved: time,
      spanContext: log.traceId ? { traceId: log.traceId, spanId: log.spanId, traceFlags: TraceFlags.SAMPLED } : undefined,
      severityText: origin ? origin.severityText : log.severity,
      severityNumber: origin ? (origin.severityNumber as SeverityNumber) : severities[log.severity],
      body: log.body,
      eventName: log.eventName,
      resource: logResource,
      instrumentationScope: scope,
      attributes: { ...log.attributes, [RECORD_ID_KEY]: log.id },
      droppedAttributesCount: 0,
    };
  }
}
