// Read the process table (/proc): every process whose environment names an agent's session (agent-processes.ts:
// Claude Code's CLAUDE_CODE_SESSION_ID, Codex's CODEX_THREAD_ID — tool commands and everything they started,
// including what was re-parented or detached with setsid/nohup), its parent, process group, session, controlling
// terminal, start time and listening TCP sockets (the inodes of /proc/net/tcp{,6} in LISTEN state matched against
// the process's fds). Processes whose environment cannot be read (another user's, without privilege) are skipped
// and counted. The agent processes running those commands (named by CLAUDE_PID, or Codex's `codex` ancestor) are
// followed too, so a vanished agent can be told apart from a live one.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { ProcessInfo, ProcessScan } from '../records/process-scan.js';
import { AGENT_PROCESSES, type AgentProcesses } from './agent-processes.js';
import { DescriptorRetry, isOutOfDescriptors, OUT_OF_DESCRIPTORS_RETRY_MS } from './out-of-descriptors.js';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on every Linux architecture in use). */
const USER_HZ = 100;

export interface ScanOptions {
  procRoot?: string;
  nowMs?: number;
  /** Session ids to look for in every process's command line (sessions whose agent process is not known). */
  sessionsToName?: Set<string>;
}

/**
 * Throws when no descriptor is left (EMFILE, ENFILE): a scan that could not read the processes would tell the
 * detectors they are all gone.
 */
export function scanProcesses({ procRoot = '/proc', nowMs = Date.now(), sessionsToName = new Set() }: ScanOptions = {}): ProcessScan {
  const bootMs = bootTimeMs(procRoot);
  const scan: ProcessScan = { timeMs: nowMs, processes: new Map(), parents: new Map(), ttys: new Map(), sids: new Map(), starts: new Map(), namedBy: new Map(), agents: new Map(), unreadable: 0 };
  const stats = new Map<number, ProcessStat>();
  for (const name of safeReaddir(procRoot)) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const stat = readStat(procRoot, pid);
    if (!stat) continue; // gone meanwhile
    stats.set(pid, stat);
    scan.parents.set(pid, stat.ppid);
    scan.ttys.set(pid, stat.ttyNr);
    scan.sids.set(pid, stat.sid);
    scan.starts.set(pid, bootMs + (stat.startTicks * 1000) / USER_HZ);
    if (sessionsToName.size > 0) noteSessionsNamed(scan, pid, readCommandLine(procRoot, pid), sessionsToName);
    let environ: string;
    try {
      environ = readFileSync(join(procRoot, name, 'environ'), 'latin1');
    } catch (error) {
      if (isOutOfDescriptors(error)) throw error;
      if ((error as NodeJS.ErrnoException).code === 'EACCES' || (error as NodeJS.ErrnoException).code === 'EPERM') scan.unreadable++;
      continue;
    }
    const env = (key: string) => envValue(environ, key);
    const told = agentSessionOf(env);
    if (!told) continue;
    const { agent, sessionId } = told;
    const agentPid = agent.agentPidVariable === undefined ? undefined : Number(env(agent.agentPidVariable));
    const toolUseId = agent.callVariable === undefined ? undefined : env(agent.callVariable);
    scan.processes.set(pid, {
      pid,
      ...stat,
      startMs: scan.starts.get(pid)!,
      sessionId,
      agent: agent.agent,
      agentPid: agentPid !== undefined && Number.isInteger(agentPid) && agentPid > 0 ? agentPid : undefined,
      ...(toolUseId ? { toolUseId } : {}),
      ...(agent.keepsCommandsPastCall ? { keepsCommandsPastCall: true } : {}),
      hook: agent.isHook?.(env) ?? false,
      commandLine: readCommandLine(procRoot, pid),
      listeningPorts: [],
    });
  }
  const listening = listeningSockets(procRoot);
  for (const info of scan.processes.values()) {
    const agentCommand = AGENT_PROCESSES.find((known) => known.agent === info.agent)?.agentCommand;
    if (info.agentPid === undefined && agentCommand !== undefined) info.agentPid = agentAncestor(scan, stats, info, agentCommand);
    if (listening.size > 0) info.listeningPorts = socketPorts(procRoot, info.pid, listening);
    const agentPid = info.agentPid;
    const agentStat = agentPid === undefined ? undefined : stats.get(agentPid);
    if (agentPid !== undefined && agentStat && !scan.agents.has(agentPid)) {
      scan.agents.set(agentPid, {
        pid: agentPid,
        ...agentStat,
        startMs: scan.starts.get(agentPid)!,
        sessionId: '',
        agent: info.agent,
        hook: false,
        commandLine: readCommandLine(procRoot, agentPid),
        listeningPorts: [],
      });
    }
  }
  return scan;
}

