// The agent of a session across resumes, on made-up process tables at made-up times (a fake clock): a resumed
// session is judged by its current Claude Code process, never by the one that ran it before and exited.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ShellCommandEnded } from '../../events.js';
import type { LogRecord } from '../../model.js';
import type { ProcessScan } from '../../records/process-scan.js';
import type { HookEvent } from '../../records/hook-spool.js';
import { ATTRS, EVENTS } from '../../semconv.js';
import { ABANDON_GRACE_MS } from './abandoned-session.js';
import { Facts } from './facts.js';
import { FailureModeDetector } from './index.js';
import { encode } from '../encode/index.js';

const SESSION = 'dddddddd-0000-4000-8000-000000000001';
const T0 = Date.parse('2026-10-01T12:00:00Z');
const FIRST_CLI = 4100;
const RESUMED_CLI = 5200;
const PTS_3 = (136 << 8) | 3;

const SHELL = 77;
const OTHER_WINDOW = 99;

/**
 * A process table holding `agents` (pid → start time), each on pseudo-terminal 3 in the session of the shell that
 * started them; maybe that shell (`shell`), or another window that got pseudo-terminal 3 (`other-window`).
 */
function scanAt(timeMs: number, agents: Record<number, number>, onTerminal: 'shell' | 'other-window' | 'nobody' = 'nobody'): ProcessScan {
  const pids = Object.keys(agents).map(Number);
  const others = onTerminal === 'shell' ? [SHELL] : onTerminal === 'other-window' ? [OTHER_WINDOW] : [];
  return {
    timeMs,
    processes: new Map(),
    parents: new Map(pids.map((pid) => [pid, 1])),
    ttys: new Map([...pids, ...others].map((pid) => [pid, PTS_3])),
    sids: new Map([...pids.map((pid) => [pid, SHELL] as const), ...others.map((pid) => [pid, pid] as const)]),
    starts: new Map(pids.map((pid) => [pid, agents[pid]])),
    agents: new Map(),
    namedBy: new Map(),
    unreadable: 0,
  };
}

function hook(name: string, timeMs: number, extra: { agentPid?: number; toolUseId?: string; payload?: object } = {}) {
  const file = `${String(BigInt(timeMs) * 1_000_000n).padStart(20, '0')}-1-0.json`;
  const event: HookEvent = { file, firedAtMs: timeMs, firedAtNs: file.slice(0, 20), hookPid: 1, agentPid: extra.agentPid, payload: {}, ack: () => {} };
  return { event, name, sessionId: SESSION, timeMs, toolUseId: extra.toolUseId, toolName: 'Bash', attributes: { ...extra.payload }, body: '' };
}

/** A Bash command the agent `agentPid` ran at `timeMs`. */
function shellCommand(agentPid: number, timeMs: number): ShellCommandEnded {
  return {
    kind: 'ShellCommandEnded', traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), parentSpanId: '', sessionId: SESSION, pid: agentPid + 1, parentPid: agentPid, startMs: timeMs, endMs: timeMs + 10,
    spanEndMs: timeMs + 10, commandLine: 'ls', commandLength: 2, truncated: false, ended: true, exitStatus: 0, process: {},
  };
}

/** Per detector, the abandoned_session records it emitted so far. */
const emitted = new WeakMap<FailureModeDetector, LogRecord[]>();

/** The abandoned_session detections a detector reported so far, read back from the records it emitted. */
function abandonments(detector: FailureModeDetector) {
  const logs = emitted.get(detector) ?? [];
  emitted.set(detector, logs);
  const fresh = encode(detector.drain().events).logs.filter((log) => log.eventName === EVENTS.failureModeDetected && log.attributes.mode === 'abandoned_session');
  logs.push(...fresh);
  return logs.map((log) => ({
    sessionId: log.attributes[ATTRS.sessionId],
    cause: log.attributes.cause,
    timeMs: log.timeMs,
    agentPid: log.attributes['process.pid'],
    toolUseId: log.attributes[ATTRS.toolUseId],
  }));
}

/** Scans at `atMs` and past the grace after it, with `agents` (none: every agent gone). */
function scansFrom(detector: FailureModeDetector, atMs: number, agents: Record<number, number> = {}, onTerminal: Parameters<typeof scanAt>[2] = 'nobody'): void {
  detector.onScan(scanAt(atMs, agents, onTerminal));
  detector.onScan(scanAt(atMs + ABANDON_GRACE_MS, agents, onTerminal));
}

