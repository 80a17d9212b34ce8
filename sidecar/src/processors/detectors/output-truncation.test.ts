// output_truncation from correlation events alone: a call's result and the PostToolUse hook joined onto its span.
import { describe, expect, it } from 'vitest';
import type { HookAttached, ToolCallEnded } from '../../events.js';
import { FailureModeDetector } from './index.js';

const call: ToolCallEnded = {
  kind: 'ToolCallEnded', traceId: 'e'.repeat(32), spanId: 'f'.repeat(16), sessionId: 's1', toolUseId: 'toolu_7', toolName: 'Bash', input: { command: 'cat big.log' },
  outcome: 'success', output: 'the first lines', startMs: 1_000, endMs: 3_000, endedAtMs: 3_000, parentSpanId: 'e'.repeat(16),
};
const postToolUse = (spanId: string, length: number): HookAttached => ({
  kind: 'HookAttached', spanId, event: { name: 'PostToolUse', timeMs: 2_900, attributes: { 'ccotel.tool.response.length': length } },
});

function detectionsAfter(events: (ToolCallEnded | HookAttached)[]) {
  const detector = new FailureModeDetector({ idleMs: 60_000 });
  detector.observe(events);
  return detector.drain().events;
}

describe('output_truncation on events', () => {
  it('is told when the PostToolUse hook on the call saw far more output than the transcript kept', () => {
    expect(detectionsAfter([call, postToolUse(call.spanId, 50_000)])).toEqual([
      expect.objectContaining({ kind: 'FailureDetected', mode: 'output_truncation', sessionId: 's1', timeMs: 3_000 }),
    ]);
  });

  it('is not told for a hook on another span, nor for a difference of formatting', () => {
    expect(detectionsAfter([call, postToolUse('0'.repeat(16), 50_000)])).toEqual([]);
    expect(detectionsAfter([call, postToolUse(call.spanId, call.output!.length + 10)])).toEqual([]);
  });
});
