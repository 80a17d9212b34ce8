// Map the shared model onto the rows the Collector's ClickHouse exporter writes (pinned v0.161.0), so the
// embedded store and a Collector-fed server hold the same rows (metric points: see pointRows). Value spellings follow the exporter:
// SpanKind `SPAN_KIND_*`, StatusCode `STATUS_CODE_*`, maps of strings, delta sums with temporality 1.
// Each row is its values in the order of its table's column list (written as RowBinary, row-binary.ts), which leaves
// out the columns ccotel always leaves empty (links, schema URLs, trace state, scope attributes, flags): the engine
// fills them with the same empty defaults, and neither side spends time on empty values. Times are StoreTimes: the
// column's type says how one is written; as JSON (readers, tests) one is the text ClickHouse parses.
import type { Attributes, LogRecord, MetricPoint, Origin, Resource, SpanRecord } from '../model.js';
import { histogramBounds, POINT_ID_KEY, RECORD_ID_KEY, SCOPE_NAME } from '../semconv.js';

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
/** Received spans may carry a trace state and links, and a few of ccotel's links (`withLinks`). */
export const RECEIVED_SPAN_COLUMNS = [...SPAN_COLUMNS, 'TraceState', 'Links.TraceId', 'Links.SpanId', 'Links.TraceState', 'Links.Attributes'] as const;
/** A gauge row has no temporality. */
export const GAUGE_COLUMNS = [...METRIC_COLUMNS.filter((column) => column !== 'AggregationTemporality'), 'Value'] as const;

/** A span written with the link columns: a received one, or one of ccotel's that has links. */
export const withLinks = (span: SpanRecord): boolean => span.origin !== undefined || (span.links?.length ?? 0) > 0;

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

/** A time in a row: epoch milliseconds, for a DateTime64(9) column (`wholeSeconds`: a DateTime column). */
export class StoreTime {
  constructor(
    readonly ms: number,
    private readonly wholeSeconds = false,
  ) {}

  toJSON(): string {
    return this.wholeSeconds ? clickhouseSeconds(this.ms) : clickhouseTime(this.ms);
  }
}

const nanoTime = (ms: number): StoreTime => new StoreTime(ms);
const secondTime = (ms: number): StoreTime => new StoreTime(ms, true);

export class RowMapper {
  private readonly resource: Record<string, string>;
  private readonly serviceName: string;

  constructor(resource: Resource, private readonly scopeVersion: string) {
    this.resource = stringMap(resource);
    this.serviceName = this.resource['service.name'] ?? 'ccotel';
  }

  /** Resource, service and scope of an item: the sidecar's, or those it was received with. */
  private source(origin: Origin | undefined): { resource: Record<string, string>; service: string; scopeName: string; scopeVersion: string } {
    if (!origin) return { resource: this.resource, service: this.serviceName, scopeName: SCOPE_NAME, scopeVersion: this.scopeVersion };
    const resource = stringMap(origin.resource);
    return { resource, service: resource['service.name'] ?? '', scopeName: origin.scopeName, scopeVersion: origin.scopeVersion };
  }

  /** A span's values in SPAN_COLUMNS order (one `withLinks` in RECEIVED_SPAN_COLUMNS order). */
  span(span: SpanRecord): unknown[] {
    const { origin } = span;
    const source = this.source(origin);
    const values = [
      nanoTime(span.startMs),
      span.traceId,
      span.spanId,
      span.parentSpanId,
      span.name,
      origin ? origin.spanKind : SPAN_KIND[span.kind],
      source.service,
      source.resource,
      source.scopeName,
      source.scopeVersion,
      stringMap(span.attributes),
      Math.max(0, Math.round((span.endMs - span.startMs) * 1e6)),
      STATUS_CODE[span.status],
      span.statusMessage,
      span.events.map((event) => nanoTime(event.timeMs)),
      span.events.map((event) => event.name),
      span.events.map((event) => stringMap(event.attributes)),
    ];
    if (!withLinks(span)) return values;
    const links = origin?.links ?? span.links ?? [];
    values.push(origin?.traceState ?? '', links.map((l) => l.traceId), links.map((l) => l.spanId), links.map((l) => l.traceState), links.map((l) => stringMap(l.attributes)));
    return values;
  }

