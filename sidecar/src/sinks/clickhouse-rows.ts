// Map the shared model onto the rows the Collector's ClickHouse exporter writes (pinned v0.161.0), so the
// embedded store and a Collector-fed server hold identical rows. Value spellings follow the exporter:
// SpanKind `SPAN_KIND_*`, StatusCode `STATUS_CODE_*`, maps of strings, delta sums with temporality 1.
import type { Attributes, LogRecord, MetricPoint, Resource, SpanRecord } from '../model.js';
import { HISTOGRAM_BOUNDS, POINT_ID_KEY, RECORD_ID_KEY, SCOPE_NAME } from '../semconv.js';

const SPAN_KIND = { internal: 'SPAN_KIND_INTERNAL', client: 'SPAN_KIND_CLIENT', server: 'SPAN_KIND_SERVER' } as const;
const STATUS_CODE = { unset: 'STATUS_CODE_UNSET', ok: 'STATUS_CODE_OK', error: 'STATUS_CODE_ERROR' } as const;
const SEVERITY_NUMBER = { DEBUG: 5, INFO: 9, WARN: 13, ERROR: 17 } as const;
const DELTA_TEMPORALITY = 1;

export function stringMap(attributes: Attributes): Record<string, string> {
  const map: Record<string, string> = {};
  for (const [key, value] of Object.entries(attributes)) map[key] = String(value);
  return map;
}

/** `YYYY-MM-DD hh:mm:ss.fffffffff` in UTC, what DateTime64(9) parses without time zone surprises. */
export function clickhouseTime(ms: number): string {
  const whole = Math.floor(ms);
  const iso = new Date(whole).toISOString(); // 2026-01-02T03:04:05.678Z
  const subMs = Math.round((ms - whole) * 1e6)
    .toString()
    .padStart(6, '0');
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}${subMs}`;
}

function clickhouseSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19).replace('T', ' ');
}

export class RowMapper {
  private readonly resource: Record<string, string>;
  private readonly serviceName: string;

  constructor(resource: Resource, private readonly scopeVersion: string) {
    this.resource = stringMap(resource);
    this.serviceName = this.resource['service.name'] ?? 'ccotel';
  }

  span(span: SpanRecord) {
    return {
      Timestamp: clickhouseTime(span.startMs),
      TraceId: span.traceId,
      SpanId: span.spanId,
      ParentSpanId: span.parentSpanId,
      TraceState: '',
      SpanName: span.name,
      SpanKind: SPAN_KIND[span.kind],
      ServiceName: this.serviceName,
      ResourceAttributes: this.resource,
      ScopeName: SCOPE_NAME,
      ScopeVersion: this.scopeVersion,
      SpanAttributes: stringMap(span.attributes),
      Duration: Math.max(0, Math.round((span.endMs - span.startMs) * 1e6)),
      StatusCode: STATUS_CODE[span.status],
      StatusMessage: span.statusMessage,
      'Events.Timestamp': span.events.map((event) => clickhouseTime(event.timeMs)),
      'Events.Name': span.events.map((event) => event.name),
      'Events.Attributes': span.events.map((event) => stringMap(event.attributes)),
      'Links.TraceId': [],
      'Links.SpanId': [],
      'Links.TraceState': [],
      'Links.Attributes': [],
    };
  }

  log(log: LogRecord) {
    return {
      Timestamp: clickhouseTime(log.timeMs),
      TraceId: log.traceId,
      SpanId: log.spanId,
      TraceFlags: log.traceId ? 1 : 0,
      SeverityText: log.severity,
      SeverityNumber: SEVERITY_NUMBER[log.severity],
      ServiceName: this.serviceName,
      Body: log.body,
      ResourceSchemaUrl: '',
      ResourceAttributes: this.resource,
      ScopeSchemaUrl: '',
      ScopeName: SCOPE_NAME,
      ScopeVersion: this.scopeVersion,
      ScopeAttributes: {},
      LogAttributes: { ...stringMap(log.attributes), [RECORD_ID_KEY]: log.id },
      EventName: log.eventName,
    };
  }

  /** Common columns of every metrics table; the point sits in its one-minute delta bucket. */
  private metricBase(point: MetricPoint) {
    const bucketStart = Math.floor(point.timeMs / 60_000) * 60_000;
    return {
      ResourceAttributes: this.resource,
      ResourceSchemaUrl: '',
      ScopeName: SCOPE_NAME,
      ScopeVersion: this.scopeVersion,
      ScopeAttributes: {},
      ScopeDroppedAttrCount: 0,
      ScopeSchemaUrl: '',
      ServiceName: this.serviceName,
      MetricName: point.name,
      MetricDescription: point.description,
      MetricUnit: point.unit,
      Attributes: stringMap(point.attributes),
      StartTimeUnix: clickhouseSeconds(bucketStart),
      TimeUnix: clickhouseSeconds(bucketStart + 60_000),
      Flags: 0,
      'Exemplars.FilteredAttributes': [{ [POINT_ID_KEY]: point.id }],
      'Exemplars.TimeUnix': [clickhouseSeconds(point.timeMs)],
      'Exemplars.Value': [point.value],
      'Exemplars.SpanId': [point.spanId],
      'Exemplars.TraceId': [point.traceId],
      AggregationTemporality: DELTA_TEMPORALITY,
    };
  }

  sum(point: MetricPoint) {
    return { ...this.metricBase(point), Value: point.value, IsMonotonic: true };
  }

  /** One observation as a histogram point with the exporter's columns; bounds are fixed so points merge. */
  histogram(point: MetricPoint) {
    const counts = HISTOGRAM_BOUNDS.map(() => 0).concat(0);
    const bucket = HISTOGRAM_BOUNDS.findIndex((bound) => point.value <= bound);
    counts[bucket === -1 ? HISTOGRAM_BOUNDS.length : bucket] = 1;
    return {
      ...this.metricBase(point),
      Count: 1,
      Sum: point.value,
      BucketCounts: counts,
      ExplicitBounds: HISTOGRAM_BOUNDS,
      Min: point.value,
      Max: point.value,
    };
  }
}
