// What the joins tell: hook events (their records, what they add to a span or a start, the starts, ends and
// permission blocks they imply), shell commands, failure modes, session states, and settings changes and the rules
// in force.
import type { Attributes, SpanEvent } from '../model.js';
import type { RulesInForce, SettingsChanged } from './settings.js';
import type { InSession, SpanContext } from './transcript.js';

/** A session start only a SessionStart hook told: at the prompt `messageUuid` it preceded, or (none) of its own. */
export interface HookSessionStarted extends InSession {
  kind: 'HookSessionStarted';
  source: string;
  timeMs: number;
  messageUuid?: string;
  /** When the hook fired (20 digits of ns): names a start no prompt followed. */
  firedAtNs: string;
}

/** A session ended: told by its SessionEnd hook (spool file `hookFile`), or found abandoned (`detectionId`). */
export interface SessionEnded extends InSession {
  kind: 'SessionEnded';
  reason: string;
  timeMs: number;
  hookFile?: string;
  detectionId?: string;
  /** Abandoned: the likely cause. */
  cause?: string;
}

/** The hooks tell a permission block of a tool call the transcript did not call denied. */
export interface PermissionBlocked extends SpanContext, InSession {
  kind: 'PermissionBlocked';
  toolUseId: string;
  toolName: string;
  source: string;
  timeMs: number;
}

/**
 * The agent's own telemetry says a call was approved whose source told it refused only for want of a sign that it
 * ran (`refusalInferred`): it was cut short, not refused.
 */
export interface ToolCallApproved extends InSession {
  kind: 'ToolCallApproved';
  toolUseId: string;
}

/** A shell command of the shell log ended (or was given up on): its `shell {program}` span and log record. */
export interface ShellCommandEnded extends SpanContext, InSession {
  kind: 'ShellCommandEnded';
  /** The Bash tool span it ran under, or the span an inherited TRACEPARENT names ('' : none). */
  parentSpanId: string;
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
export interface HookFired extends InSession {
  kind: 'HookFired';
  /** `hook_event_name`: SessionStart, PreToolUse, Stop, … */
  name: string;
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
export interface HookRecorded extends SpanContext, InSession {
  kind: 'HookRecorded';
  name: string;
  timeMs: number;
  attributes: Attributes;
  body: string;
  /** The spool file it came in: names its record. */
  file: string;
}

/** A SessionStart hook confirmed the transcript's start at the prompt `messageUuid`: its source replaces the inferred one. */
export interface SessionStartConfirmed extends InSession {
  kind: 'SessionStartConfirmed';
  messageUuid: string;
  source: string;
}

/** A failure-mode detection (DESIGN section 6), in the trace context of its tool call (none: empty); `id` names its record. */
export interface FailureDetected extends SpanContext, InSession {
  kind: 'FailureDetected';
  id: string;
  mode: string;
  timeMs: number;
  cause?: string;
  toolUseId?: string;
  /** The process it is about. */
  process?: { pid: number; commandLine: string; ppid: number };
  /** abandoned_session: the Claude Code process that vanished. */
  agentPid?: number;
  /** A listener's port. */
  port?: number;
  /** What was found, in words (telemetry_gap: what differs and from when): the record's body. */
  detail?: string;
}

/** A session's state changed (idle, running, waiting_for_input, resumed, ended, abandoned); `id` names its record. */
export interface SessionStateChanged extends InSession {
  kind: 'SessionStateChanged';
  id: string;
  state: string;
  previousState?: string;
  reason: string;
  timeMs: number;
}

/** A settings file changed, or was first seen: its `ccotel.settings.changed` record. */
export interface SettingsChangeTold {
  kind: 'SettingsChangeTold';
  change: SettingsChanged;
  /** The sessions that ran under the file shortly before the change. */
  sessions: string[];
  /** The session whose ConfigChange hook told the same change. */
  toldBySession?: string;
}

/** The rules in force when a turn started: their fingerprint on the turn's span; first in its session, their record. */
export interface RulesApplied extends SpanContext, InSession {
  kind: 'RulesApplied';
  timeMs: number;
  rules: RulesInForce;
  firstInSession: boolean;
}