/** A first run: one command by the first CLI, seen alive, then a normal exit (SessionEnd) and the CLI gone. */
function endedFirstRun(): FailureModeDetector {
  const detector = new FailureModeDetector({ idleMs: 30 * 60_000, devRoot: '/nonexistent' });
  detector.onHook(hook('SessionStart', T0, { payload: { source: 'startup' } }));
  detector.observe([shellCommand(FIRST_CLI, T0 + 1_000)]);
  detector.onScan(scanAt(T0 + 2_000, { [FIRST_CLI]: T0 - 500 }));
  detector.onHook(hook('SessionEnd', T0 + 3_000, { payload: { reason: 'other' } }));
  scansFrom(detector, T0 + 4_000);
  return detector;
}

describe('abandoned_session across a resume', () => {
  it('a clean resume whose first Bash command comes 40 s later: no abandoned_session, with no hook agent pid (old hook)', () => {
    const detector = endedFirstRun();
    const resumedAt = T0 + 60_000;
    detector.onHook(hook('SessionStart', resumedAt, { payload: { source: 'resume' } }));
    // The resumed CLI thinks; scans every 15 s see it alive but nothing names it yet.
    for (let at = resumedAt + 15_000; at <= resumedAt + 45_000; at += 15_000) detector.onScan(scanAt(at, { [RESUMED_CLI]: resumedAt - 300 }));
    detector.observe([shellCommand(RESUMED_CLI, resumedAt + 40_000)]);
    detector.onScan(scanAt(resumedAt + 46_000, { [RESUMED_CLI]: resumedAt - 300 }));
    expect(abandonments(detector)).toEqual([]);
  });

  it('the resumed CLI named by the SessionStart hook: its death with no SessionEnd is abandoned_session (tty_gone), the old CLI never counts', () => {
    const detector = endedFirstRun();
    const resumedAt = T0 + 60_000;
    detector.onHook(hook('SessionStart', resumedAt, { agentPid: RESUMED_CLI, payload: { source: 'resume' } }));
    detector.onScan(scanAt(resumedAt + 1_000, { [RESUMED_CLI]: resumedAt - 300 }));
    detector.onScan(scanAt(resumedAt + 40_000, { [RESUMED_CLI]: resumedAt - 300 }));
    expect(abandonments(detector)).toEqual([]);
    detector.onScan(scanAt(resumedAt + 41_000, {}));
    expect(abandonments(detector)).toEqual([]); // gone for less than the grace: a SessionEnd may be on its way
    detector.onScan(scanAt(resumedAt + 41_000 + ABANDON_GRACE_MS, {}));
    expect(abandonments(detector)).toMatchObject([{ sessionId: SESSION, cause: 'tty_gone', timeMs: resumedAt + 41_000, agentPid: RESUMED_CLI }]);
  });

  it('a pid reused by another process after the agent died counts as the agent gone', () => {
    const detector = endedFirstRun();
    const resumedAt = T0 + 60_000;
    detector.onHook(hook('SessionStart', resumedAt, { agentPid: RESUMED_CLI, payload: { source: 'resume' } }));
    detector.onScan(scanAt(resumedAt + 1_000, { [RESUMED_CLI]: resumedAt - 300 }));
    scansFrom(detector, resumedAt + 90_000, { [RESUMED_CLI]: resumedAt + 80_000 });
    expect(abandonments(detector)).toMatchObject([{ cause: 'tty_gone' }]);
  });

  it('the resumed CLI found in /proc by a command line naming the session', () => {
    const detector = endedFirstRun();
    const resumedAt = T0 + 60_000;
    detector.onHook(hook('SessionStart', resumedAt, { payload: { source: 'resume' } }));
    const named = scanAt(resumedAt + 1_000, { [RESUMED_CLI]: resumedAt - 300 });
    named.namedBy.set(SESSION, [RESUMED_CLI]);
    detector.onScan(named);
    expect(abandonments(detector)).toEqual([]);
    scansFrom(detector, resumedAt + 5_000);
    expect(abandonments(detector)).toMatchObject([{ cause: 'tty_gone' }]);
  });
});

