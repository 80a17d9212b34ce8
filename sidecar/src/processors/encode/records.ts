// How the encoder builds a log record or a metric point from one object: ids from a seed unique per record name
// (a re-read rebuilds the same ids), the session on every log.
import type { Attributes, LogRecord, MetricPoint } from '../../model.js';
import { ATTRS, logIdOf, metricPoint, pointIdOf, type MetricDefinition } from '../../semconv.js';

export interface LogSpec {
  eventName: string;
  severity: LogRecord['severity'];
  timeMs: number;
  sessionId: string;
  attributes: Attributes;
  /** With the event name, the record's id: the same fact read twice gets the same id. */
  idSeed: string;
  body?: string;
  traceId?: string;
  spanId?: string;
}

/** One point of a metric. */
export interface MetricSpec {
  timeMs: number;
  value: number;
  attributes: Attributes;
  idSeed: string;
  traceId?: string;
  spanId?: string;
}

export function logRecord(spec: LogSpec): LogRecord {
  return {
    id: logIdOf(spec.eventName, spec.idSeed),
    timeMs: spec.timeMs,
    eventName: spec.eventName,
    severity: spec.severity,
    traceId: spec.traceId ?? '',
    spanId: spec.spanId ?? '',
    body: spec.body ?? '',
    attributes: { [ATTRS.sessionId]: spec.sessionId, ...spec.attributes },
  };
}

export function point(metric: MetricDefinition, spec: MetricSpec): MetricPoint {
  const { timeMs, value, attributes, traceId, spanId } = spec;
  return metricPoint(metric, { id: pointIdOf(metric, spec.idSeed), timeMs, value, attributes, traceId, spanId });
}
