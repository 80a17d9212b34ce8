import { spawn, type ChildProcess } from 'node:child_process';
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
