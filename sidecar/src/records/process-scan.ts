// What the process watcher hands on: a scan of the processes of Claude Code sessions (sources/process-watcher.ts).

export interface ProcessInfo {
  pid: number;
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
  /** CLAUDE_CODE_SESSION_ID of its environment ('' for agent processes, which do not carry it). */
  sessionId: string;
  /** CLAUDE_PID of its environment: the Claude Code process that ran the command. */
  agentPid?: number;
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
  /** Processes of Claude Code sessions, by pid. */
  processes: Map<number, ProcessInfo>;
  /** Every live process's parent, for walking ancestor chains. */
  parents: Map<number, number>;
  /** Every live process's controlling terminal (`tty_nr`) and unix session. */
  ttys: Map<number, number>;
  sids: Map<number, number>;
  /** Every live process's start time (epoch ms): a pid alive with another start time is another process. */
  starts: Map<number, number>;
  /** For the sessions asked about: processes whose command line names the session id (`claude --resume <id>`). */
  namedBy: Map<string, number[]>;
  /** Agent processes named by CLAUDE_PID that are alive, with their own stat. */
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
