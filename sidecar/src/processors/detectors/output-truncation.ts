// output_truncation: a tool result the transcript holds truncated while the tool produced more — the model
// decided on part of the output. Seen as Claude Code's middle-truncation marker in the result, or its
// "Output too large … saved to" preview (2.1.x: the model gets the first 2 KB and a file path), or the hook's
// PostToolUse response (the whole output) being longer than what the transcript kept.
import type { HookAttached, ToolCallEnded } from '../../events.js';
import { ATTRS } from '../../semconv.js';
import type { Detection } from './facts.js';

const TRUNCATION_MARKER = /\.\.\. \[\d+ characters truncated\] \.\.\.|^<persisted-output>\s*Output too large \(/;
/** Differences below this are formatting (the transcript joins stdout and stderr), not truncation. */
const MIN_MISSING_CHARS = 1_000;

/** `hooks`: the hook events joined onto the call's span (its PostToolUse tells how long the whole output was). */
export function detectOutputTruncation(call: ToolCallEnded, hooks: readonly HookAttached[]): Detection[] {
  const kept = call.output?.length ?? 0;
  const posts = hooks.filter((hook) => hook.event.name === 'PostToolUse');
  const produced = Math.max(0, ...posts.map((hook) => Number(hook.event.attributes[ATTRS.toolResponseLength] ?? 0)));
  const marked = call.output !== undefined && TRUNCATION_MARKER.test(call.output);
  if (!marked && produced - kept < MIN_MISSING_CHARS) return [];
  return [{ mode: 'output_truncation', sessionId: call.sessionId, timeMs: call.endMs, toolUseId: call.toolUseId }];
}
