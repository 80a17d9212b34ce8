// Received OTLP requests (in OTLP/JSON's shape: otlp-protobuf.ts brings protobuf to it) as the shared model,
// each item with its origin (resource and scope as sent), so the sinks write the rows the Collector's ClickHouse
// exporter would write for them: attribute values as strings the way pdata's AsString renders them, ids in
// lowercase hex, a log record without a time at its observed time. What the model adds is an id per log record
// and per point, taken from its content, so an export retried after a failed write is stored once.
import { recordIdOf } from '../ids.js';
import type { Attributes, AttrValue, LogRecord, MetricPoint, Origin, Severity, SpanRecord, SpanStatus, TelemetryBatch } from '../model.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- a received request is walked structurally, and checked as it is */
type Json = any;

export interface Received {
  batch: TelemetryBatch;
  /** Items of kinds the store has no place for (exponential histograms, summaries): refused, and said so. */
  rejected: number;
  rejectedWhy: string;
}

const SPAN_KINDS = ['SPAN_KIND_UNSPECIFIED', 'SPAN_KIND_INTERNAL', 'SPAN_KIND_SERVER', 'SPAN_KIND_CLIENT', 'SPAN_KIND_PRODUCER', 'SPAN_KIND_CONSUMER'];
const STATUS: SpanStatus[] = ['unset', 'ok', 'error'];
const STATUS_NAMES = ['STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR'];

/** An enum as proto3 JSON allows it: its number, or its name. */
function enumValue(value: unknown, names: readonly string[]): number {
  if (typeof value === 'string' && names.includes(value)) return names.indexOf(value);
  const number = Number(value ?? 0);
  return Number.isInteger(number) ? number : 0;
}

/** Nanoseconds since the epoch (a decimal string or a number) as fractional milliseconds. */
export function nanosToMs(value: unknown): number {
  if (value === undefined || value === null || value === '') return 0;
  const nanos = BigInt(typeof value === 'number' ? Math.round(value) : String(value));
  return Number(nanos / 1_000_000n) + Number(nanos % 1_000_000n) / 1e6;
}

/** Ids as the exporter stores them: lowercase hex; the all-zero id of "no parent" as ''. */
function hexId(value: unknown): string {
  const text = typeof value === 'string' ? value.toLowerCase() : '';
  if (!/^[0-9a-f]*$/.test(text)) throw new Error(`not a hex id: ${JSON.stringify(value).slice(0, 40)}`);
  return /^0*$/.test(text) ? '' : text;
}

/** An AnyValue as JSON (for arrays and maps inside a string). */
function plain(value: Json): unknown {
  if (!value || typeof value !== 'object') return null;
  if ('stringValue' in value) return String(value.stringValue);
  if ('boolValue' in value) return Boolean(value.boolValue);
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return Number(value.doubleValue);
  if ('bytesValue' in value) return String(value.bytesValue);
  if ('arrayValue' in value) return (value.arrayValue?.values ?? []).map(plain);
  if ('kvlistValue' in value) return Object.fromEntries((value.kvlistValue?.values ?? []).map((kv: Json) => [String(kv.key), plain(kv.value)]));
  return null;
}

/** An AnyValue as an attribute: scalars as they are (a 64-bit integer past 2^53 as its digits), the rest as JSON. */
function attributeValue(value: Json): AttrValue {
  if (value && typeof value === 'object') {
    if ('stringValue' in value) return String(value.stringValue);
    if ('boolValue' in value) return Boolean(value.boolValue);
    if ('intValue' in value) {
      const number = Number(value.intValue);
      return Number.isSafeInteger(number) ? number : String(value.intValue);
    }
    if ('doubleValue' in value) return Number(value.doubleValue);
  }
  const json = plain(value);
  return json === null ? '' : JSON.stringify(json);
}

function attributesOf(list: Json): Attributes {
  const attributes: Attributes = {};
  if (!Array.isArray(list)) return attributes;
  for (const kv of list) if (typeof kv?.key === 'string') attributes[kv.key] = attributeValue(kv.value);
  return attributes;
}

function originOf(resource: Json, scope: Json): Origin {
  return { resource: attributesOf(resource?.attributes), scopeName: String(scope?.name ?? ''), scopeVersion: String(scope?.version ?? '') };
}

const list = (value: Json): Json[] => (Array.isArray(value) ? value : []);

/** Each item of `request` with the origin of its envelope (ResourceX { resource, scopeX[] { scope, items[] } }). */
function* scoped(request: Json, resourceKey: string, scopeKey: string, itemsKey: string): Generator<[Json, Origin]> {
  for (const resource of list(request?.[resourceKey])) {
    for (const scope of list(resource?.[scopeKey])) {
      const origin = originOf(resource.resource, scope.scope);
      for (const item of list(scope?.[itemsKey])) yield [item, origin];
    }
  }
}

