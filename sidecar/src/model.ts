// The data model every stage shares. Data flows one way:
//   sources (raw lines / files) → processors (parse → correlate → mask → cap) → sinks.
// Correlation turns input records into TelemetryBatch items (and the events the joins read about them, events.ts);
// everything after it works on those.

export type AttrValue = string | number | boolean;
export type Attributes = Record<string, AttrValue>;

/**
 * How much text may leave the sidecar (DESIGN section 7): `none` (ids, names, sizes, outcomes), `masked` (the
 * default), `raw` (no masking; only with the explicit opt-in CCOTEL_ALLOW_RAW_CONTENT=1, e.g. for benchmarks).
 */
export type ContentLevel = 'none' | 'masked' | 'raw';

export interface SpanEvent {
  name: string;
  /** Epoch milliseconds, taken from the record that produced the event. */
  timeMs: number;
  attributes: Attributes;
}

export type SpanStatus = 'unset' | 'ok' | 'error';

/**
 * Where telemetry received from another exporter (the agent's own OTLP) came from: its rows are written under this
 * resource and scope, as the Collector's exporter would write them, instead of the sidecar's.
 */
export interface Origin {
  resource: Attributes;
  scopeName: string;
  scopeVersion: string;
}

/** A received span's origin, and what of it the model has no place for, as the exporter spells it. */
export interface SpanOrigin extends Origin {
  /** `SPAN_KIND_*`; `kind` is only its nearest. */
  spanKind: string;
  traceState: string;
  links: SpanLink[];
}

export interface SpanLink {
  traceId: string;
  spanId: string;
  traceState: string;
  attributes: Attributes;
}

export interface SpanRecord {
  /** Set on received spans (their ids are the sender's). */
  origin?: SpanOrigin;
  /** 32 lowercase hex characters, derived deterministically from the input. */
  traceId: string;
  /** 16 lowercase hex characters, derived deterministically from the input. */
  spanId: string;
  /** '' for a trace root. */
  parentSpanId: string;
  name: string;
  kind: 'internal' | 'client' | 'server';
  /** Epoch milliseconds from the records, never from the time of reading. */
  startMs: number;
  endMs: number;
  status: SpanStatus;
  statusMessage: string;
  attributes: Attributes;
  events: SpanEvent[];
  /** ccotel's span linked to another trace's span (a shell span to Claude Code's tool.execution); received: origin. */
  links?: SpanLink[];
}

export type Severity = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** A received log record's origin, and its severity and flags as sent. */
export interface LogOrigin extends Origin {
  severityText: string;
  severityNumber: number;
  traceFlags: number;
}

export interface LogRecord {
  origin?: LogOrigin;
  /** Deterministic id; stored as the `ccotel.record.id` attribute so repeats can be dropped. */
  id: string;
  timeMs: number;
  /** `ccotel.<noun>.<verb>` (DESIGN section 5). */
  eventName: string;
  severity: Severity;
  /** '' when the record belongs to no trace. */
  traceId: string;
  spanId: string;
  body: string;
  attributes: Attributes;
}

/** A received data point as sent: one row of its own (ccotel's points are put in one-minute buckets instead). */
export interface PointOrigin extends Origin {
  startMs: number;
  temporality: number;
  monotonic: boolean;
  /** Histogram points: `value` is their sum. */
  histogram?: { count: number; bucketCounts: number[]; bounds: readonly number[]; min: number; max: number };
}

export interface MetricPoint {
  origin?: PointOrigin;
  /** Deterministic id of the event this point counts; stored with the exemplar so repeats can be dropped. */
  id: string;
  name: string;
  unit: string;
  description: string;
  /** `sum`: a delta counter increment; `histogram`: one observation; `gauge`: received points only. */
  kind: 'sum' | 'histogram' | 'gauge';
  /** Event time, epoch milliseconds; sinks place it in its one-minute bucket. */
  timeMs: number;
  value: number;
  attributes: Attributes;
  /** The span the point was derived from (exported as an exemplar). */
  traceId: string;
  spanId: string;
}

export interface TelemetryBatch {
  spans: SpanRecord[];
  logs: LogRecord[];
  metrics: MetricPoint[];
}

export function emptyBatch(): TelemetryBatch {
  return { spans: [], logs: [], metrics: [] };
}

export function concatBatches(first: TelemetryBatch, second: TelemetryBatch): TelemetryBatch {
  return { spans: first.spans.concat(second.spans), logs: first.logs.concat(second.logs), metrics: first.metrics.concat(second.metrics) };
}

export function batchSize(batch: TelemetryBatch): number {
  return batch.spans.length + batch.logs.length + batch.metrics.length;
}

/** Resource attributes describing the host the sidecar runs on (service.name=ccotel, host.name, user.name, …). */
export type Resource = Attributes;

/** A sink resolves `write` only once the batch is accepted (stored or acknowledged): offsets are committed after that. */
export interface Sink {
  readonly name: string;
  write(batch: TelemetryBatch): Promise<void>;
  close(): Promise<void>;
}

/** A processing stage after correlation (mask, cap): telemetry in, telemetry out. */
export interface Processor {
  readonly name: string;
  /** The longest text this processor lets through, when it cuts text (the content cap). */
  readonly maxTextLength?: number;
  process(batch: TelemetryBatch): Promise<TelemetryBatch>;
}

/** A processor that also masks text kept outside telemetry (dead-letter files, the sidecar's own log lines). */
export interface TextMasker {
  maskString(text: string): Promise<string>;
}

export function isTextMasker(processor: Processor): processor is Processor & TextMasker {
  return typeof (processor as Partial<TextMasker>).maskString === 'function';
}

/** Run once the items it came with were accepted by every sink (e.g. delete a spool file). */
export type Ack = () => void;

/**
 * Handed over with lines read from a file: told where a restart must read that file from (everything before that
 * offset is accepted by every sink, and nothing still open needs it) once what the lines produced was accepted;
 * told again, with a later offset, when something open held it back and has gone out since (ordered-acks.ts).
 */
export type ResumeAck = (resumeOffset: number) => void;
