// The one encoder: correlation events in, spans, logs and metric points out (names, units and id recipes from
// semconv.ts). What the joins add to an event (a hook on a span, a hook's source on a session start) comes as an
// event of the same round, applied here as the item is built: nothing already encoded is edited. One file per
// family of events.
import { hooksBySpan, rulesBySpan, type CorrelationEvent, type HookAttached, type PermissionBlocked, type Place, type RulesApplied, type SessionStartConfirmed } from '../../events.js';
import { placeAttributes } from '../attribution.js';
import { emptyBatch, type TelemetryBatch } from '../../model.js';
import { ATTRS, DEFAULT_AGENT, sessionStartSeed, type AgentName } from '../../semconv.js';
import { encodeChat } from './chats.js';
import { encodeCost } from './costs.js';
import { encodeFailure, encodeStateChange } from './failures.js';
import { encodeHookRecord } from './hooks.js';
import { encodeHookBlock } from './permission-blocks.js';
import { confirmationsOf, encodeHookSessionStart, encodeSessionEnd, encodeSessionStart } from './sessions.js';
import { encodeRulesApplied, encodeSettingsChange } from './settings.js';
import { encodeShellCommand } from './shell.js';
import { encodeToolCall } from './tool-calls.js';
import { encodeApiError, encodePermissionMode, encodeSubagent, encodeUserShellCommand } from './transcript-facts.js';
import { encodeCompaction, encodeTurn } from './turns.js';

/**
 * @param placeOf where a session is now, for an event that does not say (a join's: hooks, shell commands,
 * detections know the session, not its branch)
 * @param agentOf the agent of a session, for an event that does not name it (undefined: Claude Code)
 */
export function encode(
  events: readonly CorrelationEvent[],
  placeOf: (sessionId: string) => Place | undefined = () => undefined,
  agentOf: (sessionId: string) => AgentName | undefined = () => undefined,
): TelemetryBatch {
  const out = emptyBatch();
  const joined: Joined = {
    hooks: hooksBySpan(events),
    blocks: new Map(events.filter((event): event is PermissionBlocked => event.kind === 'PermissionBlocked').map((block) => [block.toolUseId, block])),
    approved: new Set(events.flatMap((event) => (event.kind === 'ToolCallApproved' ? [event.toolUseId] : []))),
    rules: rulesBySpan(events),
    confirmed: confirmationsOf(events.filter((event): event is SessionStartConfirmed => event.kind === 'SessionStartConfirmed')),
  };
  for (const event of events) {
    const [spans, logs, points] = [out.spans.length, out.logs.length, out.metrics.length];
    encodeEvent(event, out, joined);
    if (!('sessionId' in event)) continue;
    // Every point of a session names its agent, so each figure splits by agent (DESIGN §12).
    const agent = ('agent' in event ? event.agent : undefined) ?? agentOf(event.sessionId) ?? DEFAULT_AGENT;
    for (let i = points; i < out.metrics.length; i++) out.metrics[i].attributes = { [ATTRS.agentName]: agent, ...out.metrics[i].attributes };
    // Every span and log record of a session says where it came from (DESIGN §11); what the item set itself stays.
    const place = placeAttributes(event.place ?? placeOf(event.sessionId));
    if (place === undefined) continue;
    for (let i = spans; i < out.spans.length; i++) out.spans[i].attributes = { ...place, ...out.spans[i].attributes };
    for (let i = logs; i < out.logs.length; i++) out.logs[i].attributes = { ...place, ...out.logs[i].attributes };
  }
  return out;
}

/** What the batch's other events tell of an event's span or call: its hooks, verdicts, rules and confirmed start. */
interface Joined {
  hooks: Map<string, HookAttached[]>;
  blocks: Map<string, PermissionBlocked>;
  approved: Set<string>;
  rules: Map<string, RulesApplied>;
  confirmed: ReturnType<typeof confirmationsOf>;
}

function encodeEvent(event: CorrelationEvent, out: TelemetryBatch, { hooks, blocks, approved, rules, confirmed }: Joined): void {
  switch (event.kind) {
    case 'ToolCallEnded':
      encodeToolCall(event, out, hooks.get(event.spanId), { block: blocks.get(event.toolUseId), approved: approved.has(event.toolUseId) });
      break;
    case 'TurnEnded':
      encodeTurn(event, out, hooks.get(event.spanId), rules.get(event.spanId));
      break;
    case 'CompactionOccurred':
      encodeCompaction(event, out);
      break;
    case 'ChatCompleted':
      encodeChat(event, out);
      break;
    case 'SubagentEnded':
      encodeSubagent(event, out);
      break;
    case 'PermissionModeChanged':
      encodePermissionMode(event, out);
      break;
    case 'UserShellCommand':
      encodeUserShellCommand(event, out);
      break;
    case 'ApiErrorOccurred':
      encodeApiError(event, out);
      break;
    case 'CostReported':
      encodeCost(event, out);
      break;
    case 'SessionStarted':
      encodeSessionStart(event, out, confirmed.get(sessionStartSeed(event.sessionId, event.messageUuid)));
      break;
    case 'HookSessionStarted':
      encodeHookSessionStart(event, out);
      break;
    case 'SessionEnded':
      encodeSessionEnd(event, out);
      break;
    case 'PermissionBlocked':
      encodeHookBlock(event, out);
      break;
    case 'ShellCommandEnded':
      encodeShellCommand(event, out);
      break;
    case 'FailureDetected':
      encodeFailure(event, out);
      break;
    case 'SessionStateChanged':
      encodeStateChange(event, out);
      break;
    case 'HookRecorded':
      encodeHookRecord(event, out);
      break;
    case 'SettingsChangeTold':
      encodeSettingsChange(event, out);
      break;
    case 'RulesApplied':
      encodeRulesApplied(event, out);
      break;
  }
}
