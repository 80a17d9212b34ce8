// output_truncation: a tool result the transcript holds truncated while the tool produced more — the model
// decided on part of the output. Seen as Claude Code's middle-truncation marker in the result, or its
// "Output too large … saved to" preview (2.1.x: the model gets the first 2 KB and a file path), or the hook's
// PostToolUse response (the whole output) being longer than what the transcript kept.
import type { SpanRecord } from '../../model.js';
import type { Detection } from './facts.js';

const TRUNCATION_MARKER = /\.\.\. \[\d+ characters truncated\] \.\.\.|^<persisted-output>\s*Output too large \(/;
/** Differences below this are formatting (the transcript joins stdout and stderr), not truncation. */
const MIN_MISSING_CHARS = 1_000;

export function detectOutputTruncation(span: SpanRecord): Detection[] {
  const output = span.attributes['ccotel.tool.output'];
  const kept = Number(span.attributes['ccotel.tool.output.length'] ?? 0);
  const produced = Math.max(0, ...span.events.filter((event) => event.name === 'PostToolUse').map((event) => Number(event.attributes['ccotel.tool.response.length'] ?? 0)));
  const marked = typeof output === 'string' && TRUNCATION_MARKER.test(output);
  if (!marked && produced - kept < MIN_MISSING_CHARS) return [];
  return [{ mode: 'output_truncation', sessionId: String(span.attributes['session.id'] ?? ''), timeMs: span.endMs, toolUseId: String(span.attributes.tool_use_id ?? '') }];
}
