// Map the shared model onto the rows the Collector's ClickHouse exporter writes (pinned v0.161.0), so the
// embedded store and a Collector-fed server hold identical rows. Value spellings follow the exporter:
// SpanKind `SPAN_KIND_*`, StatusCode `STATUS_CODE_*`, maps of strings, delta sums with temporality 1.
// Rows go to the engine as JSONCompactEachRow: each row is its values in the order of its table's column
// list, which leaves out the columns ccotel always leaves empty (links, schema URLs, trace state, scope
// attributes, flags): the engine fills them with the same empty defaults, and neither side spends time on
// keys or on empty values.
import type { Attributes, LogRecord, MetricPoint, Resource, SpanRecord } from '../model.js';
import { HISTOGRAM_BOUNDS, POINT_ID_KEY, RECORD_ID_KEY, SCOPE_NAME } from '../semconv.js';

const SPAN_KIND = { internal: 'SPAN_KIND_INTERNAL', client: 'SPAN_KIND_CLIENT', server: 'SPAN_KIND_SERVER' } as const;
const STATUS_CODE = { unset: 'STATUS_CODE_UNSET', ok: 'STATUS_CODE_OK', error: 'STATUS_CODE_ERROR' } as const;
const SEVERITY_NUMBER = { DEBUG: 5, INFO: 9, WARN: 13, ERROR: 17 } as const;
const DELTA_TEMPORALITY = 1;

export const SPAN_COLUMNS = [
  'Timestamp', 'TraceId', 'SpanId', 'ParentSpanId', 'SpanName', 'SpanKind', 'ServiceName', 'ResourceAttributes', 'ScopeName',
  'ScopeVersion', 'SpanAttributes', 'Duration', 'StatusCode', 'StatusMessage', 'Events.Timestamp', 'Events.Name', 'Events.Attributes',
] as const;
export const LOG_COLUMNS = [
  'Timestamp', 'TraceId', 'SpanId', 'TraceFlags', 'SeverityText', 'SeverityNumber', 'ServiceName', 'Body', 'ResourceAttributes',
  'ScopeName', 'ScopeVersion', 'LogAttributes', 'EventName',
] as const;
const METRIC_COLUMNS = [
  'ResourceAttributes', 'ScopeName', 'ScopeVersion', 'ServiceName', 'MetricName', 'MetricDescription', 'MetricUnit', 'Attributes',
  'StartTimeUnix', 'TimeUnix', 'Exemplars.FilteredAttributes', 'Exemplars.TimeUnix', 'Exemplars.Value', 'Exemplars.SpanId',
  'Exemplars.TraceId', 'AggregationTemporality',
] as const;
export const SUM_COLUMNS = [...METRIC_COLUMNS, 'Value', 'IsMonotonic'] as const;
export const HISTOGRAM_COLUMNS = [...METRIC_COLUMNS, 'Count', 'Sum', 'BucketCounts', 'ExplicitBounds', 'Min', 'Max'] as const;

export function stringMap(attributes: Attributes): Record<string, string> {
  const map: Record<string, string> = {};
  for (const key in attributes) map[key] = String(attributes[key]);
  return map;
}

/**
 * `YYYY-MM-DD hh:mm:` of each minute met so far: a metric row holds times of two minutes (its bucket's start
 * and end), and rows come in time order, so a few minutes cover most rows. Cleared past a bound.
 */
const minuteTexts = new Map<number, string>();
const MAX_MINUTE_TEXTS = 10_000;

function secondText(second: number): string {
  const minute = Math.floor(second / 60);
  let text = minuteTexts.get(minute);
  if (text === undefined) {
    if (minuteTexts.size >= MAX_MINUTE_TEXTS) minuteTexts.clear();
    const iso = new Date(minute * 60_000).toISOString(); // 2026-01-02T03:04:00.000Z
    text = `${iso.slice(0, 10)} ${iso.slice(11, 17)}`;
    minuteTexts.set(minute, text);
  }
  return text + String(second - minute * 60).padStart(2, '0');
}

