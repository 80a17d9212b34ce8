// Claude Code's own telemetry for one session, read the way test/fixtures/real/README.md describes it:
// tool calls from `claude_code.tool` spans, model requests from `claude_code.llm_request` spans, token
// totals from `claude_code.token.usage` (delta points: a session's total is the sum of all of them), and
// resumes from `claude_code.session.count{start_type=resume}`.
import type { TokenTotals, ToolOutcome } from '../harness/scenarios.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { flattenLogs, flattenMetrics, flattenSpans, type FlatLogRecord, type FlatMetricPoint, type FlatSpan, type OtlpExport } from '../harness/otlp-receiver.js';

export interface NativeTelemetry {
  spans: FlatSpan[];
  metrics: FlatMetricPoint[];
  logs: FlatLogRecord[];
}

export function nativeTelemetry(exports: OtlpExport[]): NativeTelemetry {
  const bodies = (signal: OtlpExport['signal']) => exports.filter((e) => e.signal === signal).map((e) => e.body);
  return { spans: flattenSpans(bodies('traces')), metrics: flattenMetrics(bodies('metrics')), logs: flattenLogs(bodies('logs')) };
}

/** The native telemetry of a recorded sample folder (`otel/<signal>.jsonl`, one export body a line). */
export function sampleTelemetry(dir: string): NativeTelemetry {
  const exports = (['traces', 'metrics', 'logs'] as const).flatMap((signal) =>
    readFileSync(join(dir, 'otel', `${signal}.jsonl`), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((raw): OtlpExport => ({ signal, receivedAt: 0, raw, body: JSON.parse(raw) })),
  );
  return nativeTelemetry(exports);
}

const ofSession = (sessionId: string) => (record: { attributes: Record<string, unknown> }) => record.attributes['session.id'] === sessionId;

export interface NativeToolCall {
  toolUseId: string;
  tool: string;
  outcome: ToolOutcome;
}

/** A tool span without a `claude_code.tool.execution` child was never run: denied. */
export function nativeToolCalls(native: NativeTelemetry, sessionId: string): NativeToolCall[] {
  return native.spans
    .filter((span) => span.name === 'claude_code.tool' && ofSession(sessionId)(span))
    .map((span) => {
      const execution = native.spans.find((s) => s.parentSpanId === span.spanId && s.name === 'claude_code.tool.execution');
      const outcome: ToolOutcome = !execution ? 'denied' : execution.attributes.success === true ? 'success' : 'error';
      return { toolUseId: String(span.attributes.tool_use_id), tool: String(span.attributes['gen_ai.tool.name']), outcome };
    });
}

export interface NativeModelRequest {
  requestId: string;
  /** Raw usage, as the API reported it (`input_tokens` excludes cached input). */
  tokens: TokenTotals;
  /** `gen_ai.usage.input_tokens`: the semconv figure, input + cache read + cache creation. */
  semconvInputTokens: number;
}

export function nativeModelRequests(native: NativeTelemetry, sessionId: string): NativeModelRequest[] {
  return native.spans
    .filter((span) => span.name === 'claude_code.llm_request' && ofSession(sessionId)(span))
    .map(({ attributes: a }) => ({
      requestId: String(a.request_id),
      tokens: {
        input: Number(a.input_tokens),
        output: Number(a.output_tokens),
        cacheRead: Number(a['gen_ai.usage.cache_read.input_tokens']),
        cacheCreation: Number(a['gen_ai.usage.cache_write.input_tokens']),
      },
      semconvInputTokens: Number(a['gen_ai.usage.input_tokens']),
    }));
}

const TOKEN_TYPES: Record<string, keyof TokenTotals> = { input: 'input', output: 'output', cacheRead: 'cacheRead', cacheCreation: 'cacheCreation' };

/**
 * Sums of `claude_code.token.usage` for the session, split into the conversation (query_source main or
 * subagent) and auxiliary requests (compaction summaries), which no transcript row records.
 */
export function nativeTokenTotals(native: NativeTelemetry, sessionId: string): { conversation: TokenTotals; auxiliary: TokenTotals } {
  const totals = { conversation: zeroTokens(), auxiliary: zeroTokens() };
  for (const point of native.metrics) {
    if (point.name !== 'claude_code.token.usage' || !ofSession(sessionId)(point)) continue;
    const bucket = point.attributes.query_source === 'auxiliary' ? totals.auxiliary : totals.conversation;
    bucket[TOKEN_TYPES[String(point.attributes.type)]] += point.value;
  }
  return totals;
}

export function zeroTokens(): TokenTotals {
  return { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 };
}

export function nativeResumes(native: NativeTelemetry, sessionId: string): number {
  return native.metrics.filter(
    (p) => p.name === 'claude_code.session.count' && ofSession(sessionId)(p) && p.attributes.start_type === 'resume',
  ).length;
}

/** What Claude Code itself says about a call's permission and run. */
export interface NativeToolDecision {
  toolUseId: string;
  tool: string;
  /** `claude_code.tool.blocked_on_user`: accept|reject and its source (user_reject, config, hook, user_temporary…). */
  span?: { decision: string; source: string };
  /** The `tool_decision` event of the same call. */
  event?: { decision: string; source: string };
  /** A `claude_code.tool.execution` child: the call ran; `succeeded` is its `success`. */
  ran: boolean;
  succeeded?: boolean;
}

export function nativeToolDecisions(native: NativeTelemetry, sessionId: string): NativeToolDecision[] {
  const child = (parent: FlatSpan, name: string) => native.spans.find((s) => s.parentSpanId === parent.spanId && s.name === name);
  const decisionOf = (attributes: Record<string, unknown>) => ({ decision: String(attributes.decision), source: String(attributes.source) });
  return native.spans
    .filter((span) => span.name === 'claude_code.tool' && ofSession(sessionId)(span))
    .map((span) => {
      const toolUseId = String(span.attributes.tool_use_id);
      const blocked = child(span, 'claude_code.tool.blocked_on_user');
      const execution = child(span, 'claude_code.tool.execution');
      const event = native.logs.find((l) => l.eventName === 'tool_decision' && l.attributes.tool_use_id === toolUseId);
      return {
        toolUseId,
        tool: String(span.attributes['gen_ai.tool.name']),
        span: blocked && decisionOf(blocked.attributes),
        event: event && decisionOf(event.attributes),
        ran: execution !== undefined,
        succeeded: execution && execution.attributes.success === true,
      };
    });
}
