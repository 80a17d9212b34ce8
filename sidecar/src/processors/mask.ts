import { createHmac } from 'node:crypto';
import { recordIdOf } from '../ids.js';
import type { Attributes, LogRecord, MetricPoint, Processor, TelemetryBatch, TextMasker } from '../model.js';
import { ATTRS, EVENTS, METRICS, metricPoint } from '../semconv.js';
import { decodedSecret, type Finding, type SecretDetector } from './secret-detector.js';

// The masking stage: every string of a batch passes through one batched detection, each secret is
// replaced by `[REDACTED:<rule>:<fingerprint>]`, and each detection is reported as a
// `ccotel.redactions{rule}` point and a `ccotel.secret.detected` log record that never holds the value.

/** The mask marker; the cap never cuts inside one. */
export const MASK_MARKER = /\[REDACTED:[a-z0-9-]+:[0-9a-f]{6}\]/;

/** First 6 hex of HMAC-SHA256(installation key, secret): correlates a leak without storing it. */
export function fingerprintOf(secret: string, key: Buffer): string {
  return createHmac('sha256', key).update(secret).digest('hex').slice(0, 6);
}

/** The same secret gets the same fingerprint whether it was found as is or JSON-escaped. */
function fingerprintAt(text: string, finding: Finding, key: Buffer): string {
  return fingerprintOf(decodedSecret(text.slice(finding.start, finding.end)), key);
}

export function maskText(text: string, findings: readonly Finding[], key: Buffer): string {
  let masked = '';
  let from = 0;
  for (const finding of findings) {
    masked += text.slice(from, finding.start) + `[REDACTED:${finding.rule}:${fingerprintAt(text, finding, key)}]`;
    from = finding.end;
  }
  return masked + text.slice(from);
}

/**
 * Keys of ids (session.id, tool_use_id, …): never capped. They are masked like any text: a real id holds
 * nothing a detector finds, and one that does came from a hostile or broken input. Masking keeps the record,
 * and the mask is deterministic (same secret, same fingerprint), so a masked id still joins across
 * batches and sinks; trace and span ids are derived from the raw ids before masking and are not attributes.
 */
export function isIdKey(key: string): boolean {
  return key.endsWith('.id') || key.endsWith('_id');
}

/** What a text field belongs to: enough to stamp and place the records derived from it. */
export interface FieldOwner {
  /** Deterministic id of the span, event, log record or point. */
  id: string;
  timeMs: number;
  traceId: string;
  spanId: string;
  /** Attributes of the item (for an event: of its span), where session.id and tool_use_id are. */
  attributes: Attributes;
  /** Attributes the field's `<key>.original_length` goes to. */
  target: Attributes;
}

/** A string of a batch: `field` is the attribute key, or `body`, `name`, `status_message`. */
export interface TextField {
  field: string;
  /** Names (built by the correlator from tool, model, program and hook event names) and ids: masked, never capped. */
  uncapped: boolean;
  value: string;
  owner: FieldOwner;
  set(value: string): void;
}

