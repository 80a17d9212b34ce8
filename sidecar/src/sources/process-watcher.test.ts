import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProcessScan } from '../records/process-scan.js';
import { ProcessWatcher, scanProcesses } from './process-watcher.js';

const children: ChildProcess[] = [];
afterEach(() => children.splice(0).forEach((child) => child.kill('SIGKILL')));

describe('scanProcesses', () => {
  it('finds the process whose command line names a session asked about, and every start time', () => {
    const sessionId = 'eeeeeeee-0000-4000-8000-000000000001';
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', '--', '--resume', sessionId], { stdio: 'ignore' });
    children.push(child);
    const deadline = Date.now() + 10_000;
    let scan: ProcessScan;
    do scan = scanProcesses({ sessionsToName: new Set([sessionId, 'not-running']) });
    while (!scan.namedBy.has(sessionId) && Date.now() < deadline);
    expect(scan.namedBy.get(sessionId)).toEqual([child.pid]);
    expect(scan.namedBy.has('not-running')).toBe(false);
    expect(Math.abs(scan.starts.get(child.pid!)! - Date.now())).toBeLessThan(60_000);
    expect(scanProcesses().namedBy.size).toBe(0); // nothing asked, no command line read
  });
});

describe('scanProcesses on Codex processes', () => {
  /** A made-up /proc: pid → program, parent and environment. */
  function fakeProc(processes: Record<number, { comm: string; ppid: number; env: Record<string, string> }>): string {
    const root = mkdtempSync(join(tmpdir(), 'ccotel-proc-'));
    writeFileSync(join(root, 'uptime'), '1000.00 900.00\n');
    for (const [pid, { comm, ppid, env }] of Object.entries(processes)) {
      mkdirSync(join(root, pid));
      // pid (comm) state ppid pgrp session tty_nr … starttime (field 22)
      writeFileSync(join(root, pid, 'stat'), `${pid} (${comm}) S ${ppid} ${pid} ${pid} 0 ${Array(14).fill('0').join(' ')} 5000 0\n`);
      writeFileSync(join(root, pid, 'environ'), Object.entries(env).map(([key, value]) => `${key}=${value}\0`).join(''));
      writeFileSync(join(root, pid, 'cmdline'), `${comm}\0`);
    }
    return root;
  }

  it("tells the thread, the call, and the agent: the nearest `codex` ancestor not of the thread, none once re-parented", () => {
    const procRoot = fakeProc({
      100: { comm: 'codex', ppid: 1, env: { HOME: '/h' } },
      101: { comm: 'bash', ppid: 100, env: { CODEX_THREAD_ID: 'thread-a', CODEX_TOOL_CALL_ID: 'call_1' } },
      102: { comm: 'sleep', ppid: 101, env: { CODEX_THREAD_ID: 'thread-a', CODEX_TOOL_CALL_ID: 'call_1' } },
      103: { comm: 'node', ppid: 1, env: { CODEX_THREAD_ID: 'thread-a', CODEX_TOOL_CALL_ID: 'call_2' } },
      // A Codex run as a command of thread-a: its own commands' agent is that codex, not the outer one.
      104: { comm: 'codex', ppid: 101, env: { CODEX_THREAD_ID: 'thread-a' } },
      105: { comm: 'bash', ppid: 104, env: { CODEX_THREAD_ID: 'thread-b' } },
    });
    try {
      const scan = scanProcesses({ procRoot });
      const seen = (pid: number) => {
        const { sessionId, agent, agentPid, toolUseId } = scan.processes.get(pid)!;
        return { sessionId, agent, agentPid, toolUseId };
      };
      expect(seen(102)).toEqual({ sessionId: 'thread-a', agent: 'codex', agentPid: 100, toolUseId: 'call_1' });
      expect(seen(103)).toEqual({ sessionId: 'thread-a', agent: 'codex', agentPid: undefined, toolUseId: 'call_2' });
      expect(seen(105)).toMatchObject({ sessionId: 'thread-b', agentPid: 104 });
      expect([...scan.agents.keys()].sort()).toEqual([100, 104]);
      expect(scan.processes.has(100)).toBe(false);
    } finally {
      rmSync(procRoot, { recursive: true, force: true });
    }
  });
});

describe('ProcessWatcher', () => {
  it('scans at start, then when asked, long before its interval', async () => {
    const scans: number[] = [];
    const watcher = new ProcessWatcher({ intervalMs: 3_600_000, onScan: (scan) => void scans.push(scan.timeMs) });
    watcher.start();
    await expect.poll(() => scans.length, { timeout: 30_000 }).toBe(1);
    watcher.scanIn(10);
    watcher.scanIn(20); // coalesced with the one planned
    await expect.poll(() => scans.length, { timeout: 30_000 }).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(scans).toHaveLength(2);
    await watcher.stop();
  });

  it('asked while a scan runs: one more scan once it is handled', async () => {
    let scans = 0;
    let release!: () => void;
    const watcher = new ProcessWatcher({
      intervalMs: 3_600_000,
      onScan: () => {
        scans++;
        return scans === 1 ? new Promise<void>((resolve) => (release = resolve)) : undefined;
      },
    });
    watcher.start();
    await expect.poll(() => scans, { timeout: 30_000 }).toBe(1);
    watcher.scanIn(0);
    watcher.scanIn(0);
    release();
    await expect.poll(() => scans, { timeout: 30_000 }).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(scans).toBe(2);
    await watcher.stop();
  });
});
