// The failure-mode detectors of DESIGN section 6, fed by correlation events (tool calls, shell commands, turns and
// the hooks joined onto them), the hook events as they are read, and the process table. Each detection is told as
// FailureDetected (encode/failures.ts: a `ccotel.failure_modes{mode}` point and a `ccotel.failure_mode.detected`
// log record naming the session, tool call, pid, command and (listeners) port).
// Ids are derived from mode + session + call + process (pid and start ticks): a re-scan reports nothing twice.
import { recordIdOf } from '../../ids.js';
import { hooksBySpan, ranShellCommand, type CorrelationEvent, type Join, type Joined } from '../../events.js';
import type { ProcessScan } from '../../records/process-scan.js';
import type { Hook } from '../hook-input.js';
import { ABANDON_GRACE_MS, detectAbandonedSessions } from './abandoned-session.js';
import { detectApprovalScope } from './approval-scope.js';
import { agentAlive, Facts, OUTLIVE_GRACE_MS, type Detection } from './facts.js';
import { detectOrphanProcesses } from './orphan-process.js';
import { detectOutputTruncation } from './output-truncation.js';
import { detectResumedWithProcesses, detectTurnRerun } from './replay-divergence.js';
import { detectSignalPropagation } from './signal-propagation.js';

export type { Detection, FailureMode } from './facts.js';

export interface FailureModeOptions {
  /** A hooked session silent this long, with no SessionEnd and no process known, is abandoned. */
  idleMs: number;
  /** Where pseudo-terminals live (tests). */
  devRoot?: string;
}

/**
 * Hook events after which a process scan is worth having soon, and how soon: a call's processes count as
 * outliving it only after OUTLIVE_GRACE_MS, so scan just after that; a start, at once (its agent's terminal).
 */
const SCAN_AFTER: Record<string, number> = {
  SessionStart: 0,
  PostToolUse: OUTLIVE_GRACE_MS + 500,
  PostToolUseFailure: OUTLIVE_GRACE_MS + 500,
  Stop: OUTLIVE_GRACE_MS + 500,
  SessionEnd: OUTLIVE_GRACE_MS + 500,
};

export class FailureModeDetector implements Join {
  readonly consumes = ['ToolCallEnded', 'TurnEnded', 'ShellCommandEnded', 'HookAttached'] as const;
  readonly produces = ['FailureDetected', 'SessionEnded'] as const;
  readonly facts = new Facts();
  private events: CorrelationEvent[] = [];
  private readonly reported = new Set<string>();
  /** Asks for a look at the process table in `delayMs` (set by `run`: an event after which a detection may be due). */
  requestScan: (delayMs: number) => void = () => {};

  constructor(private readonly options: FailureModeOptions) {}

  /** Hook events, as they are read (not when their span goes out): session liveness must not lag. */
  readonly onHook = (hook: Hook): void => {
    const session = this.facts.session(hook.sessionId);
    session.hooked = true;
    session.agent ??= hook.event.agent;
    if (hook.timeMs >= session.lastEventMs) session.lastHook = hook.name;
    session.lastEventMs = Math.max(session.lastEventMs, hook.timeMs);
    if (hook.name === 'SessionEnd') session.endedAtMs = hook.timeMs;
    if (hook.name === 'SessionStart') {
      session.endedAtMs = undefined;
      session.abandoned = false;
      session.startedAtMs = hook.timeMs;
      session.agents.clear();
      session.openCalls.clear();
      if (hook.attributes.source === 'resume') session.resumedAtMs.push(hook.timeMs);
    }
    // The hook names the Claude Code process that fired it (CLAUDE_PID): the session's current agent.
    if (hook.event.agentPid !== undefined) this.facts.addAgent(session, hook.event.agentPid, hook.timeMs);
    const delayMs = SCAN_AFTER[hook.name];
    if (delayMs !== undefined) this.requestScan(delayMs);
    if (hook.toolUseId === undefined) return;
    // A call is known from its PreToolUse while it runs (its span comes once it is over).
    const name = hook.toolName ?? 'unknown';
    const call = () => this.facts.callById(hook.toolUseId!, { sessionId: hook.sessionId, name, runsCommand: name === 'Bash', startMs: hook.timeMs });
    if (hook.name === 'PreToolUse') {
      session.openCalls.add(hook.toolUseId);
      call();
    }
    if (hook.name === 'PostToolUse' || hook.name === 'PostToolUseFailure') session.openCalls.delete(hook.toolUseId);
    if (hook.name === 'PostToolUseFailure' && hook.attributes.is_interrupt === true) call().interruptedAtMs = hook.timeMs;
  };