/** A copy of the batch (items and their attributes copied, so the input is left as it was) and every string field in it. */
export function textFieldsOf(batch: TelemetryBatch): { batch: TelemetryBatch; fields: TextField[] } {
  const fields: TextField[] = [];
  const addAttributes = (attributes: Attributes, owner: FieldOwner) => {
    for (const [key, value] of Object.entries(attributes)) {
      if (typeof value !== 'string') continue;
      fields.push({ field: key, uncapped: isIdKey(key), value, owner, set: (masked) => (attributes[key] = masked) });
    }
  };
  const spans = batch.spans.map((original) => {
    const span = { ...original, attributes: { ...original.attributes }, events: original.events.map((e) => ({ ...e, attributes: { ...e.attributes } })) };
    const owner: FieldOwner = { id: `${span.traceId}:${span.spanId}`, timeMs: span.startMs, traceId: span.traceId, spanId: span.spanId, attributes: span.attributes, target: span.attributes };
    fields.push({ field: 'name', uncapped: true, value: span.name, owner, set: (masked) => (span.name = masked) });
    fields.push({ field: 'status_message', uncapped: false, value: span.statusMessage, owner, set: (masked) => (span.statusMessage = masked) });
    addAttributes(span.attributes, owner);
    span.events.forEach((event, index) => {
      const eventOwner: FieldOwner = { ...owner, id: `${owner.id}:event:${index}`, timeMs: event.timeMs, target: event.attributes };
      fields.push({ field: 'name', uncapped: true, value: event.name, owner: eventOwner, set: (masked) => (event.name = masked) });
      addAttributes(event.attributes, eventOwner);
    });
    return span;
  });
  const logs = batch.logs.map((original) => {
    const log = { ...original, attributes: { ...original.attributes } };
    const owner: FieldOwner = { id: log.id, timeMs: log.timeMs, traceId: log.traceId, spanId: log.spanId, attributes: log.attributes, target: log.attributes };
    fields.push({ field: 'body', uncapped: false, value: log.body, owner, set: (masked) => (log.body = masked) });
    fields.push({ field: 'event_name', uncapped: true, value: log.eventName, owner, set: (masked) => (log.eventName = masked) });
    addAttributes(log.attributes, owner);
    return log;
  });
  const metrics = batch.metrics.map((original) => {
    const point = { ...original, attributes: { ...original.attributes } };
    addAttributes(point.attributes, { id: point.id, timeMs: point.timeMs, traceId: point.traceId, spanId: point.spanId, attributes: point.attributes, target: point.attributes });
    return point;
  });
  return { batch: { spans, logs, metrics }, fields };
}

/** Attributes of a detection record taken from the item the secret was found in (never the value). */
const CONTEXT_KEYS = [ATTRS.sessionId, ATTRS.toolUseId, 'ccotel.source.file'] as const;

export class MaskProcessor implements Processor, TextMasker {
  readonly name = 'mask';

  constructor(
    private readonly detector: SecretDetector,
    private readonly key: Buffer,
  ) {}

  async process(input: TelemetryBatch): Promise<TelemetryBatch> {
    const { batch, fields } = textFieldsOf(input);
    const findings = await this.detector.detect(fields.map((f) => f.value));
    const logs: LogRecord[] = [];
    const metrics: MetricPoint[] = [];
    fields.forEach((field, index) => {
      if (findings[index].length > 0) field.set(maskText(field.value, findings[index], this.key));
    });
    // Records after every field is masked: they copy ids (session.id, …) that may have held a secret too.
    fields.forEach((field, index) => {
      findings[index].forEach((finding, position) => {
        const fingerprint = fingerprintAt(field.value, finding, this.key);
        const id = recordIdOf('secret.detected', field.owner.id, field.field, String(position));
        logs.push(detectionRecord(id, field, finding.rule, fingerprint));
        metrics.push(redactionPoint(id, field, finding.rule));
      });
    });
    return { spans: batch.spans, logs: batch.logs.concat(logs), metrics: batch.metrics.concat(metrics) };
  }

  /** For outputs outside telemetry (the dead-letter file, the sidecar's own log lines). */
  async maskStrings(texts: readonly string[]): Promise<string[]> {
    const findings = await this.detector.detect(texts);
    return texts.map((text, index) => maskText(text, findings[index], this.key));
  }

  async maskString(text: string): Promise<string> {
    return (await this.maskStrings([text]))[0];
  }
}

function detectionRecord(id: string, field: TextField, rule: string, fingerprint: string): LogRecord {
  const attributes: Attributes = { rule, 'ccotel.secret.fingerprint': fingerprint, 'ccotel.secret.field': field.field };
  for (const key of CONTEXT_KEYS) {
    const value = field.owner.attributes[key];
    if (value !== undefined) attributes[key] = value;
  }
  return {
    id,
    timeMs: field.owner.timeMs,
    eventName: EVENTS.secretDetected,
    severity: 'WARN',
    traceId: field.owner.traceId,
    spanId: field.owner.spanId,
    body: `secret masked: ${rule} in ${field.field}`,
    attributes,
  };
}

function redactionPoint(id: string, field: TextField, rule: string): MetricPoint {
  return metricPoint(METRICS.redactions, { id, timeMs: field.owner.timeMs, attributes: { rule }, traceId: field.owner.traceId, spanId: field.owner.spanId });
}
