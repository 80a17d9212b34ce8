import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TranscriptTree } from './transcript-tree.js';
import { TranscriptWatcher } from './transcript-watcher.js';

const settle = (ms: number) => new Promise((resolveDelay) => setTimeout(resolveDelay, ms));

async function until(check: () => boolean, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await settle(20);
  return check();
}

describe('TranscriptWatcher (inotify)', () => {
  let watcher: TranscriptWatcher | undefined;
  afterEach(async () => watcher?.stop());

  it('follows a root deleted and created again before its events are handled (a new inode at the same path)', async () => {
    const root = join(mkdtempSync(join(tmpdir(), 'ccotel-watcher-')), 'projects');
    const project = join(root, 'p');
    mkdirSync(project, { recursive: true });
    const seen: string[] = [];
    watcher = new TranscriptWatcher({ tree: new TranscriptTree([root]), onPath: (path) => seen.push(path), usePolling: false, pollIntervalMs: 1_000 });
    await watcher.start();

    // In one go, so the watcher sees the delete only once the directory is back: its old watch is dead.
    rmSync(root, { recursive: true });
    mkdirSync(project, { recursive: true });
    await settle(300);
    const transcript = join(project, 'late.jsonl');
    writeFileSync(transcript, '{}\n');
    expect(await until(() => seen.includes(transcript))).toBe(true);
  });

  it('Hardening II row 3: a directory that appears while no descriptor is left is listed again a second later', async () => {
    const base = mkdtempSync(join(tmpdir(), 'ccotel-watcher-'));
    const root = join(base, 'projects');
    mkdirSync(root);
    // A project directory that arrives whole, its transcript already in it: only its listing finds the transcript.
    const staged = join(base, 'staged');
    mkdirSync(staged);
    writeFileSync(join(staged, 'new.jsonl'), '{}\n');
    const seen: string[] = [];
    watcher = new TranscriptWatcher({ tree: new TranscriptTree([root]), onPath: (path) => seen.push(path), usePolling: false, pollIntervalMs: 1_000 });
    await watcher.start();

    const limit = Number(/Max open files\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'))![1]);
    execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${Math.min(limit, 4096)}:`]);
    const hogs: number[] = [];
    try {
      try {
        for (;;) hogs.push(openSync('/dev/null', 'r'));
      } catch {
        // every descriptor taken
      }
      renameSync(staged, join(root, 'p'));
      await settle(500); // the event is handled meanwhile, its listing refused
    } finally {
      for (const fd of hogs) closeSync(fd);
      execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${limit}:`]);
    }
    expect(await until(() => seen.includes(join(root, 'p', 'new.jsonl')), 3_000)).toBe(true);
    rmSync(base, { recursive: true, force: true });
  });
});
