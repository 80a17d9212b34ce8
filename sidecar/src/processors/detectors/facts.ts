// What the failure-mode detectors know, gathered from the telemetry stream (tool spans, shell spans, turn roots)
// and the hook events, and how a process found in /proc is tied to the tool call that started it.
import { descendsFrom, type ProcessInfo, type ProcessScan } from '../../records/process-scan.js';
import type { AgentName } from '../../semconv.js';

export type FailureMode = 'orphan_process' | 'approval_scope' | 'signal_propagation' | 'output_truncation' | 'replay_divergence' | 'abandoned_session';

export interface Detection {
  mode: FailureMode;
  sessionId: string;
  timeMs: number;
  toolUseId?: string;
  process?: ProcessInfo;
  /** abandoned_session: the Claude Code process that vanished. */
  agentPid?: number;
  port?: number;
  /** Why, in a word (abandoned_session: tty_gone | killed | no_session_end; replay_divergence: processes_running | turn_rerun). */
  cause?: string;
  /** What makes the detection unique beyond mode, session, call and process (e.g. the re-run prompt). */
  key?: string;
}

export interface ToolCall {
  toolUseId: string;
  sessionId: string;
  name: string;
  /** It runs a shell command (Claude Code's Bash, Codex's exec_command): what a process without a shell log is tied to. */
  runsCommand?: boolean;
  traceId: string;
  spanId: string;
  startMs: number;
  /** Set once the call's span went out (its result, or given up). */
  endMs?: number;
  outcome?: string;
  /** When the call was interrupted or cancelled (PostToolUseFailure is_interrupt, or an interrupted result). */
  interruptedAtMs?: number;
}

export interface ShellRun {
  sessionId: string;
  pid: number;
  startMs: number;
  /** Undefined while running, or when it was killed before its end record. */
  endMs?: number;
  toolUseId?: string;
}

/** A Claude Code process running a session, as last seen alive. */
export interface AgentFacts {
  /** Controlling terminal while it was alive (0: none, or not seen alive yet), and the unix session on it. */
  ttyNr: number;
  sid?: number;
  /** When the evidence that named it was made: a process of that pid started later is another one. */
  seenAtMs: number;
  /** Its start time once seen alive: the same pid with another start time is another process. */
  startMs?: number;
}

export interface SessionFacts {
  id: string;
  /** Its agent, as its hooks, turns or processes told it (none told: the agent whose source holds it). */
  agent?: AgentName;
  /** Seen a hook for it: hooks are installed, so a missing SessionEnd means something. */
  hooked: boolean;
  lastEventMs: number;
  /** The name of its latest hook. */
  lastHook?: string;
  /** Its agent's release fires no SessionEnd (TurnEnded tells): it ends by exiting after a turn's Stop. */
  endsUntold: boolean;
  /** The last SessionStart (startup, resume, clear, compact): agents are those since then. */
  startedAtMs?: number;
  endedAtMs?: number;
  resumedAtMs: number[];
  /**
   * The Claude Code processes running it since its last start (a resume is a new process: the one before it,
   * exited, is no evidence about the resumed session).
   */
  agents: Map<number, AgentFacts>;
  /** Since when every agent process is seen gone (undefined while one is alive, or none is known). */
  agentsGoneAtMs?: number;
  abandoned: boolean;
  /** Tool calls begun (PreToolUse) and not finished (PostToolUse / PostToolUseFailure), in order. */
  openCalls: Set<string>;
  /** Prompts (text) of its interrupted turns, and whether a resume happened since. */
  interruptedPrompts: Set<string>;
}

/** Process start times (boot time + ticks) against the shell log's clock: allow this much either side. */
export const START_SKEW_MS = 2_000;
/** A call is over this long before a process that outlives it counts as having outlived it. */
export const OUTLIVE_GRACE_MS = 2_000;
/**
 * Tool calls and shell runs remembered, the most recent: a process is tied to the call that started it while it
 * runs, i.e. to a recent one. Older ones go, so what a backfill of a long history leaves here stays bounded.
 */
export const REMEMBERED_CALLS = 20_000;

/** The most recent calls: a call set again becomes the most recent; past REMEMBERED_CALLS the oldest goes. */
class RecentCalls extends Map<string, ToolCall> {
  override set(toolUseId: string, call: ToolCall): this {
    this.delete(toolUseId);
    super.set(toolUseId, call);
    if (this.size > REMEMBERED_CALLS) this.delete(this.keys().next().value!);
    return this;
  }
}

