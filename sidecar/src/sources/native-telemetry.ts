// What an agent's own telemetry (received by `run`'s OTLP receiver) says about ccotel's chats and tool calls, read by
// a dialect per agent, so the joins (processors/native-join.ts) and the telemetry_gap detector know no agent's event
// names: a model request names its chat by the key ccotel's chat span carries as `request_id`, a tool decision its
// call by the call id (`gen_ai.tool.call.id`). Claude Code's dialect is here; another agent's lives in its source's
// folder (sources/codex/native-telemetry.ts) and is registered in `nativeDialects`.
import type { Attributes, LogRecord } from '../model.js';
import { CodexNativeTelemetry } from './codex/native-telemetry.js';

/** A fact's values as the record gave them (the join keeps numbers and non-empty strings). */
export type NativeFact =
  | { kind: 'chat'; sessionId: string; key: string; model: string; apiDurationMs?: unknown; ttftMs?: unknown; auxiliary?: boolean }
  | { kind: 'tool'; sessionId: string; key: string; decision?: unknown; decisionSource?: unknown };

export interface NativeDialect {
  readonly agent: string;
  /** What one received log record tells (a dialect may keep state across records: read them in order). */
  read(log: LogRecord): NativeFact | undefined;
}

const text = (attributes: Attributes, key: string) => {
  const value = attributes[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/** Claude Code's events: `api_request` by its `request_id`, `tool_decision` by its `tool_use_id`. */
export class ClaudeCodeNativeTelemetry implements NativeDialect {
  readonly agent = 'claude-code';

  read(log: LogRecord): NativeFact | undefined {
    const a = log.attributes;
    const sessionId = text(a, 'session.id') ?? '';
    if (a['event.name'] === 'api_request') {
      const key = text(a, 'request_id');
      return key ? { kind: 'chat', sessionId, key, model: text(a, 'model') ?? '', apiDurationMs: a.duration_ms, ttftMs: a.ttft_ms, auxiliary: a.query_source === 'auxiliary' } : undefined;
    }
    if (a['event.name'] === 'tool_decision') {
      const key = text(a, 'tool_use_id');
      return key ? { kind: 'tool', sessionId, key, decision: a.decision, decisionSource: a.source } : undefined;
    }
    return undefined;
  }
}

/** A fresh dialect of each agent (they keep state: one set per reader). */
export function nativeDialects(): NativeDialect[] {
  return [new ClaudeCodeNativeTelemetry(), new CodexNativeTelemetry()];
}

/** What `log` tells, in the first dialect that reads it. */
export function readNative(dialects: readonly NativeDialect[], log: LogRecord): NativeFact | undefined {
  for (const dialect of dialects) {
    const fact = dialect.read(log);
    if (fact) return fact;
  }
  return undefined;
}
