// Where the correlator's records go, and how they are built: one object per record, ids from a seed unique per
// record name (a re-read rebuilds the same ids). A record of a subagent not linked yet is held (`HeldRecords`).
import type { Attributes, LogRecord, MetricPoint, SpanRecord, TelemetryBatch } from '../../model.js';
import { emptyBatch } from '../../model.js';
import { ATTRS, logIdOf, metricPoint, pointIdOf, type MetricDefinition } from '../../semconv.js';
import { HeldRecords } from './held-records.js';
import type { Scope } from './types.js';

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

export class Output {
  private out: TelemetryBatch = emptyBatch();
  private readonly held = new HeldRecords();

  /** Take everything emitted so far. */
  drain(): TelemetryBatch {
    const batch = this.out;
    this.out = emptyBatch();
    return batch;
  }

  /** Records with a scope go where it points: out, or held while their subagent's trace is not known. */
  span(span: SpanRecord, scope?: Scope): void {
    this.target(scope).spans.push(span);
  }

  log(spec: LogSpec, scope?: Scope): void {
    this.target(scope).logs.push(logRecord(spec));
  }

  metric(metric: MetricDefinition, spec: MetricSpec, scope?: Scope): void {
    const { timeMs, value, attributes, traceId, spanId } = spec;
    this.target(scope).metrics.push(metricPoint(metric, { id: pointIdOf(metric, spec.idSeed), timeMs, value, attributes, traceId, spanId }));
  }

  /** Records made elsewhere (Claude Code's own cost figures), straight out. */
  push(logs: LogRecord[], metrics: MetricPoint[]): void {
    this.out.logs.push(...logs);
    this.out.metrics.push(...metrics);
  }

  /** Hold a subagent's records from now on: its trace is not known yet. */
  hold(agentId: string): void {
    this.held.hold(agentId);
  }

  /** Move a subagent's held records out under its trace id. */
  release(agentId: string, traceId: string): void {
    this.held.release(agentId, traceId, this.out);
  }

  private target(scope: Scope | undefined): TelemetryBatch {
    if (!scope || scope.traceId !== '' || scope.agentId === undefined) return this.out;
    return this.held.batchOf(scope.agentId) ?? this.out;
  }
}
