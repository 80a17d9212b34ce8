// Codex's own OTel log events (`[otel]` exporter otlp-http; codex-rs/otel), read as the native telemetry the joins
// know (native-telemetry.ts): `codex.tool_decision` names its call (`call_id`: the rollout's call id, so the
// `execute_tool` span's `gen_ai.tool.call.id`), with the decision and who made it; a model request is a
// `codex.api_request` (its duration) and then the `codex.sse_event` of kind `response.completed` with the response's
// token counts, both of the thread (`conversation.id`). Neither names the response, so a response is known on both
// sides by its thread and its own usage (`codexResponseKey`), which the rollouts give their chats as `request_id`:
// within a thread each request sends more input than the last, so no two responses share it.
import type { Attributes, LogRecord } from '../../model.js';
import type { NativeDialect, NativeFact } from '../../records/native-telemetry.js';

/** The key a Codex response is joined by: its thread and its own usage (input includes the cached part, as Codex counts it). */
export function codexResponseKey(threadId: string, usage: { input: number; cached: number; output: number }): string {
  return `${threadId}/${usage.input}/${usage.cached}/${usage.output}`;
}

/** A request's duration, waiting for its response's counts: at most this many threads are followed. */
const MAX_THREADS = 2_000;

const text = (attributes: Attributes, key: string) => {
  const value = attributes[key];
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
};
const count = (attributes: Attributes, key: string) => {
  const value = Number(attributes[key]);
  return Number.isFinite(value) && value >= 0 ? value : undefined;
};

export class CodexNativeTelemetry implements NativeDialect {
  readonly agent = 'codex';
  /** Per thread: the duration of the last successful request, until its response's counts come. */
  private readonly requestMs = new Map<string, number>();

  read(log: LogRecord): NativeFact | undefined {
    const a = log.attributes;
    const thread = text(a, 'conversation.id');
    if (!thread) return undefined;
    switch (a['event.name']) {
      case 'codex.api_request':
        if (text(a, 'http.response.status_code') === '200') this.remember(thread, count(a, 'duration_ms'));
        return undefined;
      case 'codex.sse_event':
        return this.completed(thread, a);
      case 'codex.tool_decision': {
        const callId = text(a, 'call_id');
        const decision = text(a, 'decision');
        // approved, approved_for_session, …: the user (or the config) let it run; denied and abort did not.
        const approved = decision?.startsWith('approved') ?? false;
        return callId ? { kind: 'tool', sessionId: thread, key: callId, decision, decisionSource: text(a, 'source'), approved } : undefined;
      }
      default:
        return undefined;
    }
  }

  /** A `response.completed` with the response's counts (Codex logs one without them too: no response of its own). */
  private completed(thread: string, a: Attributes): NativeFact | undefined {
    const [input, cached, output] = [count(a, 'input_token_count'), count(a, 'cached_token_count'), count(a, 'output_token_count')];
    if (a['event.kind'] !== 'response.completed' || input === undefined || output === undefined) return undefined;
    const apiDurationMs = this.requestMs.get(thread);
    this.requestMs.delete(thread);
    return { kind: 'chat', sessionId: thread, key: codexResponseKey(thread, { input, cached: cached ?? 0, output }), model: text(a, 'model') ?? '', apiDurationMs };
  }

  private remember(thread: string, durationMs: number | undefined): void {
    if (durationMs === undefined) return;
    this.requestMs.delete(thread);
    this.requestMs.set(thread, durationMs);
    if (this.requestMs.size > MAX_THREADS) this.requestMs.delete(this.requestMs.keys().next().value!);
  }
}
