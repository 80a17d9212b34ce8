// Claude Code's own record of a model request joined to ccotel's chat span of it by `request_id` (DESIGN §13),
// whichever reaches the pipeline first (the receiver and the transcripts deliver one at a time, pipeline.ts):
//   native first (its api_request event, or its llm_request span): the chat span gets the API duration and the time
//     to first token only Claude Code measures (`ccotel.native.api_duration_ms`, `ccotel.native.ttft_ms`);
//   the chat span first: the native llm_request span gets a span link to it, into ccotel's turn trace.
// Rows are never updated, so each pair is joined one way or the other; what either side remembers is bounded.
import type { LogRecord, Processor, SpanRecord, TelemetryBatch } from '../model.js';

export const NATIVE_DURATION_ATTRIBUTE = 'ccotel.native.api_duration_ms';
export const NATIVE_TTFT_ATTRIBUTE = 'ccotel.native.ttft_ms';
/** On the link a native span gets to ccotel's chat span. */
export const LINK_TYPE = { 'ccotel.link.type': 'chat' };
const LLM_REQUEST_SPAN = 'claude_code.llm_request';
const CHAT_PREFIX = 'chat ';
/** Requests remembered per side: a day of a busy agent's; the oldest go first. */
const MAX_REMEMBERED = 20_000;

interface Timing {
  durationMs?: number;
  ttftMs?: number;
}

/** A Map that forgets its oldest entries past `max`. */
class Recent<V> extends Map<string, V> {
  constructor(private readonly max: number) {
    super();
  }

  override set(key: string, value: V): this {
    this.delete(key);
    super.set(key, value);
    if (this.size > this.max) this.delete(this.keys().next().value!);
    return this;
  }
}

const numberOf = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

export class NativeRequestJoin implements Processor {
  readonly name = 'native-join';
  private readonly native = new Recent<Timing>(MAX_REMEMBERED);
  private readonly chats = new Recent<{ traceId: string; spanId: string }>(MAX_REMEMBERED);

  async process(batch: TelemetryBatch): Promise<TelemetryBatch> {
    for (const log of batch.logs) if (log.origin) this.noteEvent(log);
    const spans = batch.spans.map((span) => (span.origin ? this.nativeSpan(span) : this.chatSpan(span)));
    return { ...batch, spans };
  }

  private noteEvent(log: LogRecord): void {
    const request = log.attributes.request_id;
    if (log.attributes['event.name'] !== 'api_request' || typeof request !== 'string' || request === '') return;
    this.remember(request, { durationMs: numberOf(log.attributes.duration_ms), ttftMs: numberOf(log.attributes.ttft_ms) });
  }

  private remember(request: string, timing: Timing): void {
    const known = this.native.get(request);
    this.native.set(request, { durationMs: timing.durationMs ?? known?.durationMs, ttftMs: timing.ttftMs ?? known?.ttftMs });
  }

  private nativeSpan(span: SpanRecord): SpanRecord {
    const request = span.attributes.request_id;
    if (span.name !== LLM_REQUEST_SPAN || typeof request !== 'string' || request === '') return span;
    const chat = this.chats.get(request);
    if (!chat) {
      this.remember(request, { durationMs: numberOf(span.attributes.duration_ms), ttftMs: numberOf(span.attributes.ttft_ms) });
      return span;
    }
    const origin = span.origin!;
    return { ...span, origin: { ...origin, links: [...origin.links, { ...chat, traceState: '', attributes: { ...LINK_TYPE } }] } };
  }

  private chatSpan(span: SpanRecord): SpanRecord {
    const request = span.attributes.request_id;
    if (!span.name.startsWith(CHAT_PREFIX) || typeof request !== 'string' || request === '') return span;
    this.chats.set(request, { traceId: span.traceId, spanId: span.spanId });
    const timing = this.native.get(request);
    if (!timing) return span;
    const attributes = { ...span.attributes };
    if (timing.durationMs !== undefined) attributes[NATIVE_DURATION_ATTRIBUTE] = timing.durationMs;
    if (timing.ttftMs !== undefined) attributes[NATIVE_TTFT_ATTRIBUTE] = timing.ttftMs;
    return { ...span, attributes };
  }
}
