// What an agent's own telemetry (received by `run`'s OTLP receiver) says about ccotel's chats and tool calls, as each
// agent's dialect reads it (sources/native-telemetry.ts, sources/codex/native-telemetry.ts): the joins
// (processors/native-join.ts) and the telemetry_gap detector are given the dialects and know no agent's event names. A
// model request names its chat by the key ccotel's chat span carries as `request_id`, a tool decision its call by the
// call id (`gen_ai.tool.call.id`).
import type { LogRecord } from '../model.js';
import type { AgentName } from '../semconv.js';

/** A fact's values as the record gave them (the join keeps numbers and non-empty strings). */
export type NativeFact =
  | { kind: 'chat'; sessionId: string; key: string; model: string; apiDurationMs?: unknown; ttftMs?: unknown; auxiliary?: boolean }
  /** `approved`: the decision let the call run (a call that then never ran was cut short, not refused). */
  | { kind: 'tool'; sessionId: string; key: string; decision?: unknown; decisionSource?: unknown; approved: boolean };

export interface NativeDialect {
  readonly agent: AgentName;
  /** What one received log record tells (a dialect may keep state across records: read them in order). */
  read(log: LogRecord): NativeFact | undefined;
}

/** What `log` tells, in the first dialect that reads it, and whose telemetry it is. */
export function readNative(dialects: readonly NativeDialect[], log: LogRecord): (NativeFact & { agent: AgentName }) | undefined {
  for (const dialect of dialects) {
    const fact = dialect.read(log);
    if (fact) return { ...fact, agent: dialect.agent };
  }
  return undefined;
}
