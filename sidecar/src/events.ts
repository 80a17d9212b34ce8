// Correlation events: what the correlators tell the joins, as typed facts (never encoded telemetry). The
// transcript correlator publishes them beside its spans and records; each join (hooks, shell log, detectors,
// session state) subscribes to the kinds it names and publishes its own. Nothing a join publishes edits what went
// out before it: what it adds to an item of the same round (a hook on a span, a hook's source on a session start)
// is an event the pipeline applies to that round's telemetry before it leaves (join-chain.ts).
import { emptyBatch, type Ack, type Attributes, type SpanEvent, type TelemetryBatch } from './model.js';

/** The trace context of the span an event is about. */
export interface SpanContext {
  traceId: string;
  spanId: string;
}

/** A tool call ended (its result came, or it was left unanswered): its `execute_tool` span, log and points. */
export interface ToolCallEnded extends SpanContext {
  kind: 'ToolCallEnded';
  /** The span it hangs under: the turn's root, or the subagent's span. */
  parentSpanId: string;
  sessionId: string;
  /** The subagent that made the call (undefined: the main thread). */
  agentId?: string;
  toolUseId: string;
  toolName: string;
  /** The call's input as the model sent it (e.g. Bash: `{ command }`). */
  input: unknown;
  outcome: string;
  /** The result text as the transcript holds it (undefined: no result). */
  output?: string;
  /** The permission mode in force when the call was made. */
  permissionMode?: string;
  /** Who blocked the call (hook, rule, user, classifier), when its result tells a permission block. */
  blockedBy?: string;
  startMs: number;
  /** The span's end: never before its start. */
  endMs: number;
  /** When the call ended as read (its result's row, or the last row of its turn): its records' time. */
  endedAtMs: number;
}

/** A compaction of the context, as its transcript row tells it. */
export interface Compaction {
  timeMs: number;
  trigger?: string;
  preTokens?: number;
}

/** A turn closed: its `invoke_agent` root span, prompt and end logs, and a turn count. */
export interface TurnEnded extends SpanContext {
  kind: 'TurnEnded';
  sessionId: string;
  promptId?: string;
  /** The uuid of the turn's prompt row. */
  messageUuid: string;
  promptText: string;
  /** False for a turn opened by a response whose prompt is not in the input: no prompt record for it. */
  promptSeen?: false;
  /** The slash command the turn answers (`/init`), when its prompt is one. */
  commandName?: string;
  outcome: string;
  startMs: number;
  endMs: number;
  /** Where and with what the prompt was written (its row's fields). */
  cwd?: string;
  gitBranch?: string;
  version?: string;
  permissionMode?: string;
  /** Compactions during the turn, in order. */
  compactions?: Compaction[];
}

/** A compaction during a turn: a log record on the turn's root span. */
export interface CompactionOccurred extends SpanContext, Compaction {
  kind: 'CompactionOccurred';
  sessionId: string;
  messageUuid: string;
}

/** An API response is complete: its `chat {model}` span and token points. */
export interface ChatCompleted extends SpanContext {
  kind: 'ChatCompleted';
  parentSpanId: string;
  sessionId: string;
  agentId?: string;
  model: string;
  messageId: string;
  requestId?: string;
  stopReason?: string;
  startMs: number;
  endMs: number;
  tokens: { input: number; output: number; cache_read: number; cache_creation: number };
  /** Cache writes that live one hour (priced apart). */
  cacheWrites1h: number;
  /** Older releases: Claude Code's own cost of this response. */
  reportedCostUsd?: number;
}

/** The transcript told a session start, at the prompt (or command) row `messageUuid`: a log record and a point. */
export interface SessionStarted {
  kind: 'SessionStarted';
  sessionId: string;
  source: string;
  messageUuid: string;
  promptId?: string;
  /** The session's permission mode at its start. */
  permissionMode?: string;
  timeMs: number;
}

/** A session start only a SessionStart hook told: at the prompt `messageUuid` it preceded, or (none) of its own. */
export interface HookSessionStarted {
  kind: 'HookSessionStarted';
  sessionId: string;
  source: string;
  timeMs: number;
  messageUuid?: string;
  /** When the hook fired (20 digits of ns): names a start no prompt followed. */
  firedAtNs: string;
}

/** A session ended: told by its SessionEnd hook (spool file `hookFile`), or found abandoned (`detectionId`). */
export interface SessionEnded {
  kind: 'SessionEnded';
  sessionId: string;
  reason: string;
  timeMs: number;
  hookFile?: string;
  detectionId?: string;
  /** Abandoned: the likely cause. */
  cause?: string;
}

