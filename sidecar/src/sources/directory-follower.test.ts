import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DirectoryFollower } from './directory-follower.js';

const HOUR_MS = 3_600_000;
const sleep = (ms: number) => new Promise((resolveDelay) => setTimeout(resolveDelay, ms));

async function waitUntil(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(20);
  }
}

describe('DirectoryFollower', () => {
  const followers: DirectoryFollower[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(followers.splice(0).map((follower) => follower.stop()));
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function follow(dir: string, safetyPollMs: number): { ticks: () => number } {
    let ticks = 0;
    const follower = new DirectoryFollower({
      dir,
      safetyPollMs,
      tick: async () => {
        ticks++;
      },
    });
    followers.push(follower);
    follower.start();
    return { ticks: () => ticks };
  }

  function tempDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'ccotel-follower-'));
    dirs.push(dir);
    return dir;
  }

  it('ticks on a change in the directory without waiting for the safety poll', async () => {
    const dir = tempDir();
    const follower = follow(dir, HOUR_MS);
    await waitUntil(() => follower.ticks() === 1); // the first tick, at start
    writeFileSync(join(dir, 'event.json'), '{}');
    await waitUntil(() => follower.ticks() >= 2);
  });

  it('does not tick while nothing changes (until the safety poll)', async () => {
    const follower = follow(tempDir(), HOUR_MS);
    await waitUntil(() => follower.ticks() === 1);
    await sleep(1_000);
    expect(follower.ticks()).toBe(1);
  });

  it('watches a directory created after the start, from the next safety poll on', async () => {
    const dir = join(tempDir(), 'later');
    const follower = follow(dir, 200);
    await waitUntil(() => follower.ticks() >= 1);
    mkdirSync(dir);
    await waitUntil(() => watchedInodes().has(statSync(dir).ino));
  });

  it('watches a directory again once it was replaced', async () => {
    const parent = tempDir();
    const dir = join(parent, 'spool');
    mkdirSync(dir);
    follow(dir, 200);
    await waitUntil(() => watchedInodes().has(statSync(dir).ino));
    renameSync(dir, join(parent, 'old'));
    mkdirSync(dir);
    await waitUntil(() => watchedInodes().has(statSync(dir).ino));
  });
});

/** Inodes this process holds an inotify watch on (`inotify wd:… ino:<hex>` lines of its inotify descriptors). */
function watchedInodes(): Set<number> {
  const inodes = new Set<number>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) !== 'anon_inode:inotify') continue;
      for (const match of readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8').matchAll(/^inotify wd:\S+ ino:([0-9a-f]+)/gm)) inodes.add(parseInt(match[1], 16));
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}
