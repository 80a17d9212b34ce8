// Encode the shared model as OTLP protobuf request bodies (ExportTrace/Logs/MetricsServiceRequest), so the
// Collector's ClickHouse exporter writes exactly the rows ClickHouseSink writes (see clickhouse-rows.ts):
// the same ids, times, attribute values, resource and scope; log records carry `ccotel.record.id`;
// each metric point is one delta data point in its one-minute bucket, with one exemplar holding the
// point id (`ccotel.point.id`), its event time and its trace/span id.
//
// Every message is written here, field by field as opentelemetry/proto defines it, into a ByteWriter (byte-writer.ts),
// with @opentelemetry/otlp-transformer's writers of attributes, resources and scopes. Spans and logs are written as
// that package's serializers write them from ReadableSpan / ReadableLogRecord (otlp-convert.test.ts decodes both to
// equal messages), without building those objects and without its character-by-character string encoding, which
// was a quarter of an OTLP backfill's time. Metrics never could go through it: the SDK's data points have no
// exemplars, and the exemplar is where the point id travels.
import { SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { millisToHrTime, type InstrumentationScope } from '@opentelemetry/core';
import { ProtobufLogsSerializer, ProtobufMetricsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
// The package has no "exports" map; these internals are pinned with it (0.223.0).
import { hexToBinary } from '@opentelemetry/otlp-transformer/build/src/common/hex-to-binary.js';
import {
  writeAnyValue,
  writeAttributes,
  writeHrTimeAsFixed64,
  writeInstrumentationScope,
  writeResource,
} from '@opentelemetry/otlp-transformer/build/src/common/protobuf/common-serializer.js';
import { resourceFromAttributes, type Resource as OtelResource } from '@opentelemetry/resources';
import type { LogRecord, MetricPoint, Origin, PointOrigin, Resource, SpanEvent, SpanLink, SpanRecord } from '../model.js';
import { histogramBounds, POINT_ID_KEY, RECORD_ID_KEY, SCHEMA_URL, SCOPE_NAME } from '../semconv.js';
import { ByteWriter } from './byte-writer.js';

export type Signal = 'traces' | 'logs' | 'metrics';

const SPAN_KIND = { internal: SpanKind.INTERNAL, client: SpanKind.CLIENT, server: SpanKind.SERVER } as const;
const STATUS_CODE = { unset: SpanStatusCode.UNSET, ok: SpanStatusCode.OK, error: SpanStatusCode.ERROR } as const;
const SEVERITY_NUMBER = { DEBUG: SeverityNumber.DEBUG, INFO: SeverityNumber.INFO, WARN: SeverityNumber.WARN, ERROR: SeverityNumber.ERROR } as const;
const DELTA_TEMPORALITY = 1; // AGGREGATION_TEMPORALITY_DELTA
const BUCKET_MS = 60_000;
// Protobuf wire types.
const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;
const FIXED32 = 5;
/** SpanFlags: the span's context says whether it is remote (it is not). */
const HAS_IS_REMOTE = 0x100;

export interface PartialRejection {
  rejected: number;
  message: string;
}

/** SpanKind of a received span as the exporter spells it; UNSPECIFIED has no SDK kind and goes as INTERNAL. */
const RECEIVED_KIND: Record<string, SpanKind> = {
  SPAN_KIND_SERVER: SpanKind.SERVER,
  SPAN_KIND_CLIENT: SpanKind.CLIENT,
  SPAN_KIND_PRODUCER: SpanKind.PRODUCER,
  SPAN_KIND_CONSUMER: SpanKind.CONSUMER,
};

/**
 * Encodes telemetry of one sidecar (its resource, its scope) as OTLP/protobuf request bodies, and what it received
 * (the agent's own) under the resource and scope it came with.
 */
export class OtlpEncoder {
  private readonly resource: OtelResource;
  private readonly scope: InstrumentationScope;
  /** One object per received resource: the serializers group items by resource object. */
  private readonly received = new Map<string, OtelResource>();

  constructor(resource: Resource, scopeVersion: string) {
    this.resource = resourceFromAttributes(resource, { schemaUrl: SCHEMA_URL });
    this.scope = { name: SCOPE_NAME, version: scopeVersion, schemaUrl: SCHEMA_URL };
  }

  private sourceOf(origin: Origin | undefined): { resource: OtelResource; scope: InstrumentationScope } {
    if (!origin) return { resource: this.resource, scope: this.scope };
    const key = JSON.stringify(origin.resource);
    let resource = this.received.get(key);
    if (!resource) {
      if (this.received.size >= 1000) this.received.clear();
      this.received.set(key, (resource = resourceFromAttributes(origin.resource)));
    }
    return { resource, scope: { name: origin.scopeName, version: origin.scopeVersion } };
  }

  /** ExportTraceServiceRequest: ResourceSpans per resource, ScopeSpans per scope, in the order first met. */
  traces(spans: SpanRecord[]): Uint8Array {
    const writer = new ByteWriter(1024 + spans.length * 512);
    for (const [resource, scopes] of this.bySource(spans)) {
      writer.writeTag(1, LENGTH_DELIMITED); // resource_spans
      writeResourceItems(writer, resource, scopes, (scopeSpans) => {
        for (const span of scopeSpans) {
          writer.writeTag(2, LENGTH_DELIMITED); // spans
          writeSpan(writer, span);
        }
      });
    }
    return requestBody(writer);
  }

  /** ExportLogsServiceRequest: ResourceLogs per resource, ScopeLogs per scope, in the order first met. */
  logs(logs: LogRecord[]): Uint8Array {
    const writer = new ByteWriter(1024 + logs.length * 512);
    for (const [resource, scopes] of this.bySource(logs)) {
      writer.writeTag(1, LENGTH_DELIMITED); // resource_logs
      writeResourceItems(writer, resource, scopes, (scopeLogs) => {
        for (const log of scopeLogs) {
          writer.writeTag(2, LENGTH_DELIMITED); // log_records
          writeLogRecord(writer, log);
        }
      });
    }
    return requestBody(writer);
  }

  /** Items grouped by resource, then by scope (name and version), each group in the order first met. */
  private bySource<T extends { origin?: Origin }>(items: T[]): Map<OtelResource, Map<string, { scope: InstrumentationScope; items: T[] }>> {
    const groups = new Map<OtelResource, Map<string, { scope: InstrumentationScope; items: T[] }>>();
    for (const item of items) {
      const { resource, scope } = this.sourceOf(item.origin);
      let scopes = groups.get(resource);
      if (!scopes) groups.set(resource, (scopes = new Map()));
      const key = `${scope.name}\u0000${scope.version ?? ''}`;
      const group = scopes.get(key);
      if (group) group.items.push(item);
      else scopes.set(key, { scope, items: [item] });
    }
    return groups;
  }

  /** ExportMetricsServiceRequest: one Metric per name and kind, one data point per MetricPoint; received ones under their own resource and scope. */
  metrics(points: MetricPoint[]): Uint8Array {
    const writer = new ByteWriter(1024 + points.length * 256);
    const sources = new Map<string, MetricPoint[]>();
    for (const point of points) {
      const key = point.origin ? JSON.stringify([point.origin.resource, point.origin.scopeName, point.origin.scopeVersion]) : '';
      const group = sources.get(key);
      if (group) group.push(point);
      else sources.set(key, [point]);
    }
    for (const group of sources.values()) {
      const { resource, scope } = this.sourceOf(group[0].origin);
      writer.writeTag(1, LENGTH_DELIMITED); // resource_metrics
      const resourceMetrics = begin(writer);
      writeResource(writer, resource, 1);
      writer.writeTag(2, LENGTH_DELIMITED); // scope_metrics
      const scopeMetrics = begin(writer);
      writeInstrumentationScope(writer, scope, 1);
      for (const metric of groupByMetric(group)) {
        writer.writeTag(2, LENGTH_DELIMITED); // metrics
        writeMetric(writer, metric);
      }
      writeSchemaUrl(writer, scope.schemaUrl); // ScopeMetrics.schema_url
      end(writer, scopeMetrics);
      writeSchemaUrl(writer, resource.schemaUrl); // ResourceMetrics.schema_url
      end(writer, resourceMetrics);
    }
    return requestBody(writer);
  }
}

/** The rejected count and message of an OTLP partial-success response, or undefined when all was accepted. */
export function partialRejection(signal: Signal, body: Uint8Array): PartialRejection | undefined {
  if (body.length === 0) return undefined;
  let rejected = 0;
  let message = '';
  if (signal === 'traces') {
    const partial = ProtobufTraceSerializer.deserializeResponse(body).partialSuccess;
    rejected = Number(partial?.rejectedSpans ?? 0);
    message = partial?.errorMessage ?? '';
  } else if (signal === 'logs') {
    const partial = ProtobufLogsSerializer.deserializeResponse(body).partialSuccess;
    rejected = Number(partial?.rejectedLogRecords ?? 0);
    message = partial?.errorMessage ?? '';
  } else {
    const partial = ProtobufMetricsSerializer.deserializeResponse(body).partialSuccess;
    rejected = Number(partial?.rejectedDataPoints ?? 0);
    message = partial?.errorMessage ?? '';
  }
  return rejected > 0 || message ? { rejected, message } : undefined;
}

/** The request's bytes, copied out of the writer's larger buffer: a queued request holds only its own bytes. */
function requestBody(writer: ByteWriter): Uint8Array {
  return new Uint8Array(writer.finish());
}

function begin(writer: ByteWriter): { at: number; from: number } {
  const at = writer.startLengthDelimited();
  return { at, from: writer.pos };
}

function end(writer: ByteWriter, mark: { at: number; from: number }): void {
  writer.finishLengthDelimited(mark.at, writer.pos - mark.from);
}

/** The resource's ResourceSpans/ResourceLogs body: its resource, each scope's items (written by `writeItems`), the schema URLs. */
function writeResourceItems<T>(writer: ByteWriter, resource: OtelResource, scopes: Map<string, { scope: InstrumentationScope; items: T[] }>, writeItems: (items: T[]) => void): void {
  const mark = begin(writer);
  writeResource(writer, resource, 1);
  for (const { scope, items } of scopes.values()) {
    writer.writeTag(2, LENGTH_DELIMITED); // scope_spans / scope_logs
    const scopeMark = begin(writer);
    writeInstrumentationScope(writer, scope, 1);
    writeItems(items);
    writeSchemaUrl(writer, scope.schemaUrl);
    end(writer, scopeMark);
  }
  writeSchemaUrl(writer, resource.schemaUrl);
  end(writer, mark);
}

/**
 * Span { trace_id=1, span_id=2, parent_span_id=4, name=5, kind=6, start=7, end=8, attributes=9, dropped_attributes_count=10,
 * events=11, dropped_events_count=12, links=13, dropped_links_count=14, status=15, flags=16 }: sampled, not remote.
 */
function writeSpan(writer: ByteWriter, span: SpanRecord): void {
  const mark = begin(writer);
  writer.writeTag(1, LENGTH_DELIMITED);
  writer.writeBytes(hexToBinary(span.traceId));
  writer.writeTag(2, LENGTH_DELIMITED);
  writer.writeBytes(hexToBinary(span.spanId));
  if (span.parentSpanId) {
    writer.writeTag(4, LENGTH_DELIMITED);
    writer.writeBytes(hexToBinary(span.parentSpanId));
  }
  writer.writeTag(5, LENGTH_DELIMITED);
  writer.writeString(span.name);
  const { origin } = span;
  writer.writeTag(6, VARINT);
  writer.writeVarint((origin ? (RECEIVED_KIND[origin.spanKind] ?? SpanKind.INTERNAL) : SPAN_KIND[span.kind]) + 1); // the proto's enum is the API's + 1
  writeTime(writer, 7, span.startMs);
  writeTime(writer, 8, Math.max(span.endMs, span.startMs));
  writeAttributes(writer, span.attributes, 9);
  writeZero(writer, 10);
  for (const event of span.events) {
    writer.writeTag(11, LENGTH_DELIMITED);
    writeEvent(writer, event);
  }
  writeZero(writer, 12);
  for (const link of origin?.links ?? span.links ?? []) {
    writer.writeTag(13, LENGTH_DELIMITED);
    writeLink(writer, link);
  }
  writeZero(writer, 14);
  writer.writeTag(15, LENGTH_DELIMITED); // Status { message=2, code=3 }
  const status = begin(writer);
  if (span.statusMessage) {
    writer.writeTag(2, LENGTH_DELIMITED);
    writer.writeString(span.statusMessage);
  }
  writer.writeTag(3, VARINT);
  writer.writeVarint(STATUS_CODE[span.status]);
  end(writer, status);
  writer.writeTag(16, FIXED32);
  writer.writeFixed32(TraceFlags.SAMPLED | HAS_IS_REMOTE);
  end(writer, mark);
}

/** Span.Event { time=1, name=2, attributes=3, dropped_attributes_count=4 }. */
function writeEvent(writer: ByteWriter, event: SpanEvent): void {
  const mark = begin(writer);
  writeTime(writer, 1, event.timeMs);
  writer.writeTag(2, LENGTH_DELIMITED);
  writer.writeString(event.name);
  writeAttributes(writer, event.attributes, 3);
  writeZero(writer, 4);
  end(writer, mark);
}

/** Span.Link { trace_id=1, span_id=2, attributes=4, dropped_attributes_count=5, flags=6 }: not sampled, not remote. */
function writeLink(writer: ByteWriter, link: SpanLink): void {
  const mark = begin(writer);
  writer.writeTag(1, LENGTH_DELIMITED);
  writer.writeBytes(hexToBinary(link.traceId));
  writer.writeTag(2, LENGTH_DELIMITED);
  writer.writeBytes(hexToBinary(link.spanId));
  writeAttributes(writer, link.attributes, 4);
  writeZero(writer, 5);
  writer.writeTag(6, FIXED32);
  writer.writeFixed32(TraceFlags.NONE | HAS_IS_REMOTE);
  end(writer, mark);
}

/**
 * LogRecord { time=1, severity_number=2, severity_text=3, body=5, attributes=6, dropped_attributes_count=7, flags=8,
 * trace_id=9, span_id=10, observed_time=11, event_name=12 }. Observed = event time too: a backfill must look exactly
 * like live data.
 */
function writeLogRecord(writer: ByteWriter, log: LogRecord): void {
  const mark = begin(writer);
  const { origin } = log;
  writeTime(writer, 1, log.timeMs);
  const severityNumber = origin ? origin.severityNumber : SEVERITY_NUMBER[log.severity];
  if (severityNumber) {
    writer.writeTag(2, VARINT);
    writer.writeVarint(severityNumber);
  }
  const severityText = origin ? origin.severityText : log.severity;
  if (severityText) {
    writer.writeTag(3, LENGTH_DELIMITED);
    writer.writeString(severityText);
  }
  if (log.body !== undefined) {
    writer.writeTag(5, LENGTH_DELIMITED);
    const body = begin(writer);
    writeAnyValue(writer, log.body);
    end(writer, body);
  }
  writeAttributes(writer, { ...log.attributes, [RECORD_ID_KEY]: log.id }, 6);
  writeZero(writer, 7);
  if (log.traceId) {
    writer.writeTag(8, FIXED32);
    writer.writeFixed32(TraceFlags.SAMPLED);
    writer.writeTag(9, LENGTH_DELIMITED);
    writer.writeBytes(hexToBinary(log.traceId));
    if (log.spanId) {
      writer.writeTag(10, LENGTH_DELIMITED);
      writer.writeBytes(hexToBinary(log.spanId));
    }
  }
  writeTime(writer, 11, log.timeMs);
  if (log.eventName) {
    writer.writeTag(12, LENGTH_DELIMITED);
    writer.writeString(log.eventName);
  }
  end(writer, mark);
}

/** A dropped-count field: always written, as the package writes it. */
function writeZero(writer: ByteWriter, field: number): void {
  writer.writeTag(field, VARINT);
  writer.writeVarint(0);
}

function groupByMetric(points: MetricPoint[]): MetricPoint[][] {
  const groups = new Map<string, MetricPoint[]>();
  for (const point of points) {
    const key = `${point.kind}\u0000${point.name}\u0000${point.unit}\u0000${point.description}\u0000${point.origin?.temporality ?? ''}\u0000${point.origin?.monotonic ?? ''}`;
    const group = groups.get(key);
    if (group) group.push(point);
    else groups.set(key, [point]);
  }
  return [...groups.values()];
}

/** Metric { name=1, description=2, unit=3, gauge=5 | sum=7 | histogram=9 }; Sum/Histogram { data_points=1, temporality=2, is_monotonic=3 }; Gauge { data_points=1 }. */
function writeMetric(writer: ByteWriter, points: MetricPoint[]): void {
  const first = points[0];
  const metric = begin(writer);
  writer.writeTag(1, LENGTH_DELIMITED);
  writer.writeString(first.name);
  if (first.description) {
    writer.writeTag(2, LENGTH_DELIMITED);
    writer.writeString(first.description);
  }
  if (first.unit) {
    writer.writeTag(3, LENGTH_DELIMITED);
    writer.writeString(first.unit);
  }
  writer.writeTag(first.kind === 'gauge' ? 5 : first.kind === 'sum' ? 7 : 9, LENGTH_DELIMITED);
  const data = begin(writer);
  for (const point of points) {
    writer.writeTag(1, LENGTH_DELIMITED);
    if (point.kind === 'histogram') writeHistogramPoint(writer, point);
    else writeNumberPoint(writer, point);
  }
  if (first.kind !== 'gauge') {
    writer.writeTag(2, VARINT);
    writer.writeVarint(first.origin?.temporality ?? DELTA_TEMPORALITY);
  }
  // ccotel's counters only go up; a received sum is as it was sent.
  if (first.kind === 'sum' && (first.origin?.monotonic ?? true)) {
    writer.writeTag(3, VARINT);
    writer.writeVarint(1);
  }
  end(writer, data);
  end(writer, metric);
}

/** A point's interval: ccotel's one-minute delta bucket, a received point's own. */
function bucketOf(point: MetricPoint): { start: number; end: number } {
  if (point.origin) return { start: point.origin.startMs, end: point.timeMs };
  const start = Math.floor(point.timeMs / BUCKET_MS) * BUCKET_MS;
  return { start, end: start + BUCKET_MS };
}

function writeTime(writer: ByteWriter, field: number, ms: number): void {
  writer.writeTag(field, FIXED64);
  writeHrTimeAsFixed64(writer, millisToHrTime(ms));
}

/** NumberDataPoint { start=2, time=3, as_double=4, exemplars=5, attributes=7 }. */
function writeNumberPoint(writer: ByteWriter, point: MetricPoint): void {
  const mark = begin(writer);
  const bucket = bucketOf(point);
  writeTime(writer, 2, bucket.start);
  writeTime(writer, 3, bucket.end);
  writer.writeTag(4, FIXED64);
  writer.writeDouble(point.value);
  writer.writeTag(5, LENGTH_DELIMITED);
  writeExemplar(writer, point);
  writeAttributes(writer, point.attributes, 7);
  end(writer, mark);
}

/**
 * One observation as HistogramDataPoint { start=2, time=3, count=4, sum=5, bucket_counts=6, explicit_bounds=7,
 * exemplars=8, attributes=9, min=11, max=12 }, with the bounds the ClickHouse rows use, so points merge.
 */
function writeHistogramPoint(writer: ByteWriter, point: MetricPoint): void {
  const mark = begin(writer);
  const bucket = bucketOf(point);
  writeTime(writer, 2, bucket.start);
  writeTime(writer, 3, bucket.end);
  const histogram = point.origin?.histogram ?? observation(point);
  writer.writeTag(4, FIXED64);
  writer.writeFixed64(histogram.count, 0);
  writer.writeTag(5, FIXED64);
  writer.writeDouble(point.value);
  writer.writeTag(6, LENGTH_DELIMITED);
  const counts = begin(writer);
  for (const count of histogram.bucketCounts) writer.writeFixed64(count, 0);
  end(writer, counts);
  writer.writeTag(7, LENGTH_DELIMITED);
  const bounds = begin(writer);
  for (const bound of histogram.bounds) writer.writeDouble(bound);
  end(writer, bounds);
  writer.writeTag(8, LENGTH_DELIMITED);
  writeExemplar(writer, point);
  writeAttributes(writer, point.attributes, 9);
  writer.writeTag(11, FIXED64);
  writer.writeDouble(histogram.min);
  writer.writeTag(12, FIXED64);
  writer.writeDouble(histogram.max);
  end(writer, mark);
}

/** Field 3 (schema_url) of ResourceMetrics and ScopeMetrics, when there is one. */
function writeSchemaUrl(writer: ByteWriter, schemaUrl: string | undefined): void {
  if (!schemaUrl) return;
  writer.writeTag(3, LENGTH_DELIMITED);
  writer.writeString(schemaUrl);
}

/** One of ccotel's observations as a histogram of its metric's fixed bounds. */
function observation({ name, value }: MetricPoint): NonNullable<PointOrigin['histogram']> {
  const bounds = histogramBounds(name);
  const hit = bounds.findIndex((bound) => value <= bound);
  const hitIndex = hit === -1 ? bounds.length : hit;
  return { count: 1, bucketCounts: Array.from({ length: bounds.length + 1 }, (_, i) => (i === hitIndex ? 1 : 0)), bounds, min: value, max: value };
}

/**
 * Exemplar { time=2, as_double=3, span_id=4, trace_id=5, filtered_attributes=7 }. Its time is the event
 * time to the second, as ClickHouseSink stores it.
 */
function writeExemplar(writer: ByteWriter, point: MetricPoint): void {
  const mark = begin(writer);
  writeTime(writer, 2, Math.floor(point.timeMs / 1000) * 1000);
  writer.writeTag(3, FIXED64);
  writer.writeDouble(point.value);
  if (point.spanId) {
    writer.writeTag(4, LENGTH_DELIMITED);
    writer.writeBytes(hexToBinary(point.spanId));
  }
  if (point.traceId) {
    writer.writeTag(5, LENGTH_DELIMITED);
    writer.writeBytes(hexToBinary(point.traceId));
  }
  writeAttributes(writer, { [POINT_ID_KEY]: point.id }, 7);
  end(writer, mark);
}
