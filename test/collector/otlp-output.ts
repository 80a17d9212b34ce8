// Reads the collector's file-exporter output (OTLP/JSON, one export per line) into flat records keyed by
// our ids, and compares them with the telemetry the sidecar handed to its sinks (the reference).
import { histogramBounds, POINT_ID_KEY, RECORD_ID_KEY } from '../../sidecar/src/semconv.js';
import type { AttrValue, Attributes, LogRecord, MetricPoint, Sink, SpanRecord, TelemetryBatch } from '../../sidecar/src/model.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Flat = Record<string, string>;

export interface OutSpan {
  traceId: string; spanId: string; parentSpanId: string; name: string; kind: number;
  startNs: string; endNs: string; statusCode: number; statusMessage: string;
  attributes: Flat; events: { name: string; timeNs: string; attributes: Flat }[]; resource: Flat; scope: string;
}
export interface OutLog {
  id: string; eventName: string; severityText: string; severityNumber: number; body: string;
  traceId: string; spanId: string; timeNs: string; attributes: Flat; resource: Flat;
}
export interface OutPoint {
  id: string; name: string; unit: string; kind: 'sum' | 'histogram'; temporality: number; monotonic: boolean;
  startNs: string; timeNs: string; value: number; count: number; bounds: number[]; counts: number[];
  attributes: Flat; exemplar: { traceId: string; spanId: string; timeNs: string }; resource: Flat;
}
export interface Output {
  spans: OutSpan[];
  logs: OutLog[];
  points: OutPoint[];
}

/** An attribute value as the ClickHouse exporter stores it in a Map(String, String). */
function valueString(value: Json | undefined): string {
  if (!value) return '';
  if ('stringValue' in value) return String(value.stringValue);
  if ('intValue' in value) return String(value.intValue);
  if ('doubleValue' in value) return String(value.doubleValue);
  if ('boolValue' in value) return String(value.boolValue);
  return JSON.stringify(value);
}

function flat(kvs: Json[] | undefined): Flat {
  const out: Flat = {};
  for (const kv of kvs ?? []) out[kv.key] = valueString(kv.value);
  return out;
}

export function readOutput(lines: unknown[]): Output {
  const output: Output = { spans: [], logs: [], points: [] };
  for (const line of lines as Json[]) {
    for (const rs of line.resourceSpans ?? []) {
      const resource = flat(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          output.spans.push({
            traceId: s.traceId ?? '', spanId: s.spanId ?? '', parentSpanId: s.parentSpanId ?? '', name: s.name, kind: s.kind ?? 0,
            startNs: String(s.startTimeUnixNano), endNs: String(s.endTimeUnixNano), statusCode: s.status?.code ?? 0, statusMessage: s.status?.message ?? '',
            attributes: flat(s.attributes), resource, scope: ss.scope?.name ?? '',
            events: (s.events ?? []).map((e: Json) => ({ name: e.name, timeNs: String(e.timeUnixNano), attributes: flat(e.attributes) })),
          });
        }
      }
    }
    for (const rl of line.resourceLogs ?? []) {
      const resource = flat(rl.resource?.attributes);
      for (const sl of rl.scopeLogs ?? []) {
        for (const l of sl.logRecords ?? []) {
          const attributes = flat(l.attributes);
          output.logs.push({
            id: attributes[RECORD_ID_KEY] ?? '', eventName: l.eventName ?? '', severityText: l.severityText ?? '', severityNumber: l.severityNumber ?? 0,
            body: valueString(l.body), traceId: l.traceId ?? '', spanId: l.spanId ?? '', timeNs: String(l.timeUnixNano), attributes, resource,
          });
        }
      }
    }
    for (const rm of line.resourceMetrics ?? []) {
      const resource = flat(rm.resource?.attributes);
      for (const sm of rm.scopeMetrics ?? []) {
        for (const m of sm.metrics ?? []) {
          const data = m.sum ?? m.histogram;
          for (const p of data?.dataPoints ?? []) {
            const exemplar = (p.exemplars ?? [])[0] ?? {};
            output.points.push({
              id: flat(exemplar.filteredAttributes)[POINT_ID_KEY] ?? '', name: m.name, unit: m.unit ?? '', kind: m.sum ? 'sum' : 'histogram',
              temporality: data.aggregationTemporality ?? 0, monotonic: data.isMonotonic === true,
              startNs: String(p.startTimeUnixNano), timeNs: String(p.timeUnixNano),
              value: m.sum ? Number(p.asDouble ?? p.asInt) : Number(p.sum), count: Number(p.count ?? 0),
              bounds: p.explicitBounds ?? [], counts: (p.bucketCounts ?? []).map(Number), attributes: flat(p.attributes), resource,
              exemplar: { traceId: exemplar.traceId ?? '', spanId: exemplar.spanId ?? '', timeNs: String(exemplar.timeUnixNano ?? '') },
            });
          }
        }
      }
    }
  }
  return output;
}

