// Encode the shared model as OTLP protobuf request bodies (ExportTrace/Logs/MetricsServiceRequest), so the
// Collector's ClickHouse exporter writes exactly the rows ClickHouseSink writes (see clickhouse-rows.ts):
// the same ids, times, attribute values, resource and scope; log records carry `ccotel.record.id`;
// each metric point is one delta data point in its one-minute bucket, with one exemplar holding the
// point id (`ccotel.point.id`), its event time and its trace/span id.
//
// Spans and logs go through the official serializers of @opentelemetry/otlp-transformer (from
// ReadableSpan / ReadableLogRecord). Metrics cannot: the SDK's data points have no exemplars, and the
// exemplar is where the point id travels. So metrics are written here with the same package's
// protobuf writer, field by field as opentelemetry/proto/metrics/v1/metrics.proto defines them.
import { SpanKind, SpanStatusCode, TraceFlags, type SpanContext } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { millisToHrTime, type InstrumentationScope } from '@opentelemetry/core';
import { ProtobufLogsSerializer, ProtobufMetricsSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
// The package has no "exports" map; these internals are pinned with it (0.223.0).
import { hexToBinary } from '@opentelemetry/otlp-transformer/build/src/common/hex-to-binary.js';
import {
  writeAttributes,
  writeHrTimeAsFixed64,
  writeInstrumentationScope,
  writeResource,
} from '@opentelemetry/otlp-transformer/build/src/common/protobuf/common-serializer.js';
import { ProtobufWriter } from '@opentelemetry/otlp-transformer/build/src/common/protobuf/protobuf-writer.js';
import { resourceFromAttributes, type Resource as OtelResource } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { LogRecord, MetricPoint, Origin, PointOrigin, Resource, SpanRecord } from '../model.js';
import { histogramBounds, POINT_ID_KEY, RECORD_ID_KEY, SCHEMA_URL, SCOPE_NAME } from '../semconv.js';

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

  traces(spans: SpanRecord[]): Uint8Array {
    return ProtobufTraceSerializer.serializeRequest(spans.map((span) => this.readableSpan(span)))!;
  }

  logs(logs: LogRecord[]): Uint8Array {
    return ProtobufLogsSerializer.serializeRequest(logs.map((log) => this.readableLog(log)))!;
  }

  /** ExportMetricsServiceRequest: one Metric per name and kind, one data point per MetricPoint; received ones under their own resource and scope. */
  metrics(points: MetricPoint[]): Uint8Array {
    const writer = new ProtobufWriter(1024 + points.length * 256);
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
    return writer.finish();
  }

  private readableSpan(span: SpanRecord): ReadableSpan {
    const context: SpanContext = { traceId: span.traceId, spanId: span.spanId, traceFlags: TraceFlags.SAMPLED };
    const startTime = millisToHrTime(span.startMs);
    const endTime = millisToHrTime(Math.max(span.endMs, span.startMs));
    const { origin } = span;
    const { resource, scope } = this.sourceOf(origin);
    return {
      name: span.name,
      kind: origin ? (RECEIVED_KIND[origin.spanKind] ?? SpanKind.INTERNAL) : SPAN_KIND[span.kind],
      spanContext: () => context,
      parentSpanContext: span.parentSpanId ? { traceId: span.traceId, spanId: span.parentSpanId, traceFlags: TraceFlags.SAMPLED } : undefined,
      startTime,
      endTime,
      duration: millisToHrTime(Math.max(0, span.endMs - span.startMs)),
      status: { code: STATUS_CODE[span.status], ...(span.statusMessage ? { message: span.statusMessage } : {}) },
      attributes: span.attributes,
      links: (origin?.links ?? span.links ?? []).map((link) => ({ context: { traceId: link.traceId, spanId: link.spanId, traceFlags: TraceFlags.NONE }, attributes: link.attributes, droppedAttributesCount: 0 })),
      events: span.events.map((event) => ({ name: event.name, time: millisToHrTime(event.timeMs), attributes: event.attributes })),
      ended: true,
      resource,
      instrumentationScope: scope,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  }

  private readableLog(log: LogRecord): ReadableLogRecord {
    const time = millisToHrTime(log.timeMs);
    const { origin } = log;
    const { resource, scope } = this.sourceOf(origin);
    return {
      hrTime: time,
      // Observed = event time too: a backfill must look exactly like live data.
      hrTimeObserved: time,
      spanContext: log.traceId ? { traceId: log.traceId, spanId: log.spanId, traceFlags: TraceFlags.SAMPLED } : undefined,
      severityText: origin ? origin.severityText : log.severity,
      severityNumber: origin ? (origin.severityNumber as SeverityNumber) : SEVERITY_NUMBER[log.severity],
      body: log.body,
      eventName: log.eventName,
      resource,
      instrumentationScope: scope,
      attributes: { ...log.attributes, [RECORD_ID_KEY]: log.id },
      droppedAttributesCount: 0,
    };
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

function begin(writer: ProtobufWriter): { at: number; from: number } {
  const at = writer.startLengthDelimited();
  return { at, from: writer.pos };
}

function end(writer: ProtobufWriter, mark: { at: number; from: number }): void {
  writer.finishLengthDelimited(mark.at, writer.pos - mark.from);
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
function writeMetric(writer: ProtobufWriter, points: MetricPoint[]): void {
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

function writeTime(writer: ProtobufWriter, field: number, ms: number): void {
  writer.writeTag(field, FIXED64);
  writeHrTimeAsFixed64(writer, millisToHrTime(ms));
}

/** NumberDataPoint { start=2, time=3, as_double=4, exemplars=5, attributes=7 }. */
function writeNumberPoint(writer: ProtobufWriter, point: MetricPoint): void {
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
function writeHistogramPoint(writer: ProtobufWriter, point: MetricPoint): void {
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
function writeSchemaUrl(writer: ProtobufWriter, schemaUrl: string | undefined): void {
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
function writeExemplar(writer: ProtobufWriter, point: MetricPoint): void {
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
