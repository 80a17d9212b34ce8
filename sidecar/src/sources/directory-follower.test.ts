import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DirectoryFollower } from './directory-follower.js';

/** Longer than any test: a tick that happens was caused by a change, never by a poll. */
const HOUR_MS = 3_600_000;
const sleep = (ms: number) => new Promise((resolveDelay) => setTimeout(resolveDelay, ms));

async function waitUntil(what: string, condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
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

  function tempDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'ccotel-follower-'));
    dirs.push(dir);
    return dir;
  }

  /** Follow `dir` with no poll to speak of; each tick lists the directory, as the sources do. */
  async function follow(dir: string): Promise<{ ticks: () => number; seen: Set<string> }> {
    let ticks = 0;
    const seen = new Set<string>();
    const follower = new DirectoryFollower({
      dir,
      safetyPollMs: HOUR_MS,
      pollMs: HOUR_MS,
      tick: async () => {
        ticks++;
        for (const name of listOrNothing(dir)) seen.add(name);
      },
    });
    followers.push(follower);
    follower.start();
    await waitUntil('the first tick', () => ticks >= 1);
    return { ticks: () => ticks, seen };
  }

  it('ticks on a change in the directory, and not while nothing changes', async () => {
    const dir = tempDir();
    const follower = await follow(dir);
    await sleep(500);
    expect(follower.ticks()).toBe(1);
    writeFileSync(join(dir, 'event.json'), '{}');
    await waitUntil('the event seen', () => follower.seen.has('event.json'));
  });

  it('reads a directory created after the start at once, even two levels below what existed', async () => {
    const parent = tempDir();
    const dir = join(parent, 'state', 'spool');
    const follower = await follow(dir);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'first.json'), '{}');
    await waitUntil('the file in the late directory', () => follower.seen.has('first.json'));
    writeFileSync(join(dir, 'second.json'), '{}'); // and it is watched from then on
    await waitUntil('the next file', () => follower.seen.has('second.json'));
  });

  it('is not woken by other changes next to a directory it waits for', async () => {
    const parent = tempDir();
    const follower = await follow(join(parent, 'spool'));
    for (let i = 0; i < 5; i++) writeFileSync(join(parent, 'status.json'), String(i));
    await sleep(500);
    expect(follower.ticks()).toBe(1);
  });

  it('reads a directory deleted and created again at once (its inode number is often reused)', async () => {
    const dir = join(tempDir(), 'spool');
    mkdirSync(dir);
    const follower = await follow(dir);
    // In one go, so the follower handles the delete once the new directory is there.
    rmSync(dir, { recursive: true });
    mkdirSync(dir);
    await sleep(300);
    writeFileSync(join(dir, 'after.json'), '{}');
    await waitUntil('the file in the new directory', () => follower.seen.has('after.json'));
  });

  it('reads a directory deleted, and created again later, at once', async () => {
    const dir = join(tempDir(), 'spool');
    mkdirSync(dir);
    const follower = await follow(dir);
    rmSync(dir, { recursive: true });
    await sleep(300);
    mkdirSync(dir);
    writeFileSync(join(dir, 'after.json'), '{}');
    await waitUntil('the file in the new directory', () => follower.seen.has('after.json'));
  });

  it('reads a directory that replaced one renamed away at once', async () => {
    const parent = tempDir();
    const dir = join(parent, 'shell');
    mkdirSync(dir);
    const follower = await follow(dir);
    renameSync(dir, join(parent, 'shell.1'));
    mkdirSync(dir);
    await sleep(300);
    writeFileSync(join(dir, 'session.jsonl'), '{}\n');
    await waitUntil('the file in the new directory', () => follower.seen.has('session.jsonl'));
  });
});

function listOrNothing(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