/** Keeps every batch a pipeline delivered: the reference the collector's output is compared with. */
export class RecordingSink implements Sink {
  readonly name = 'recording';
  readonly batch: TelemetryBatch = { spans: [], logs: [], metrics: [] };

  async write(batch: TelemetryBatch): Promise<void> {
    this.batch.spans.push(...batch.spans);
    this.batch.logs.push(...batch.logs);
    this.batch.metrics.push(...batch.metrics);
  }

  async close(): Promise<void> {}
}

/** Epoch ms to the nanosecond string OTLP carries (as the SDK's millisToHrTime rounds). */
export function nanos(ms: number): string {
  return (BigInt(Math.trunc(ms / 1000)) * 1_000_000_000n + BigInt(Math.round((ms % 1000) * 1e6))).toString();
}

const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;
const STATUS_CODE = { unset: 0, ok: 1, error: 2 } as const;

export interface Comparison {
  /** Reference ids with no record in the output. */
  missing: string[];
  /** Records whose content differs from the reference: id and what differs. */
  mismatched: { id: string; problems: string[] }[];
  /** Output records beyond the first per id (at-least-once repeats). */
  duplicates: { spans: number; logs: number; points: number };
  /** Output attribute keys the reference does not have (added by the collector). */
  addedKeys: Set<string>;
  counts: { spans: number; logs: number; points: number };
}

function byId<T>(items: T[], idOf: (item: T) => string): { first: Map<string, T>; repeats: number } {
  const first = new Map<string, T>();
  let repeats = 0;
  for (const item of items) {
    if (first.has(idOf(item))) repeats++;
    else first.set(idOf(item), item);
  }
  return { first, repeats };
}

function compareAttributes(expected: Attributes, actual: Flat, where: string, problems: string[], added: Set<string>): void {
  for (const [key, value] of Object.entries(expected)) {
    if (actual[key] !== String(value as AttrValue)) problems.push(`${where} ${key}: expected ${JSON.stringify(String(value))}, got ${JSON.stringify(actual[key])}`);
  }
  for (const key of Object.keys(actual)) if (!(key in expected)) added.add(key);
}

