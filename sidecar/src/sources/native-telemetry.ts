// Each agent's dialect of its own telemetry (records/native-telemetry.ts): Claude Code's is here; another agent's lives
// in its source's folder (sources/codex/native-telemetry.ts) and is registered in `nativeDialects`, which the pipeline
// hands to the processors that read them.
import type { Attributes, LogRecord } from '../model.js';
import type { NativeDialect, NativeFact } from '../records/native-telemetry.js';
import { CodexNativeTelemetry } from './codex/native-telemetry.js';

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
      return key ? { kind: 'tool', sessionId, key, decision: a.decision, decisionSource: a.source, approved: a.decision === 'accept' } : undefined;
    }
    return undefined;
  }
}

/** A fresh dialect of each agent (they keep state: one set per reader). */
export function nativeDialects(): NativeDialect[] {
  return [new ClaudeCodeNativeTelemetry(), new CodexNativeTelemetry()];
}
