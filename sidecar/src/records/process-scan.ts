// What the process watcher hands on: a scan of the processes of agent sessions (sources/process-watcher.ts).
import type { AgentName } from '../semconv.js';

export interface ProcessInfo {
  pid: number;
  /** Its program's name (`comm` of /proc/<pid>/stat). */
  comm: string;
  ppid: number;
  pgid: number;
  /** Unix session id (the session leader's pid). */
  sid: number;
  /** Controlling terminal (`tty_nr` of /proc/<pid>/stat), 0 when none. */
  ttyNr: number;
  /** Epoch ms (from boot time + start ticks). */
  startMs: number;
  /** Start in clock ticks since boot: exact, so with the pid it identifies the process across pid reuse. */
  startTicks: number;
  /** The session its environment names (CLAUDE_CODE_SESSION_ID, CODEX_THREAD_ID; '' for agent processes). */
  sessionId: string;
  /** The agent whose session it is. */
  agent: AgentName;
  /** The agent process that ran the command (CLAUDE_PID; Codex: its `codex` ancestor while it is under it). */
  agentPid?: number;
  /** The tool call that ran it, where the agent names it in the environment (Codex 0.171's CODEX_TOOL_CALL_ID). */
  toolUseId?: string;
  /** Its agent keeps a command running past its call by design (Codex's exec sessions): no failure while under it. */
  keepsCommandsPastCall?: true;
  /**
   * A hook command (or what it started), not a tool call's: Claude Code (2.1) gives hooks CLAUDE_PROJECT_DIR
   * and the Bash tool CLAUDE_CODE_EXECPATH instead.
   */
  hook: boolean;
  commandLine: string;
  listeningPorts: number[];
}

export interface ProcessScan {
  timeMs: number;
  /** Processes of agent sessions, by pid. */
  processes: Map<number, ProcessInfo>;
  /** Every live process's parent, for walking ancestor chains. */
  parents: Map<number, number>;
  /** Every live process's controlling terminal (`tty_nr`) and unix session. */
  ttys: Map<number, number>;
  sids: Map<number, number>;
  /** Every live process's start time (epoch ms): a pid alive with another start time is another process. */
  starts: Map<number, number>;
  /** For the sessions asked about: processes whose command line names the session id (`claude --resume <id>`, `codex exec resume <id>`). */
  namedBy: Map<string, number[]>;
  /** Agent processes running those (named by CLAUDE_PID, or Codex's ancestor) that are alive, with their own stat. */
  agents: Map<number, ProcessInfo>;
  /** Processes whose environment could not be read. */
  unreadable: number;
}

/** Whether `ancestor` is `pid` or one of its ancestors in the scan's parent map. */
export function descendsFrom(scan: ProcessScan, pid: number, ancestor: number): boolean {
  for (let current: number | undefined = pid, hops = 0; current !== undefined && current > 0 && hops < 1000; hops++) {
    if (current === ancestor) return true;
    current = scan.parents.get(current);
  }
  return false;
}