export function receivedSpans(request: Json): Received {
  const spans: SpanRecord[] = [];
  for (const [span, origin] of scoped(request, 'resourceSpans', 'scopeSpans', 'spans')) {
    const kind = enumValue(span.kind, SPAN_KINDS);
    spans.push({
      origin: {
        ...origin,
        spanKind: SPAN_KINDS[kind] ?? SPAN_KINDS[0],
        traceState: String(span.traceState ?? ''),
        links: list(span.links).map((link) => ({ traceId: hexId(link.traceId), spanId: hexId(link.spanId), traceState: String(link.traceState ?? ''), attributes: attributesOf(link.attributes) })),
      },
      traceId: hexId(span.traceId),
      spanId: hexId(span.spanId),
      parentSpanId: hexId(span.parentSpanId),
      name: String(span.name ?? ''),
      kind: kind === 2 ? 'server' : kind === 3 ? 'client' : 'internal',
      startMs: nanosToMs(span.startTimeUnixNano),
      endMs: nanosToMs(span.endTimeUnixNano),
      status: STATUS[enumValue(span.status?.code, STATUS_NAMES)] ?? 'unset',
      statusMessage: String(span.status?.message ?? ''),
      attributes: attributesOf(span.attributes),
      events: list(span.events).map((event) => ({ name: String(event.name ?? ''), timeMs: nanosToMs(event.timeUnixNano), attributes: attributesOf(event.attributes) })),
    });
  }
  return { batch: { spans, logs: [], metrics: [] }, rejected: 0, rejectedWhy: '' };
}

/** The model's severity nearest a SeverityNumber (1-4 TRACE … 21-24 FATAL); the number itself is kept. */
function severityOf(number: number): Severity {
  if (number >= 17) return 'ERROR';
  if (number >= 13) return 'WARN';
  if (number >= 9 || number === 0) return 'INFO';
  return 'DEBUG';
}

export function receivedLogs(request: Json): Received {
  const logs: LogRecord[] = [];
  for (const [record, origin] of scoped(request, 'resourceLogs', 'scopeLogs', 'logRecords')) {
    const severityNumber = enumValue(record.severityNumber, []);
    const timeMs = nanosToMs(record.timeUnixNano) || nanosToMs(record.observedTimeUnixNano);
    const body = record.body === undefined ? '' : attributeValue(record.body);
    const log: LogRecord = {
      origin: { ...origin, severityText: String(record.severityText ?? ''), severityNumber, traceFlags: Number(record.flags ?? 0) & 0xff },
      id: '',
      timeMs,
      eventName: String(record.eventName ?? ''),
      severity: severityOf(severityNumber),
      traceId: hexId(record.traceId),
      spanId: hexId(record.spanId),
      body: String(body),
      attributes: attributesOf(record.attributes),
    };
    // From the record as read, not as sent: the same record in JSON and in protobuf has one id.
    log.id = recordIdOf('received log', JSON.stringify(log));
    logs.push(log);
  }
  return { batch: { spans: [], logs, metrics: [] }, rejected: 0, rejectedWhy: '' };
}

export function receivedMetrics(request: Json): Received {
  const metrics: MetricPoint[] = [];
  let rejected = 0;
  for (const [metric, origin] of scoped(request, 'resourceMetrics', 'scopeMetrics', 'metrics')) {
    const [kind, data]: [MetricPoint['kind'] | undefined, Json] = metric.sum ? ['sum', metric.sum] : metric.gauge ? ['gauge', metric.gauge] : metric.histogram ? ['histogram', metric.histogram] : [undefined, metric.exponentialHistogram ?? metric.summary];
    if (!kind) {
      rejected += list(data?.dataPoints).length;
      continue;
    }
    const temporality = enumValue(data.aggregationTemporality, ['AGGREGATION_TEMPORALITY_UNSPECIFIED', 'AGGREGATION_TEMPORALITY_DELTA', 'AGGREGATION_TEMPORALITY_CUMULATIVE']);
    for (const point of list(data.dataPoints)) {
      const histogram = kind === 'histogram'
        ? {
            count: Number(point.count ?? 0),
            bucketCounts: list(point.bucketCounts).map(Number),
            bounds: list(point.explicitBounds).map(Number),
            min: Number(point.min ?? 0),
            max: Number(point.max ?? 0),
          }
        : undefined;
      const received: MetricPoint = {
        origin: { ...origin, startMs: nanosToMs(point.startTimeUnixNano), temporality, monotonic: Boolean(data.isMonotonic), ...(histogram ? { histogram } : {}) },
        id: '',
        name: String(metric.name ?? ''),
        unit: String(metric.unit ?? ''),
        description: String(metric.description ?? ''),
        kind,
        timeMs: nanosToMs(point.timeUnixNano),
        value: kind === 'histogram' ? Number(point.sum ?? 0) : Number(point.asDouble ?? point.asInt ?? 0),
        attributes: attributesOf(point.attributes),
        traceId: '',
        spanId: '',
      };
      received.id = recordIdOf('received point', JSON.stringify(received));
      metrics.push(received);
    }
  }
  const rejectedWhy = rejected > 0 ? 'exponential histograms and summaries are not stored' : '';
  return { batch: { spans: [], logs: [], metrics }, rejected, rejectedWhy };
}
/* eslint-enable @typescript-eslint/no-explicit-any */