/** The agent and session an environment names, if any. */
function agentSessionOf(env: (key: string) => string | undefined): { agent: AgentProcesses; sessionId: string } | undefined {
  for (const agent of AGENT_PROCESSES) {
    const sessionId = env(agent.sessionVariable);
    if (sessionId) return { agent, sessionId };
  }
  return undefined;
}

/**
 * The nearest ancestor running `command` that is not itself a process of the session (an agent started as a
 * command of another session is that command), or undefined: re-parented away from its agent, or none.
 */
function agentAncestor(scan: ProcessScan, stats: Map<number, ProcessStat>, process: ProcessInfo, command: string): number | undefined {
  let current = stats.get(process.pid)?.ppid;
  for (let hops = 0; current !== undefined && current > 1 && hops < 1000; hops++) {
    if (scan.processes.get(current)?.sessionId !== process.sessionId) return stats.get(current)?.comm === command ? current : undefined;
    current = stats.get(current)?.ppid;
  }
  return undefined;
}

/** A command line naming a session id is the Claude Code process running it (`--resume <id>`, `--session-id <id>`). */
function noteSessionsNamed(scan: ProcessScan, pid: number, commandLine: string, sessionIds: Set<string>): void {
  for (const word of commandLine.split(' ')) {
    if (!sessionIds.has(word)) continue;
    const pids = scan.namedBy.get(word) ?? [];
    pids.push(pid);
    scan.namedBy.set(word, pids);
  }
}


export interface ProcessWatcherOptions {
  intervalMs: number;
  onScan: (scan: ProcessScan) => Promise<void> | void;
  procRoot?: string;
  /** Sessions whose agent process is not known, asked before each scan. */
  sessionsToName?: () => Set<string>;
  log?: (message: string) => void;
}

/**
 * Scan every `intervalMs`, and sooner when asked (`scanIn`: an event after which a detection may be due);
 * scans run one at a time, each handed over before the next starts.
 */
export class ProcessWatcher {
  private timer?: NodeJS.Timeout;
  private nextAtMs = Number.POSITIVE_INFINITY;
  private running: Promise<void> = Promise.resolve();
  /** While a scan runs: how soon the next one is wanted. */
  private afterScanMs?: number;
  private stopping = false;
  private readonly descriptors: DescriptorRetry;

  constructor(private readonly options: ProcessWatcherOptions) {
    this.descriptors = new DescriptorRetry('process scan', options.log);
  }

  /** While scans find no descriptor left: since when (for the status). */
  get retrying(): string | undefined {
    return this.descriptors.state;
  }

  start(): void {
    this.scanIn(0);
  }

