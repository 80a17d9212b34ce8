// Correlation events: what the correlators and joins tell, as typed facts (never encoded telemetry). The
// transcript correlator publishes its events (events/transcript.ts); each join (hooks, shell log, detectors, session
// state) subscribes to the kinds it names and publishes its own (events/joins.ts). The encoder alone turns them into
// spans, logs and points (processors/encode): what a join adds to an item of the same round (a hook on a span, a
// hook's source on a session start) is an event the encoder applies as it builds that item.
import type { Ack, TelemetryBatch } from './model.js';
import type {
  FailureDetected, HookAttached, HookFired, HookRecorded, HookSessionStarted, PermissionBlocked, RulesApplied, SessionEnded, SessionStartConfirmed, SessionStateChanged,
  SettingsChangeTold, ShellCommandEnded, ToolCallApproved,
} from './events/joins.js';
import type { ApiErrorOccurred, ChatCompleted, CompactionOccurred, CostReported, PermissionModeChanged, SessionStarted, SubagentEnded, ToolCallEnded, TurnEnded, UserShellCommand } from './events/transcript.js';

export type * from './events/transcript.js';
export type * from './events/joins.js';
export type * from './events/settings.js';

export type CorrelationEvent =
  | ToolCallEnded
  | TurnEnded
  | CompactionOccurred
  | ChatCompleted
  | SubagentEnded
  | PermissionModeChanged
  | UserShellCommand
  | ApiErrorOccurred
  | CostReported
  | SessionStarted
  | HookSessionStarted
  | SessionEnded
  | PermissionBlocked
  | ToolCallApproved
  | ShellCommandEnded
  | HookFired
  | HookRecorded
  | HookAttached
  | SessionStartConfirmed
  | FailureDetected
  | SessionStateChanged
  | SettingsChangeTold
  | RulesApplied;

/** The call ran a shell command: Claude Code's Bash, or a source's own shell tool (it tells `shellCommand`). */
export function ranShellCommand(call: ToolCallEnded): boolean {
  return call.toolName === 'Bash' || call.shellCommand !== undefined;
}

export type EventKind = CorrelationEvent['kind'];

/** What a join publishes: events, and what to run once the sinks accepted their telemetry. */
export interface Joined {
  events: CorrelationEvent[];
  acks: Ack[];
}

/**
 * A stage that joins another input (hook events, shell commands, the process table) onto the transcript
 * telemetry. It names the event kinds it reads and publishes: the pipeline runs it after every join that
 * publishes what it reads, and hands it only those kinds.
 */
export interface Join {
  readonly consumes: readonly EventKind[];
  readonly produces: readonly EventKind[];
  /** Events of the kinds it consumes, from the transcript correlator and the joins before it, in order. */
  observe(events: readonly CorrelationEvent[]): void;
  /** Events published since the last call, with what to do once the sinks accepted their telemetry. */
  drain(): Joined;
  /** End of input (backfill): give up waiting for anything and emit what is held. */
  finish(): void;
  /** What an agent sent of itself (its own telemetry, received), for a join whose verdicts it informs. */
  receive?(batch: TelemetryBatch): void;
}

/** The rules in force at the turns among `events`, by the turn's span. */
export function rulesBySpan(events: readonly CorrelationEvent[]): Map<string, RulesApplied> {
  const bySpan = new Map<string, RulesApplied>();
  for (const event of events) if (event.kind === 'RulesApplied') bySpan.set(event.spanId, event);
  return bySpan;
}

/** The HookAttached events among `events`, by the span they were joined onto, in order. */
export function hooksBySpan(events: readonly CorrelationEvent[]): Map<string, HookAttached[]> {
  const bySpan = new Map<string, HookAttached[]>();
  for (const event of events) {
    if (event.kind !== 'HookAttached') continue;
    const onSpan = bySpan.get(event.spanId);
    if (onSpan) onSpan.push(event);
    else bySpan.set(event.spanId, [event]);
  }
  return bySpan;
}