describe('abandoned_session when the agent vanishes', () => {
  // A /dev where pseudo-terminal 3 exists.
  const devRoot = mkdtempSync(join(tmpdir(), 'ccotel-dev-'));
  mkdirSync(join(devRoot, 'pts'));
  writeFileSync(join(devRoot, 'pts', '3'), '');
  const started = () => {
    const detector = new FailureModeDetector({ idleMs: 30 * 60_000, devRoot });
    detector.onHook(hook('SessionStart', T0, { agentPid: FIRST_CLI, payload: { source: 'startup' } }));
    detector.onScan(scanAt(T0 + 1_000, { [FIRST_CLI]: T0 - 500 }));
    return detector;
  };

  it('is not raised when the SessionEnd of a normal exit is read just after the process table shows the CLI gone', () => {
    const detector = started();
    detector.onScan(scanAt(T0 + 2_000, {}));
    detector.onHook(hook('SessionEnd', T0 + 1_900, { payload: { reason: 'other' } }));
    detector.onScan(scanAt(T0 + 2_000 + ABANDON_GRACE_MS, {}));
    expect(abandonments(detector)).toEqual([]);
  });

  it('keeps the terminal of an agent that lost it to a hang-up before it died: tty_gone', () => {
    const detector = started();
    const hungUp = scanAt(T0 + 2_000, { [FIRST_CLI]: T0 - 500 });
    hungUp.ttys.set(FIRST_CLI, 0);
    detector.onScan(hungUp);
    scansFrom(detector, T0 + 3_000);
    expect(abandonments(detector)).toMatchObject([{ cause: 'tty_gone' }]);
  });

  it('names the call it was running; its terminal with nobody of its session on it is gone (tty_gone), with its shell still there it was killed', () => {
    const closed = started();
    closed.onHook(hook('PreToolUse', T0 + 1_500, { toolUseId: 'toolu_running' }));
    scansFrom(closed, T0 + 2_000, {}, 'nobody');
    expect(abandonments(closed)).toMatchObject([{ cause: 'tty_gone', agentPid: FIRST_CLI, toolUseId: 'toolu_running' }]);
    const killed = started();
    scansFrom(killed, T0 + 2_000, {}, 'shell');
    expect(abandonments(killed)).toMatchObject([{ cause: 'killed', agentPid: FIRST_CLI }]);
    const reused = started();
    scansFrom(reused, T0 + 2_000, {}, 'other-window');
    expect(abandonments(reused)).toMatchObject([{ cause: 'tty_gone' }]);
  });
});

describe('the call a process belongs to', () => {
  it('is the one running when it started, not a resumed run\'s command that began a second later', () => {
    const facts = new Facts();
    const run = (toolUseId: string, startMs: number, endMs: number) => {
      facts.tools.set(toolUseId, { toolUseId, sessionId: SESSION, name: 'Bash', traceId: 't', spanId: toolUseId, startMs, endMs });
      facts.shells.push({ sessionId: SESSION, pid: startMs, startMs, endMs, toolUseId });
    };
    run('toolu_before_resume', T0, T0 + 50);
    run('toolu_after_resume', T0 + 1_000, T0 + 1_100);
    const left = { pid: 9, comm: 'sleep', ppid: 1, pgid: 9, sid: 9, ttyNr: 0, startMs: T0 + 30, startTicks: 0, sessionId: SESSION, agent: 'claude-code' as const, hook: false, commandLine: 'sleep 300', listeningPorts: [] };
    expect(facts.callOf(left).call?.toolUseId).toBe('toolu_before_resume');
    expect(facts.callOf({ ...left, startMs: T0 + 1_050 }).call?.toolUseId).toBe('toolu_after_resume');
  });
});

describe('the agent of a detection', () => {
  it('is the one its session’s process told, whichever source holds the session (here none)', () => {
    const detector = new FailureModeDetector({ idleMs: 30 * 60_000, devRoot: '/nonexistent' });
    // Hooks of an install that named no agent; then a scan sees a Codex command of the session under `codex`.
    detector.onHook(hook('SessionStart', T0, { payload: { source: 'startup' } }));
    const running = scanAt(T0 + 1_000, { [FIRST_CLI]: T0 - 500 });
    const command = { pid: FIRST_CLI + 1, comm: 'bash', ppid: FIRST_CLI, pgid: FIRST_CLI + 1, sid: SHELL, ttyNr: PTS_3, startMs: T0 + 900, startTicks: 0, sessionId: SESSION, agent: 'codex' as const, agentPid: FIRST_CLI, hook: false, commandLine: 'bash -lc ls', listeningPorts: [] };
    running.processes.set(command.pid, command);
    detector.onScan(running);
    scansFrom(detector, T0 + 2_000);
    const points = encode(detector.drain().events).metrics;
    expect(points.map((point) => [point.name, point.attributes['gen_ai.agent.name']])).toEqual([
      ['ccotel.failure_modes', 'codex'],
      ['ccotel.session.ends', 'codex'],
    ]);
  });
});