/** The most recent shell runs: once twice REMEMBERED_CALLS are held, the older half goes (one cut now and then). */
class RecentShellRuns extends Array<ShellRun> {
  override push(...runs: ShellRun[]): number {
    super.push(...runs);
    if (this.length >= 2 * REMEMBERED_CALLS) this.splice(0, REMEMBERED_CALLS);
    return this.length;
  }
}

export class Facts {
  readonly tools: Map<string, ToolCall> = new RecentCalls();
  readonly shells: ShellRun[] = new RecentShellRuns();
  readonly sessions = new Map<string, SessionFacts>();

  session(id: string): SessionFacts {
    let facts = this.sessions.get(id);
    if (!facts) {
      facts = { id, hooked: false, lastEventMs: 0, endsUntold: false, resumedAtMs: [], agents: new Map(), abandoned: false, openCalls: new Set(), interruptedPrompts: new Set() };
      this.sessions.set(id, facts);
    }
    return facts;
  }

  /** The call of that id, known from its span or hooks; a new one from what a hook says of it. */
  callById(toolUseId: string, seen: { sessionId: string; name: string; runsCommand: boolean; startMs: number }): ToolCall {
    let call = this.tools.get(toolUseId);
    if (!call) this.tools.set(toolUseId, (call = { toolUseId, traceId: '', spanId: '', ...seen }));
    return call;
  }

  /** `pid` runs `session` now, as seen by evidence from `atMs` (earlier evidence belongs to a previous run). */
  addAgent(session: SessionFacts, pid: number, atMs: number): void {
    if (!(pid > 1) || session.agents.has(pid)) return;
    if (session.startedAtMs !== undefined && atMs < session.startedAtMs - START_SKEW_MS) return;
    session.agents.set(pid, { ttyNr: 0, seenAtMs: atMs });
  }

  /**
   * The tool call a process belongs to: the call whose shell leads its process group or session (a plain
   * child), else the call of that session whose shell was running when the process started (setsid/nohup).
   */
  callOf(process: ProcessInfo): { call?: ToolCall; shell?: ShellRun } {
    const mine = this.shells.filter((shell) => shell.sessionId === process.sessionId);
    const shell = mine.find((run) => run.pid === process.pid || run.pid === process.pgid || run.pid === process.sid) ?? runningAt(mine, process.startMs);
    // The agent named the call in the command's environment (Codex's CODEX_TOOL_CALL_ID): that one, once known.
    const toolUseId = process.toolUseId ?? shell?.toolUseId;
    if (toolUseId) return { call: this.tools.get(toolUseId), shell };
    if (shell) return { shell };
    // No shell log: the command-running call of the session open when the process started.
    return { call: runningAt([...this.tools.values()].filter((tool) => tool.sessionId === process.sessionId && tool.runsCommand), process.startMs) };
  }

  /** When the call (or, without one, the shell) of a process ended; undefined while it runs. */
  endOf(found: { call?: ToolCall; shell?: ShellRun }): number | undefined {
    return found.call?.endMs ?? found.shell?.endMs;
  }
}

/**
 * The run (shell or call) that was going on at `timeMs`: the one whose time holds it, else the nearest within
 * START_SKEW_MS; of equals, the latest started. (A resumed session's first command may start a second after
 * the previous run's last one: the nearer wins.)
 */
function runningAt<T extends { startMs: number; endMs?: number }>(runs: T[], timeMs: number): T | undefined {
  const distance = (run: T) => Math.max(0, run.startMs - timeMs, timeMs - (run.endMs ?? Number.POSITIVE_INFINITY));
  return runs
    .filter((run) => distance(run) <= START_SKEW_MS)
    .sort((a, b) => distance(a) - distance(b) || b.startMs - a.startMs)[0];
}

/** Whether the agent process is alive in the scan (the same process, not a later one that reused its pid). */
export function agentAlive(scan: ProcessScan, pid: number, agent: AgentFacts): boolean {
  const startMs = scan.starts.get(pid);
  if (startMs === undefined) return false;
  return agent.startMs !== undefined ? Math.abs(startMs - agent.startMs) <= START_SKEW_MS : startMs <= agent.seenAtMs + START_SKEW_MS;
}

/** Whether the process is still in the tree of the agent process that ran it. */
export function underItsAgent(scan: ProcessScan, process: ProcessInfo): boolean {
  const agent = process.agentPid;
  return agent !== undefined && scan.parents.has(agent) && descendsFrom(scan, process.pid, agent);
}

/** Processes of a scan that tool calls of a session started (not the agents themselves, nor their hooks). */
export function sessionProcesses(scan: ProcessScan): ProcessInfo[] {
  return [...scan.processes.values()].filter((process) => !scan.agents.has(process.pid) && !process.hook);
}
