// The one encoder: correlation events in, spans, logs and metric points out (names, units and id recipes from
// semconv.ts). What the joins add to an event (a hook on a span, a hook's source on a session start) comes as an
// event of the same round, applied here as the item is built: nothing already encoded is edited. One file per
// family of events.
import { hooksBySpan, rulesBySpan, type CorrelationEvent, type SessionStartConfirmed } from '../../events.js';
import { emptyBatch, type TelemetryBatch } from '../../model.js';
import { sessionStartSeed } from '../../semconv.js';
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

export function encode(events: readonly CorrelationEvent[]): TelemetryBatch {
  const out = emptyBatch();
  const hooks = hooksBySpan(events);
  const rules = rulesBySpan(events);
  const confirmed = confirmationsOf(events.filter((event): event is SessionStartConfirmed => event.kind === 'SessionStartConfirmed'));
  for (const event of events) {
    switch (event.kind) {
      case 'ToolCallEnded':
        encodeToolCall(event, out, hooks.get(event.spanId));
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
  return out;
}
