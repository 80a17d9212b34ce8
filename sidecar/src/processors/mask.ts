import { createHmac } from 'node:crypto';
import { recordIdOf } from '../ids.js';
import type { Attributes, LogRecord, MetricPoint, Origin, Processor, SpanRecord, TelemetryBatch, TextMasker } from '../model.js';
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
  /** Attributes of the item (for an event: of its span) as set so far, where session.id and tool_use_id are. */
  readonly attributes: Attributes;
  /** Attributes the field's `<key>.original_length` goes to (on the item's copy). */
  readonly target: Attributes;
}

/** A string of a batch: `field` is the attribute key, or `body`, `name`, `status_message`. */
export interface TextField {
  field: string;
  /** Names (built by the correlator from tool, model, program and hook event names) and ids: masked, never capped. */
  uncapped: boolean;
  /** The value in the input batch. */
  value: string;
  owner: FieldOwner;
  set(value: string): void;
}

/**
 * An item of a batch, copied (its attributes and events too) the first time something of it is set: the input
 * stays as it was, and the many items nothing is set in are never copied.
 */
class CopyOnWrite<T> {
  private copy?: T;

  constructor(
    private readonly original: T,
    private readonly copyOf: (item: T) => T,
  ) {}

  get current(): T {
    return this.copy ?? this.original;
  }

  get writable(): T {
    return (this.copy ??= this.copyOf(this.original));
  }
}

/** A received item's origin is copied with it: its resource attributes are masked too. */
const copyOrigin = <T extends { origin?: Origin }>(item: T): Pick<T, 'origin'> => (item.origin ? { origin: { ...item.origin, resource: { ...item.origin.resource } } } : {});
const copySpan = (span: SpanRecord): SpanRecord => ({
  ...span,
  ...copyOrigin(span),
  attributes: { ...span.attributes },
  events: span.events.map((event) => ({ ...event, attributes: { ...event.attributes } })),
});
const copyWithAttributes = <T extends { attributes: Attributes; origin?: Origin }>(item: T): T => ({ ...item, ...copyOrigin(item), attributes: { ...item.attributes } });

interface OwnerFields {
  id: string;
  timeMs: number;
  traceId: string;
  spanId: string;
}

/** The owner of a span's, log record's or point's fields; of a span event's when `event` is its index. */
class ItemOwner<T extends { attributes: Attributes }> implements FieldOwner {
  readonly id: string;
  readonly timeMs: number;
  readonly traceId: string;
  readonly spanId: string;

  constructor(
    fields: OwnerFields,
    private readonly item: CopyOnWrite<T>,
    private readonly event?: number,
  ) {
    ({ id: this.id, timeMs: this.timeMs, traceId: this.traceId, spanId: this.spanId } = fields);
  }

  get attributes(): Attributes {
    return this.item.current.attributes;
  }

  get target(): Attributes {
    const item = this.item.writable;
    return this.event === undefined ? item.attributes : (item as unknown as SpanRecord).events[this.event].attributes;
  }
}

export interface BatchFields {
  /** Every string field of the batch (that `wanted` keeps), in the order of its items. */
  fields: TextField[];
  /** The batch with what was set so far: copies of the items changed, the input's own items for the rest. */
  batch(): TelemetryBatch;
}

/** A string attribute of an item or of one of its span's events: set in the copy its owner writes to. */
class AttributeField implements TextField {
  constructor(
    readonly field: string,
    readonly uncapped: boolean,
    readonly value: string,
    readonly owner: FieldOwner,
  ) {}

  set(masked: string): void {
    this.owner.target[this.field] = masked;
  }
}

/**
 * Every string field of the batch, each settable without changing the input batch. `wanted` picks the fields a
 * processor acts on before any is made (capping wants the few long ones of millions).
 */
export function textFieldsOf(input: TelemetryBatch, wanted: (value: string, uncapped: boolean) => boolean = () => true): BatchFields {
  const fields: TextField[] = [];
  const add = (field: TextField) => {
    if (wanted(field.value, field.uncapped)) fields.push(field);
  };
  const addAttributes = (attributes: Attributes, owner: FieldOwner) => {
    for (const key in attributes) {
      const value = attributes[key];
      if (typeof value !== 'string') continue;
      const uncapped = isIdKey(key);
      if (wanted(value, uncapped)) fields.push(new AttributeField(key, uncapped, value, owner));
    }
  };
  // A received item's resource (Claude Code's OTEL_RESOURCE_ATTRIBUTES, say): masked, not capped (labels, and no
  // attribute of the item to note a cut in).
  const addResource = <T extends { origin?: Origin }>(original: T, item: CopyOnWrite<T>, owner: FieldOwner) => {
    const resource = original.origin?.resource;
    for (const key in resource) {
      const value = resource[key];
      if (typeof value === 'string') add({ field: `resource.${key}`, uncapped: true, value, owner, set: (masked) => (item.writable.origin!.resource[key] = masked) });
    }
  };
  const spans = input.spans.map((original) => {
    const span = new CopyOnWrite(original, copySpan);
    const spanFields = { id: `${original.traceId}:${original.spanId}`, timeMs: original.startMs, traceId: original.traceId, spanId: original.spanId };
    const owner = new ItemOwner(spanFields, span);
    add({ field: 'name', uncapped: true, value: original.name, owner, set: (masked) => (span.writable.name = masked) });
    add({ field: 'status_message', uncapped: false, value: original.statusMessage, owner, set: (masked) => (span.writable.statusMessage = masked) });
    addAttributes(original.attributes, owner);
    addResource(original, span, owner);
    original.events.forEach((event, index) => {
      const eventOwner = new ItemOwner({ ...spanFields, id: `${spanFields.id}:event:${index}`, timeMs: event.timeMs }, span, index);
      add({ field: 'name', uncapped: true, value: event.name, owner: eventOwner, set: (masked) => (span.writable.events[index].name = masked) });
      addAttributes(event.attributes, eventOwner);
    });
    return span;
  });
  const logs = input.logs.map((original) => {
    const log = new CopyOnWrite(original, copyWithAttributes);
    const owner = new ItemOwner({ id: original.id, timeMs: original.timeMs, traceId: original.traceId, spanId: original.spanId }, log);
    add({ field: 'body', uncapped: false, value: original.body, owner, set: (masked) => (log.writable.body = masked) });
    add({ field: 'event_name', uncapped: true, value: original.eventName, owner, set: (masked) => (log.writable.eventName = masked) });
    addAttributes(original.attributes, owner);
    addResource(original, log, owner);
    return log;
  });
  const metrics = input.metrics.map((original) => {
    const point = new CopyOnWrite(original, copyWithAttributes);
    const owner = new ItemOwner({ id: original.id, timeMs: original.timeMs, traceId: original.traceId, spanId: original.spanId }, point);
    addAttributes(original.attributes, owner);
    addResource(original, point, owner);
    return point;
  });
  return {
    fields,
    batch: () => ({ spans: spans.map((span) => span.current), logs: logs.map((log) => log.current), metrics: metrics.map((point) => point.current) }),
  };
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
    const collected = textFieldsOf(input);
    const { fields } = collected;
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
    const batch = collected.batch();
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
