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
import type { LogRecord, MetricPoint, Resource, SpanRecord } from '../model.js';
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

/** Encodes telemetry of one sidecar (one resource, one scope) as OTLP/protobuf request bodies. */
export class OtlpEncoder {
  private readonly resource: OtelResource;
  private readonly scope: InstrumentationScope;

  constructor(resource: Resource, scopeVersion: string) {
    this.resource = resourceFromAttributes(resource, { schemaUrl: SCHEMA_URL });
    this.scope = { name: SCOPE_NAME, version: scopeVersion, schemaUrl: SCHEMA_URL };
  }

  traces(spans: SpanRecord[]): Uint8Array {
    return ProtobufTraceSerializer.serializeRequest(spans.map((span) => this.readableSpan(span)))!;
  }

  logs(logs: LogRecord[]): Uint8Array {
    return ProtobufLogsSerializer.serializeRequest(logs.map((log) => this.readableLog(log)))!;
  }

  /** ExportMetricsServiceRequest: one Metric per name and kind, one data point per MetricPoint. */
  metrics(points: MetricPoint[]): Uint8Array {
    const writer = new ProtobufWriter(1024 + points.length * 256);
    writer.writeTag(1, LENGTH_DELIMITED); // resource_metrics
    const resourceMetrics = begin(writer);
    writeResource(writer, this.resource, 1);
    writer.writeTag(2, LENGTH_DELIMITED); // scope_metrics
    const scopeMetrics = begin(writer);
    writeInstrumentationScope(writer, this.scope, 1);
    for (const group of groupByMetric(points)) {
      writer.writeTag(2, LENGTH_DELIMITED); // metrics
      writeMetric(writer, group);
    }
    writer.writeTag(3, LENGTH_DELIMITED); // ScopeMetrics.schema_url
    writer.writeString(SCHEMA_URL);
    end(writer, scopeMetrics);
    writer.writeTag(3, LENGTH_DELIMITED); // ResourceMetrics.schema_url
    writer.writeString(SCHEMA_URL);
    end(writer, resourceMetrics);
    return writer.finish();
  }

  private readableSpan(span: SpanRecord): ReadableSpan {
    const context: SpanContext = { traceId: span.traceId, spanId: span.spanId, traceFlags: TraceFlags.SAMPLED };
    const startTime = millisToHrTime(span.startMs);
    const endTime = millisToHrTime(Math.max(span.endMs, span.startMs));
    return {
      name: span.name,
      kind: SPAN_KIND[span.kind],
      spanContext: () => context,
      parentSpanContext: span.parentSpanId ? { traceId: span.traceId, spanId: span.parentSpanId, traceFlags: TraceFlags.SAMPLED } : undefined,
      startTime,
      endTime,
      duration: millisToHrTime(Math.max(0, span.endMs - span.startMs)),
      status: { code: STATUS_CODE[span.status], ...(span.statusMessage ? { message: span.statusMessage } : {}) },
      attributes: span.attributes,
      links: [],
      events: span.events.map((event) => ({ name: event.name, time: millisToHrTime(event.timeMs), attributes: event.attributes })),
      ended: true,
      resource: this.resource,
      instrumentationScope: this.scope,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    };
  }

  private readableLog(log: LogRecord): ReadableLogRecord {
    const time = millisToHrTime(log.timeMs);
    return {
      hrTime: time,
      // Observed = event time too: a backfill must look exactly like live data.
      hrTimeObserved: time,
      spanContext: log.traceId ? { traceId: log.traceId, spanId: log.spanId, traceFlags: TraceFlags.SAMPLED } : undefined,
      severityText: log.severity,
      severityNumber: SEVERITY_NUMBER[log.severity],
      body: log.body,
      eventName: log.eventName,
      resource: this.resource,
      instrumentationScope: this.scope,
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
    const key = `${point.kind}\u0000${point.name}\u0000${point.unit}\u0000${point.description}`;
    const group = groups.get(key);
    if (group) group.push(point);
    else groups.set(key, [point]);
  }
  return [...groups.values()];
}

/** Metric { name=1, description=2, unit=3, sum=7 | histogram=9 }; Sum/Histogram { data_points=1, temporality=2, is_monotonic=3 }. */
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
  writer.writeTag(first.kind === 'sum' ? 7 : 9, LENGTH_DELIMITED);
  const data = begin(writer);
  for (const point of points) {
    writer.writeTag(1, LENGTH_DELIMITED);
    if (point.kind === 'sum') writeNumberPoint(writer, point);
    else writeHistogramPoint(writer, point);
  }
  writer.writeTag(2, VARINT);
  writer.writeVarint(DELTA_TEMPORALITY);
  if (first.kind === 'sum') {
    writer.writeTag(3, VARINT);
    writer.writeVarint(1); // monotonic: counters only go up
  }
  end(writer, data);
  end(writer, metric);
}

function bucketOf(point: MetricPoint): { start: number; end: number } {
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
  writer.writeTag(4, FIXED64);
  writer.writeFixed64(1, 0);
  writer.writeTag(5, FIXED64);
  writer.writeDouble(point.value);
  const bounds = histogramBounds(point.name);
  const hit = bounds.findIndex((bound) => point.value <= bound);
  const hitIndex = hit === -1 ? bounds.length : hit;
  writer.writeTag(6, LENGTH_DELIMITED);
  const counts = begin(writer);
  for (let i = 0; i <= bounds.length; i++) writer.writeFixed64(i === hitIndex ? 1 : 0, 0);
  end(writer, counts);
  writer.writeTag(7, LENGTH_DELIMITED);
  const explicitBounds = begin(writer);
  for (const bound of bounds) writer.writeDouble(bound);
  end(writer, explicitBounds);
  writer.writeTag(8, LENGTH_DELIMITED);
  writeExemplar(writer, point);
  writeAttributes(writer, point.attributes, 9);
  writer.writeTag(11, FIXED64);
  writer.writeDouble(point.value);
  writer.writeTag(12, FIXED64);
  writer.writeDouble(point.value);
  end(writer, mark);
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