/** The hooks tell a permission block of a tool call the transcript did not call denied. */
export interface PermissionBlocked extends SpanContext {
  kind: 'PermissionBlocked';
  sessionId: string;
  toolUseId: string;
  toolName: string;
  source: string;
  timeMs: number;
}

/** A shell command of the shell log ended (or was given up on): its `shell {program}` span and log record. */
export interface ShellCommandEnded extends SpanContext {
  kind: 'ShellCommandEnded';
  /** The Bash tool span it ran under, or the span an inherited TRACEPARENT names ('' : none). */
  parentSpanId: string;
  sessionId: string;
  pid: number;
  parentPid?: number;
  /** The Bash call it ran under. */
  toolUseId?: string;
  startMs: number;
  /** Undefined when the command ended with no exit status. */
  endMs?: number;
  /** The span's end: the command's, or (killed before its end line) its tool call's. */
  spanEndMs: number;
  /** As run; cut by the shell script when `truncated` (ending in `…`). */
  commandLine: string;
  /** Length of the command as run. */
  commandLength: number;
  truncated: boolean;
  /** Its end line was read (which may still lack an exit status). */
  ended: boolean;
  exitStatus?: number;
  /** What the shell told of its process, when it told it. */
  process: { groupLeaderPid?: number; sessionLeaderPid?: number; tty?: string; cwd?: string; traceparent?: string };
}

/** A Claude Code hook event, as it is read from the spool (whether or not its span came yet). */
export interface HookFired {
  kind: 'HookFired';
  /** `hook_event_name`: SessionStart, PreToolUse, Stop, … */
  name: string;
  sessionId: string;
  timeMs: number;
  /** What the hook said, as its log record carries it (source, reason, notification_type, …). */
  attributes: Attributes;
  /** The spool file it came in: names the event (a re-read gives the same ids). */
  file: string;
}

/** A hook event joined onto a span of the same round: the pipeline adds it as a span event (and a failure as the span's error). */
export interface HookAttached {
  kind: 'HookAttached';
  spanId: string;
  event: SpanEvent;
  /** StopFailure: the span's error message. */
  failure?: string;
}

/** A hook event's record goes out, in the trace context of the span it was joined onto (none: empty). */
export interface HookRecorded extends SpanContext {
  kind: 'HookRecorded';
  name: string;
  sessionId: string;
  timeMs: number;
  attributes: Attributes;
  body: string;
  /** The spool file it came in: names its record. */
  file: string;
}

/** A SessionStart hook confirmed the transcript's start at the prompt `messageUuid`: its source replaces the inferred one. */
export interface SessionStartConfirmed {
  kind: 'SessionStartConfirmed';
  sessionId: string;
  messageUuid: string;
  source: string;
}

/** A failure-mode detection (DESIGN section 6), in the trace context of its tool call (none: empty); `id` names its record. */
export interface FailureDetected extends SpanContext {
  kind: 'FailureDetected';
  id: string;
  mode: string;
  sessionId: string;
  timeMs: number;
  cause?: string;
  toolUseId?: string;
  /** The process it is about. */
  process?: { pid: number; commandLine: string; ppid: number };
  /** abandoned_session: the Claude Code process that vanished. */
  agentPid?: number;
  /** A listener's port. */
  port?: number;
}

/** A session's state changed (idle, running, waiting_for_input, resumed, ended, abandoned); `id` names its record. */
export interface SessionStateChanged {
  kind: 'SessionStateChanged';
  id: string;
  sessionId: string;
  state: string;
  previousState?: string;
  reason: string;
  timeMs: number;
}

export type CorrelationEvent =
  | ToolCallEnded
  | TurnEnded
  | CompactionOccurred
  | ChatCompleted
  | SessionStarted
  | HookSessionStarted
  | SessionEnded
  | PermissionBlocked
  | ShellCommandEnded
  | HookFired
  | HookRecorded
  | HookAttached
  | SessionStartConfirmed
  | FailureDetected
  | SessionStateChanged;

export type EventKind = CorrelationEvent['kind'];

/** Telemetry and the events told about it, taken together from a correlator or a join. */
export interface Correlated {
  batch: TelemetryBatch;
  events: CorrelationEvent[];
}

/** What a join adds: telemetry, events, and what to run once the sinks accepted the telemetry. */
export interface Joined extends Correlated {
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
  /** Items and events produced since the last call, with what to do once the sinks accepted the items. */
  drain(): Joined;
  /** End of input (backfill): give up waiting for anything and emit what is held. */
  finish(): void;
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

export function emptyCorrelated(): Correlated {
  return { batch: emptyBatch(), events: [] };
}