  observe(events: readonly CorrelationEvent[]): void {
    // The hooks joined onto a call come after the call in the round (their join runs after the correlator).
    const hooksOn = hooksBySpan(events);
    for (const event of events) {
      if (event.kind === 'ToolCallEnded') {
        const known = this.facts.tools.get(event.toolUseId);
        const { toolUseId, sessionId, traceId, spanId, startMs, endMs, outcome } = event;
        const interruptedAtMs = known?.interruptedAtMs ?? (outcome === 'interrupted' ? endMs : undefined);
        const runsCommand = ranShellCommand(event);
        this.facts.tools.set(toolUseId, { toolUseId, sessionId, name: event.toolName, runsCommand, traceId, spanId, startMs, endMs, outcome, interruptedAtMs });
        this.report(detectOutputTruncation(event, hooksOn.get(spanId) ?? []));
        this.requestScan(SCAN_AFTER.PostToolUse);
      } else if (event.kind === 'ShellCommandEnded') {
        const { sessionId, pid, startMs, endMs, toolUseId } = event;
        this.facts.shells.push({ sessionId, pid, startMs, endMs, toolUseId });
        if (event.parentPid !== undefined) this.facts.addAgent(this.facts.session(sessionId), event.parentPid, startMs);
      } else if (event.kind === 'TurnEnded') {
        // The turn's agent, for the session's detections: kept only where facts of the session are kept at all (a
        // history of completed turns leaves none), so before the re-run check and after it (which may keep them).
        const noteAgent = () => {
          const session = this.facts.sessions.get(event.sessionId);
          if (session) session.agent ??= event.agent;
        };
        if (event.endsUntold) this.facts.session(event.sessionId).endsUntold = true;
        noteAgent();
        this.report(detectTurnRerun(event, this.facts));
        noteAgent();
      }
    }
  }

  /** Live sessions with no agent process known: the process scan looks for a command line naming them. */
  sessionsWithoutAgent(): Set<string> {
    const unknown = new Set<string>();
    for (const session of this.facts.sessions.values()) {
      if (session.hooked && !session.abandoned && session.endedAtMs === undefined && session.agents.size === 0) unknown.add(session.id);
    }
    return unknown;
  }

  /** A new look at the process table: run every process detector. */
  onScan(scan: ProcessScan): void {
    for (const process of scan.processes.values()) {
      if (process.agentPid === undefined || scan.agents.has(process.pid)) continue;
      const session = this.facts.session(process.sessionId);
      session.agent ??= process.agent;
      this.facts.addAgent(session, process.agentPid, process.startMs);
    }
    for (const [sessionId, pids] of scan.namedBy) for (const pid of pids) this.facts.addAgent(this.facts.session(sessionId), pid, scan.timeMs);
    // Remember each live agent's start and terminal: once it is gone, /proc no longer says.
    for (const session of this.facts.sessions.values()) {
      for (const [pid, agent] of session.agents) {
        if (!agentAlive(scan, pid, agent)) continue;
        agent.startMs = scan.starts.get(pid);
        // A hang-up takes the terminal from a process that outlives it (tty 0): keep the one it had.
        if (scan.ttys.get(pid)) {
          agent.ttyNr = scan.ttys.get(pid)!;
          agent.sid = scan.sids.get(pid);
        }
      }
    }
    this.report(detectOrphanProcesses(scan, this.facts));
    this.report(detectApprovalScope(scan, this.facts));
    this.report(detectSignalPropagation(scan, this.facts));
    this.report(detectResumedWithProcesses(scan, this.facts));
    this.report(detectAbandonedSessions(scan, this.facts, scan.timeMs, this.options.idleMs, this.options.devRoot));
    const pending = [...this.facts.sessions.values()].some((session) => session.agentsGoneAtMs !== undefined && !session.abandoned && session.endedAtMs === undefined);
    if (pending) this.requestScan(ABANDON_GRACE_MS); // confirm, or clear, the vanished agent
  }

  drain(): Joined {
    const events = this.events;
    this.events = [];
    return { events, acks: [] };
  }

  /** End of input (backfill, no process table): hooked sessions silent for the idle time with no SessionEnd. */
  finish(nowMs = Date.now()): void {
    this.report(detectAbandonedSessions(undefined, this.facts, nowMs, this.options.idleMs));
  }

  private report(detections: Detection[]): void {
    for (const detection of detections) {
      const process = detection.process;
      const id = recordIdOf(
        'failure-mode',
        detection.mode,
        detection.sessionId,
        detection.toolUseId ?? '',
        String(process?.pid ?? ''),
        String(process?.startTicks ?? ''),
        detection.key ?? '',
      );
      if (this.reported.has(id)) continue;
      this.reported.add(id);
      if (detection.mode === 'abandoned_session') this.facts.session(detection.sessionId).abandoned = true;
      this.emit(id, detection);
    }
  }

  private emit(id: string, detection: Detection): void {
    const call = detection.toolUseId ? this.facts.tools.get(detection.toolUseId) : undefined;
    const { mode, sessionId, timeMs, toolUseId, process, agentPid, port } = detection;
    const cause = detection.cause || undefined;
    const processTold = process && { pid: process.pid, commandLine: process.commandLine, ppid: process.ppid };
    // The agent as the process or the session's facts tell it: not whichever source happens to hold the session now.
    const agent = process?.agent ?? this.facts.sessions.get(sessionId)?.agent;
    this.events.push({ kind: 'FailureDetected', id, mode, sessionId, agent, timeMs, cause, toolUseId, process: processTold, agentPid, port, traceId: call?.traceId ?? '', spanId: call?.spanId ?? '' });
    // DESIGN: a session that went idle with no SessionEnd ends as `abandoned`.
    if (mode === 'abandoned_session') this.events.push({ kind: 'SessionEnded', sessionId, agent, reason: 'abandoned', timeMs, detectionId: id, cause: detection.cause });
  }
}