/** `YYYY-MM-DD hh:mm:ss.fffffffff` in UTC, what DateTime64(9) parses without time zone surprises. */
export function clickhouseTime(ms: number): string {
  const whole = Math.floor(ms);
  const second = Math.floor(whole / 1000);
  const millis = String(whole - second * 1000).padStart(3, '0');
  const subMs = String(Math.round((ms - whole) * 1e6)).padStart(6, '0');
  return `${secondText(second)}.${millis}${subMs}`;
}

function clickhouseSeconds(ms: number): string {
  return secondText(Math.floor(ms / 1000));
}

export class RowMapper {
  private readonly resource: Record<string, string>;
  private readonly serviceName: string;

  constructor(resource: Resource, private readonly scopeVersion: string) {
    this.resource = stringMap(resource);
    this.serviceName = this.resource['service.name'] ?? 'ccotel';
  }

  /** A span's values in SPAN_COLUMNS order. */
  span(span: SpanRecord): unknown[] {
    return [
      clickhouseTime(span.startMs),
      span.traceId,
      span.spanId,
      span.parentSpanId,
      span.name,
      SPAN_KIND[span.kind],
      this.serviceName,
      this.resource,
      SCOPE_NAME,
      this.scopeVersion,
      stringMap(span.attributes),
      Math.max(0, Math.round((span.endMs - span.startMs) * 1e6)),
      STATUS_CODE[span.status],
      span.statusMessage,
      span.events.map((event) => clickhouseTime(event.timeMs)),
      span.events.map((event) => event.name),
      span.events.map((event) => stringMap(event.attributes)),
    ];
  }

  /** A log record's values in LOG_COLUMNS order. */
  log(log: LogRecord): unknown[] {
    const attributes = stringMap(log.attributes);
    attributes[RECORD_ID_KEY] = log.id;
    return [
      clickhouseTime(log.timeMs),
      log.traceId,
      log.spanId,
      log.traceId ? 1 : 0,
      log.severity,
      SEVERITY_NUMBER[log.severity],
      this.serviceName,
      log.body,
      this.resource,
      SCOPE_NAME,
      this.scopeVersion,
      attributes,
      log.eventName,
    ];
  }

  /** Values of METRIC_COLUMNS; the point sits in its one-minute delta bucket. */
  private metricValues(point: MetricPoint): unknown[] {
    const bucketStart = Math.floor(point.timeMs / 60_000) * 60_000;
    return [
      this.resource,
      SCOPE_NAME,
      this.scopeVersion,
      this.serviceName,
      point.name,
      point.description,
      point.unit,
      stringMap(point.attributes),
      clickhouseSeconds(bucketStart),
      clickhouseSeconds(bucketStart + 60_000),
      [{ [POINT_ID_KEY]: point.id }],
      [clickhouseSeconds(point.timeMs)],
      [point.value],
      [point.spanId],
      [point.traceId],
      DELTA_TEMPORALITY,
    ];
  }

  /** A sum point's values in SUM_COLUMNS order. */
  sum(point: MetricPoint): unknown[] {
    const values = this.metricValues(point);
    values.push(point.value, true);
    return values;
  }

  /** One observation as a histogram point, in HISTOGRAM_COLUMNS order; bounds are fixed so points merge. */
  histogram(point: MetricPoint): unknown[] {
    const counts = new Array<number>(HISTOGRAM_BOUNDS.length + 1).fill(0);
    const bucket = HISTOGRAM_BOUNDS.findIndex((bound) => point.value <= bound);
    counts[bucket === -1 ? HISTOGRAM_BOUNDS.length : bucket] = 1;
    const values = this.metricValues(point);
    values.push(1, point.value, counts, HISTOGRAM_BOUNDS, point.value, point.value);
    return values;
  }
}

/** A row as an object of its columns, for readers and tests. */
export function rowObject(columns: readonly string[], values: unknown[]): Record<string, unknown> {
  return Object.fromEntries(columns.map((column, i) => [column, values[i]]));
}
