// An agent's own records joined to ccotel's spans (DESIGN §13), whichever reaches the pipeline first (the
// receiver and the transcripts deliver one at a time, pipeline.ts). A model request by the `request_id` of ccotel's
// chat span, a tool call by its call id, as each agent's dialect reads its events (sources/native-telemetry.ts):
//   native first: ccotel's span gets what only Claude Code measures — a chat the API duration and time to first
//     token (api_request event or llm_request span), a tool call the permission decision and its source
//     (tool_decision event) and the time blocked on the user (tool.blocked_on_user span);
//   ccotel's span first: the native span (claude_code.llm_request, claude_code.tool) gets a span link to it.
// Rows are never updated, so each pair is joined one way or the other; what either side remembers is bounded.
import type { Attributes, LogRecord, Processor, SpanRecord, TelemetryBatch } from '../model.js';
import { readNative, type NativeDialect } from '../records/native-telemetry.js';

export const NATIVE_ATTRIBUTES = {
  apiDurationMs: 'ccotel.native.api_duration_ms',
  ttftMs: 'ccotel.native.ttft_ms',
  decision: 'ccotel.native.decision',
  decisionSource: 'ccotel.native.decision_source',
  blockedMs: 'ccotel.native.blocked_on_user_ms',
} as const;
/** On the link a native span gets to ccotel's span. */
export const LINK_TYPE = 'ccotel.link.type';
/** Records remembered per side and kind: a day of a busy agent's; the oldest go first. */
const MAX_REMEMBERED = 20_000;

type Kind = 'chat' | 'tool';
/** ccotel's spans of each kind, and the attribute holding their key. */
const OURS: Record<Kind, { prefix: string; key: string }> = { chat: { prefix: 'chat ', key: 'request_id' }, tool: { prefix: 'execute_tool ', key: 'gen_ai.tool.call.id' } };
/** Claude Code's span of each kind (the one linked), and the attribute holding its key. */
const NATIVE_SPANS: Record<string, { kind: Kind; key: string }> = {
  'claude_code.llm_request': { kind: 'chat', key: 'request_id' },
  'claude_code.tool': { kind: 'tool', key: 'tool_use_id' },
};
const BLOCKED_SPAN = 'claude_code.tool.blocked_on_user';

/** A Map that forgets its oldest entries past `max`. */
class Recent<V> extends Map<string, V> {
  constructor(private readonly max = MAX_REMEMBERED) {
    super();
  }

  override set(key: string, value: V): this {
    this.delete(key);
    super.set(key, value);
    if (this.size > this.max) this.delete(this.keys().next().value!);
    return this;
  }
}

const keyOf = (attributes: Attributes, key: string) => {
  const value = attributes[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/** The attributes set whose value is there (a number, or a string). */
function facts(pairs: [string, unknown][]): Attributes {
  const out: Attributes = {};
  for (const [key, value] of pairs) if ((typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && value !== '')) out[key] = value;
  return out;
}

export class NativeJoin implements Processor {
  readonly name = 'native-join';
  /** What Claude Code told, for ccotel's span still to come. */
  private readonly native: Record<Kind, Recent<Attributes>> = { chat: new Recent(), tool: new Recent() };
  /** ccotel's spans delivered, for Claude Code's spans still to come. */
  private readonly ours: Record<Kind, Recent<{ traceId: string; spanId: string }>> = { chat: new Recent(), tool: new Recent() };
  /** Claude Code's tool spans by span id: a blocked_on_user span names its call through its parent. */
  private readonly toolSpans = new Recent<string>();

  /** `dialects`: each agent's own events, read as what they tell about ccotel's chats and calls (one set per reader). */
  constructor(private readonly dialects: readonly NativeDialect[]) {}

  async process(batch: TelemetryBatch): Promise<TelemetryBatch> {
    for (const log of batch.logs) if (log.origin) this.noteEvent(log);
    for (const span of batch.spans) {
      const toolUseId = span.origin && span.name === 'claude_code.tool' ? keyOf(span.attributes, 'tool_use_id') : undefined;
      if (toolUseId) this.toolSpans.set(span.spanId, toolUseId);
    }
    return { ...batch, spans: batch.spans.map((span) => (span.origin ? this.nativeSpan(span) : this.ourSpan(span))) };
  }

  private tell(kind: Kind, key: string | undefined, told: Attributes): void {
    if (key === undefined || Object.keys(told).length === 0) return;
    this.native[kind].set(key, { ...this.native[kind].get(key), ...told });
  }

  private noteEvent(log: LogRecord): void {
    const fact = readNative(this.dialects, log);
    if (fact?.kind === 'chat') this.tell('chat', fact.key, facts([[NATIVE_ATTRIBUTES.apiDurationMs, fact.apiDurationMs], [NATIVE_ATTRIBUTES.ttftMs, fact.ttftMs]]));
    if (fact?.kind === 'tool') this.tell('tool', fact.key, facts([[NATIVE_ATTRIBUTES.decision, fact.decision], [NATIVE_ATTRIBUTES.decisionSource, fact.decisionSource]]));
  }

  private nativeSpan(span: SpanRecord): SpanRecord {
    const a = span.attributes;
    if (span.name === BLOCKED_SPAN) {
      const told = facts([[NATIVE_ATTRIBUTES.blockedMs, Math.round(span.endMs - span.startMs)], [NATIVE_ATTRIBUTES.decision, a.decision], [NATIVE_ATTRIBUTES.decisionSource, a.source]]);
      this.tell('tool', this.toolSpans.get(span.parentSpanId), told);
      return span;
    }
    const native = NATIVE_SPANS[span.name];
    const key = native && keyOf(a, native.key);
    if (!native || key === undefined) return span;
    const ours = this.ours[native.kind].get(key);
    if (!ours) {
      if (native.kind === 'chat') this.tell('chat', key, facts([[NATIVE_ATTRIBUTES.apiDurationMs, a.duration_ms], [NATIVE_ATTRIBUTES.ttftMs, a.ttft_ms]]));
      return span;
    }
    const origin = span.origin!;
    return { ...span, origin: { ...origin, links: [...origin.links, { ...ours, traceState: '', attributes: { [LINK_TYPE]: native.kind } }] } };
  }

  private ourSpan(span: SpanRecord): SpanRecord {
    const kind = (Object.keys(OURS) as Kind[]).find((candidate) => span.name.startsWith(OURS[candidate].prefix));
    const key = kind && keyOf(span.attributes, OURS[kind].key);
    if (!kind || key === undefined) return span;
    this.ours[kind].set(key, { traceId: span.traceId, spanId: span.spanId });
    const told = this.native[kind].get(key);
    return told ? { ...span, attributes: { ...span.attributes, ...told } } : span;
  }
}