function check(problems: string[], what: string, expected: unknown, actual: unknown): void {
  if (JSON.stringify(expected) !== JSON.stringify(actual)) problems.push(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

/** Every reference item must be in the output once or more, with the same ids, times, names and attributes. */
export function compareWithReference(reference: TelemetryBatch, output: Output, resource: Attributes): Comparison {
  const result: Comparison = { missing: [], mismatched: [], duplicates: { spans: 0, logs: 0, points: 0 }, addedKeys: new Set(), counts: { spans: 0, logs: 0, points: 0 } };
  const spans = byId(output.spans, (s) => s.spanId);
  const logs = byId(output.logs, (l) => l.id);
  const points = byId(output.points, (p) => p.id);
  // The reference itself may hold an id twice (the pipeline's own at-least-once); only output repeats beyond it count.
  const refSpans = byId(reference.spans, (s) => s.spanId);
  const refLogs = byId(reference.logs, (l) => l.id);
  const refPoints = byId(reference.metrics, (p) => p.id);
  result.duplicates = { spans: spans.repeats - refSpans.repeats, logs: logs.repeats - refLogs.repeats, points: points.repeats - refPoints.repeats };
  result.counts = { spans: refSpans.first.size, logs: refLogs.first.size, points: refPoints.first.size };
  const added = result.addedKeys;
  const report = (id: string, problems: string[]) => {
    if (problems.length > 0) result.mismatched.push({ id, problems });
  };

  for (const [id, span] of refSpans.first) {
    const out = spans.first.get(id);
    if (!out) {
      result.missing.push(`span ${id} ${span.name}`);
      continue;
    }
    report(id, spanProblems(span, out, resource, added));
  }
  for (const [id, log] of refLogs.first) {
    const out = logs.first.get(id);
    if (!out) {
      result.missing.push(`log ${id} ${log.eventName}`);
      continue;
    }
    report(id, logProblems(log, out, added));
  }
  for (const [id, point] of refPoints.first) {
    const out = points.first.get(id);
    if (!out) {
      result.missing.push(`point ${id} ${point.name}`);
      continue;
    }
    report(id, pointProblems(point, out));
  }
  return result;
}

function spanProblems(span: SpanRecord, out: OutSpan, resource: Attributes, added: Set<string>): string[] {
  const problems: string[] = [];
  check(problems, 'ids', [span.traceId, span.parentSpanId, span.name], [out.traceId, out.parentSpanId, out.name]);
  check(problems, 'kind/status', [SPAN_KIND[span.kind], STATUS_CODE[span.status], span.statusMessage], [out.kind, out.statusCode, out.statusMessage]);
  check(problems, 'times', [nanos(span.startMs), nanos(Math.max(span.endMs, span.startMs))], [out.startNs, out.endNs]);
  check(problems, 'scope', 'ccotel', out.scope);
  compareAttributes(span.attributes, out.attributes, 'attribute', problems, added);
  compareAttributes(resource, out.resource, 'resource', problems, new Set());
  check(problems, 'events', span.events.map((e) => [e.name, nanos(e.timeMs)]), out.events.map((e) => [e.name, e.timeNs]));
  span.events.forEach((event, i) => out.events[i] && compareAttributes(event.attributes, out.events[i].attributes, `event ${event.name}`, problems, added));
  return problems;
}

function logProblems(log: LogRecord, out: OutLog, added: Set<string>): string[] {
  const problems: string[] = [];
  check(problems, 'event/severity/body', [log.eventName, log.severity, log.body], [out.eventName, out.severityText, out.body]);
  check(problems, 'trace context', [log.traceId, log.spanId], [out.traceId, out.spanId]);
  check(problems, 'time', nanos(log.timeMs), out.timeNs);
  compareAttributes({ ...log.attributes, [RECORD_ID_KEY]: log.id }, out.attributes, 'attribute', problems, added);
  return problems;
}

function pointProblems(point: MetricPoint, out: OutPoint): string[] {
  const problems: string[] = [];
  const bucket = Math.floor(point.timeMs / 60_000) * 60_000;
  check(problems, 'metric', [point.name, point.unit, point.kind, 1], [out.name, out.unit, out.kind, out.temporality]);
  check(problems, 'bucket', [nanos(bucket), nanos(bucket + 60_000)], [out.startNs, out.timeNs]);
  check(problems, 'value', point.value, out.value);
  check(problems, 'exemplar', [point.traceId, point.spanId, nanos(Math.floor(point.timeMs / 1000) * 1000)], [out.exemplar.traceId, out.exemplar.spanId, out.exemplar.timeNs]);
  const expectedAttributes: Flat = {};
  for (const [key, value] of Object.entries(point.attributes)) expectedAttributes[key] = String(value);
  check(problems, 'attributes', expectedAttributes, out.attributes);
  if (point.kind === 'sum') check(problems, 'monotonic', true, out.monotonic);
  else check(problems, 'histogram', [1, histogramBounds(point.name), 1], [out.count, out.bounds, out.counts.reduce((a, b) => a + b, 0)]);
  return problems;
}
