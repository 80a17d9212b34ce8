// A tool call that ended: its `execute_tool {tool}` span (with the hooks joined onto it), a completion log, call
// and duration points, and for a blocked call a permission block log and point.
import type { HookAttached, PermissionBlocked, ToolCallEnded } from '../../events.js';
import type { Attributes, TelemetryBatch } from '../../model.js';
import { commonAttributes, EVENTS, METRICS } from '../../semconv.js';
import { attachHooks } from './hooks.js';
import { encodeBlock } from './permission-blocks.js';
import { logRecord, point } from './records.js';

/**
 * A call whose source could not tell a refusal from an interrupt (refusalUnknown) is denied when the hooks told a
 * block of it in the same round (correlate-hooks.ts decides: asked for permission, never run, not approved); one it
 * told refused only for want of a sign that it ran (refusalInferred) was cut short when its agent said it approved it.
 */
function settled(call: ToolCallEnded, { block, approved }: Verdicts): ToolCallEnded {
  if (call.refusalInferred && approved) return { ...call, outcome: 'interrupted', blockedBy: undefined };
  return call.refusalUnknown && block ? { ...call, outcome: 'denied', blockedBy: block.source } : call;
}

/** What the joins of the round told of a call's verdict. */
export interface Verdicts {
  block?: PermissionBlocked;
  approved?: boolean;
}

export function encodeToolCall(told: ToolCallEnded, out: TelemetryBatch, hooks: readonly HookAttached[] | undefined, verdicts: Verdicts = {}): void {
  const call = settled(told, verdicts);
  const { traceId, spanId, sessionId, toolName, toolUseId, outcome, output, endedAtMs } = call;
  const attributes: Attributes = {
    ...commonAttributes(sessionId, 'execute_tool'),
    'gen_ai.tool.name': toolName,
    'gen_ai.tool.call.id': toolUseId,
    tool_use_id: toolUseId,
    'ccotel.tool.outcome': outcome,
  };
  if (call.agentId) attributes['ccotel.agent.id'] = call.agentId;
  if (call.permissionMode) attributes['ccotel.permission.mode'] = call.permissionMode;
  const inputText = JSON.stringify(call.input ?? {});
  attributes['ccotel.tool.input.length'] = inputText.length;
  if (output !== undefined) attributes['ccotel.tool.output.length'] = output.length;
  // Text goes out as it is here; the processors mask it, cap it, or (content level none) drop it.
  attributes['ccotel.tool.input'] = inputText;
  if (output !== undefined) attributes['ccotel.tool.output'] = output;
  const span = {
    traceId,
    spanId,
    parentSpanId: call.parentSpanId,
    name: `execute_tool ${toolName}`,
    kind: 'internal' as const,
    startMs: call.startMs,
    endMs: call.endMs,
    status: outcome === 'error' ? ('error' as const) : ('unset' as const),
    statusMessage: outcome === 'error' && output !== undefined ? firstLine(output) : '',
    attributes,
    events: [],
  };
  attachHooks(span, hooks);
  out.spans.push(span);
  const metricAttrs = { 'gen_ai.tool.name': toolName, outcome };
  const seconds = Math.max(0, endedAtMs - call.startMs) / 1000;
  out.metrics.push(point(METRICS.toolCalls, { timeMs: endedAtMs, value: 1, attributes: metricAttrs, traceId, spanId, idSeed: `${spanId}:calls` }));
  out.metrics.push(point(METRICS.toolDuration, { timeMs: endedAtMs, value: seconds, attributes: metricAttrs, traceId, spanId, idSeed: `${spanId}:duration` }));
  const logAttrs: Attributes = { 'gen_ai.tool.name': toolName, tool_use_id: toolUseId, outcome };
  const severity = outcome === 'error' ? 'WARN' : 'INFO';
  out.logs.push(logRecord({ eventName: EVENTS.toolCompleted, severity, timeMs: endedAtMs, sessionId, traceId, spanId, body: inputText, attributes: logAttrs, idSeed: `${spanId}:completed` }));
  const source = call.blockedBy;
  if (!source) return;
  const blockAttrs: Attributes = { ...logAttrs, source };
  if (call.permissionMode) blockAttrs['ccotel.permission.mode'] = call.permissionMode;
  encodeBlock({ sessionId, traceId, spanId, toolUseId, toolName, source, timeMs: endedAtMs, attributes: blockAttrs }, out);
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