  /** Have a scan happen within `delayMs` (a sooner one already planned stands). */
  scanIn(delayMs: number): void {
    if (this.afterScanMs !== undefined) {
      this.afterScanMs = Math.min(this.afterScanMs, delayMs);
      return;
    }
    const atMs = Date.now() + delayMs;
    if (this.stopping || atMs >= this.nextAtMs) return;
    clearTimeout(this.timer);
    this.nextAtMs = atMs;
    this.timer = setTimeout(() => (this.running = this.scan()), delayMs);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private async scan(): Promise<void> {
    this.nextAtMs = Number.POSITIVE_INFINITY;
    this.afterScanMs = this.options.intervalMs;
    let scan: ProcessScan | undefined;
    try {
      scan = scanProcesses({ procRoot: this.options.procRoot, sessionsToName: this.options.sessionsToName?.() });
      this.descriptors.recovered();
    } catch (error) {
      if (!isOutOfDescriptors(error)) this.options.log?.(`process watcher: ${(error as Error).message}`);
      else {
        this.descriptors.failed(error);
        this.afterScanMs = Math.min(this.afterScanMs, OUT_OF_DESCRIPTORS_RETRY_MS);
      }
    }
    try {
      if (scan) await this.options.onScan(scan);
    } catch (error) {
      this.options.log?.(`process watcher: ${(error as Error).message}`);
    }
    const delayMs = this.afterScanMs;
    this.afterScanMs = undefined;
    this.scanIn(delayMs);
  }
}

function safeReaddir(path: string): string[] {
  try {
    return readdirSync(path);
  } catch (error) {
    if (isOutOfDescriptors(error)) throw error;
    return [];
  }
}

/** Boot time to 10 ms from the uptime (`btime` of /proc/stat is whole seconds: a start could be off by 1 s). */
function bootTimeMs(procRoot: string): number {
  try {
    const uptimeSeconds = Number(readFileSync(join(procRoot, 'uptime'), 'utf8').split(' ')[0]);
    if (uptimeSeconds > 0) return Date.now() - uptimeSeconds * 1000;
  } catch {
    // no uptime: btime
  }
  const match = /^btime (\d+)$/m.exec(readFileSync(join(procRoot, 'stat'), 'utf8'));
  return match ? Number(match[1]) * 1000 : 0;
}

type ProcessStat = Pick<ProcessInfo, 'comm' | 'ppid' | 'pgid' | 'sid' | 'ttyNr' | 'startTicks'>;

function readStat(procRoot: string, pid: number): ProcessStat | undefined {
  let text: string;
  try {
    text = readFileSync(join(procRoot, String(pid), 'stat'), 'latin1');
  } catch (error) {
    if (isOutOfDescriptors(error)) throw error;
    return undefined;
  }
  // `pid (comm) state ppid pgrp session tty_nr …`: comm may hold spaces and parentheses; fields follow the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const comm = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
  return { comm, ppid: Number(fields[1]), pgid: Number(fields[2]), sid: Number(fields[3]), ttyNr: Number(fields[4]), startTicks: Number(fields[19]) };
}

function readCommandLine(procRoot: string, pid: number): string {
  try {
    return readFileSync(join(procRoot, String(pid), 'cmdline'), 'utf8').replace(/\0+$/, '').replaceAll('\0', ' ');
  } catch (error) {
    if (isOutOfDescriptors(error)) throw error;
    return '';
  }
}

function envValue(environ: string, key: string): string | undefined {
  const prefix = `${key}=`;
  for (const entry of environ.split('\0')) if (entry.startsWith(prefix)) return entry.slice(prefix.length);
  return undefined;
}

/** Socket inode → port of every TCP socket in LISTEN state (IPv4 and IPv6). */
function listeningSockets(procRoot: string): Map<string, number> {
  const sockets = new Map<string, number>();
  for (const file of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(join(procRoot, 'net', file), 'utf8');
    } catch (error) {
      if (isOutOfDescriptors(error)) throw error;
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const columns = line.trim().split(/\s+/);
      if (columns.length < 10 || columns[3] !== '0A') continue; // 0A = TCP_LISTEN
      const port = parseInt(columns[1].split(':')[1], 16);
      sockets.set(columns[9], port);
    }
  }
  return sockets;
}

function socketPorts(procRoot: string, pid: number, listening: Map<string, number>): number[] {
  const ports = new Set<number>();
  const fdDir = join(procRoot, String(pid), 'fd');
  for (const fd of safeReaddir(fdDir)) {
    let target: string;
    try {
      target = readlinkSync(join(fdDir, fd));
    } catch {
      continue;
    }
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    const port = inode === undefined ? undefined : listening.get(inode);
    if (port !== undefined) ports.add(port);
  }
  return [...ports].sort((a, b) => a - b);
}
