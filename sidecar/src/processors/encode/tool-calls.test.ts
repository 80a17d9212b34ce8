import { describe, expect, it } from 'vitest';
import type { HookAttached, ToolCallEnded } from '../../events.js';
import { EVENTS, METRICS, toolSpanId } from '../../semconv.js';
import { encode } from './index.js';

const call: ToolCallEnded = {
  kind: 'ToolCallEnded', traceId: 'a'.repeat(32), spanId: toolSpanId('toolu_1'), parentSpanId: 'b'.repeat(16), sessionId: 's1', agentId: 'agent-1',
  toolUseId: 'toolu_1', toolName: 'Bash', input: { command: 'rm -rf build' }, outcome: 'denied', output: 'Permission denied by rule\nmore',
  permissionMode: 'default', blockedBy: 'rule', startMs: 1_000, endMs: 1_000, endedAtMs: 900,
};

describe('encoding a tool call', () => {
  it('makes its span under its parent, the completion log, both points and the permission block, at the time it ended', () => {
    const { spans, logs, metrics } = encode([call]);
    expect(spans).toHaveLength(1);
    expect(spans[0]).toMatchObject({ traceId: call.traceId, spanId: call.spanId, parentSpanId: call.parentSpanId, name: 'execute_tool Bash', startMs: 1_000, endMs: 1_000 });
    expect(spans[0].attributes).toMatchObject({ 'ccotel.agent.id': 'agent-1', 'ccotel.permission.mode': 'default', 'ccotel.tool.outcome': 'denied', 'ccotel.tool.output': call.output });
    expect(logs.map((log) => [log.eventName, log.timeMs])).toEqual([[EVENTS.toolCompleted, 900], [EVENTS.permissionBlocked, 900]]);
    expect(logs[1].attributes).toMatchObject({ source: 'rule', 'ccotel.permission.mode': 'default' });
    expect(metrics.map((point) => [point.name, point.value])).toEqual([[METRICS.toolCalls.name, 1], [METRICS.toolDuration.name, 0], [METRICS.permissionBlocks.name, 1]]);
  });

  it('adds the hooks joined onto its span, in time order, and a hook failure as its error', () => {
    const hook = (timeMs: number, failure?: string): HookAttached => ({ kind: 'HookAttached', spanId: call.spanId, event: { name: `hook ${timeMs}`, timeMs, attributes: {} }, failure });
    const [span] = encode([{ ...call, outcome: 'success', blockedBy: undefined }, hook(1_500, 'hook failed'), hook(1_200)]).spans;
    expect(span.events.map((event) => event.timeMs)).toEqual([1_200, 1_500]);
    expect(span).toMatchObject({ status: 'error', statusMessage: 'hook failed' });
  });

  it('leaves a call without a result without output, and an error with the first line of its result as status', () => {
    const [unanswered] = encode([{ ...call, outcome: 'unanswered', output: undefined, blockedBy: undefined }]).spans;
    expect(unanswered.attributes['ccotel.tool.output']).toBeUndefined();
    expect(unanswered.attributes['ccotel.tool.output.length']).toBeUndefined();
    const [failed] = encode([{ ...call, outcome: 'error', blockedBy: undefined }]).spans;
    expect(failed).toMatchObject({ status: 'error', statusMessage: 'Permission denied by rule' });
  });
});