  /** A log record's values in LOG_COLUMNS order. */
  log(log: LogRecord): unknown[] {
    const attributes = stringMap(log.attributes);
    attributes[RECORD_ID_KEY] = log.id;
    const { origin } = log;
    const source = this.source(origin);
    return [
      nanoTime(log.timeMs),
      log.traceId,
      log.spanId,
      origin ? origin.traceFlags : log.traceId ? 1 : 0,
      origin ? origin.severityText : log.severity,
      origin ? origin.severityNumber : SEVERITY_NUMBER[log.severity],
      source.service,
      log.body,
      source.resource,
      source.scopeName,
      source.scopeVersion,
      attributes,
      log.eventName,
    ];
  }

  /** Values of METRIC_COLUMNS for the points of one row (pointRows): their one-minute delta bucket, each an exemplar. */
  private metricValues(points: MetricPoint[]): unknown[] {
    const [first] = points;
    const bucketStart = Math.floor(first.timeMs / 60_000) * 60_000;
    return [
      this.resource,
      SCOPE_NAME,
      this.scopeVersion,
      this.serviceName,
      first.name,
      first.description,
      first.unit,
      stringMap(first.attributes),
      secondTime(bucketStart),
      secondTime(bucketStart + 60_000),
      points.map((point) => ({ [POINT_ID_KEY]: point.id })),
      points.map((point) => secondTime(point.timeMs)),
      points.map((point) => point.value),
      points.map((point) => point.spanId),
      points.map((point) => point.traceId),
      DELTA_TEMPORALITY,
    ];
  }

  /**
   * A received point's row as the exporter writes a data point (SUM_COLUMNS, GAUGE_COLUMNS or HISTOGRAM_COLUMNS by
   * its kind): its own times, temporality and attributes; its one exemplar holds its id, as ccotel's points' do.
   */
  receivedPoint(point: MetricPoint): unknown[] {
    const origin = point.origin!;
    const source = this.source(origin);
    const values: unknown[] = [
      source.resource,
      source.scopeName,
      source.scopeVersion,
      source.service,
      point.name,
      point.description,
      point.unit,
      stringMap(point.attributes),
      secondTime(origin.startMs),
      secondTime(point.timeMs),
      [{ [POINT_ID_KEY]: point.id }],
      [secondTime(point.timeMs)],
      [point.value],
      [''],
      [''],
    ];
    if (point.kind === 'gauge') return [...values, point.value];
    values.push(origin.temporality);
    if (point.kind === 'sum') return [...values, point.value, origin.monotonic];
    const histogram = origin.histogram!;
    return [...values, histogram.count, point.value, histogram.bucketCounts, histogram.bounds, histogram.min, histogram.max];
  }

  /** A row of sum points (pointRows) in SUM_COLUMNS order: their values added. */
  sum(points: MetricPoint[]): unknown[] {
    const values = this.metricValues(points);
    values.push(points.reduce((total, point) => total + point.value, 0), true);
    return values;
  }

  /** A row of observations (pointRows) as one histogram point, in HISTOGRAM_COLUMNS order; bounds are fixed so points merge. */
  histogram(points: MetricPoint[]): unknown[] {
    const bounds = histogramBounds(points[0].name);
    const counts = new Array<number>(bounds.length + 1).fill(0);
    let [sum, min, max] = [0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
    for (const { value } of points) {
      const bucket = bounds.findIndex((bound) => value <= bound);
      counts[bucket === -1 ? bounds.length : bucket]++;
      [sum, min, max] = [sum + value, Math.min(min, value), Math.max(max, value)];
    }
    const values = this.metricValues(points);
    values.push(points.length, sum, counts, bounds, min, max);
    return values;
  }
}

/**
 * Points in rows: one row per metric, attribute set and one-minute bucket, each point kept as an exemplar of it (id,
 * time, value, span). A point a row made the metric tables the largest part of what a backfill inserts (78 000 rows of
 * 38 MB for 200 MB of conversation-heavy history; ~3 points a row). Rows of the same series and minute from different
 * batches stay apart; readers add their values.
 */
export function pointRows(points: MetricPoint[]): MetricPoint[][] {
  const rows = new Map<string, MetricPoint[]>();
  for (const point of points) {
    // The encoders make a metric's attributes in one key order; another order would only make two rows.
    const key = `${point.name}\u0000${Math.floor(point.timeMs / 60_000)}\u0000${JSON.stringify(point.attributes)}`;
    const row = rows.get(key);
    if (row) row.push(point);
    else rows.set(key, [point]);
  }
  return [...rows.values()];
}

/** A row as an object of its columns, for readers and tests. */
export function rowObject(columns: readonly string[], values: unknown[]): Record<string, unknown> {
  return Object.fromEntries(columns.map((column, i) => [column, values[i]]));
}
