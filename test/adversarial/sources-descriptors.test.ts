// Hardening II row 3 (its sources half): with every descriptor held (1000 idle connections under `ulimit -n 1024`),
// a transcript written meanwhile stayed unread until its next append, 100 s later, and `status` showed nothing
// wrong. A source that meets EMFILE or ENFILE now tries again every second, whatever changes, and says so in the
// status (written on a descriptor held in reserve for the state files).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { assertBuilt, runCli } from '../reliability/cli.js';
import { waitFor } from '../reliability/transcripts.js';
import { exported, hostileHome, runCaughtUp, terminate, writeSession, type HostileHome } from './sources-helpers.js';

/** The soft limit on open files of `pid`. */
function openFilesLimit(pid: number): number {
  return Number(/Max open files\s+(\d+)/.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))![1]);
}

/** The lowest descriptor number `pid` does not use: as a soft limit, no new descriptor can be opened. */
function lowestFreeDescriptor(pid: number): number {
  const open = new Set(readdirSync(`/proc/${pid}/fd`).map(Number));
  let fd = 0;
  while (open.has(fd)) fd++;
  return fd;
}

/**
 * Hold `pid` at no free descriptor until `release` is called: the soft limit lowered to its lowest free descriptor,
 * and lowered again whenever one below it is closed (a file it had open for a moment, a socket closed), so that
 * nothing it opens meanwhile gets one.
 */
function exhaustDescriptors(pid: number): { release: () => void } {
  const limit = openFilesLimit(pid);
  let held = limit;
  const tighten = () => {
    const free = lowestFreeDescriptor(pid);
    if (free >= held) return;
    held = free;
    execFileSync('prlimit', ['--pid', String(pid), `--nofile=${held}:`]);
  };
  tighten();
  const timer = setInterval(tighten, 20);
  return {
    release: () => {
      clearInterval(timer);
      execFileSync('prlimit', ['--pid', String(pid), `--nofile=${limit}:`]);
    },
  };
}

describe('row 3: no descriptor left (slow: the real CLI)', () => {
  let h: HostileHome;
  afterEach(() => h.cleanup());

  it('a transcript written while descriptors are exhausted is read once they are free, without another append; status shows the retry', async () => {
    assertBuilt();
    h = await hostileHome('emfile');
    writeSession(h, 'before-emfile', 1);
    const sidecar = await runCaughtUp(h, 1);
    const pid = sidecar.child.pid!;
    const retrying = async () => {
      const result = await runCli(['status', '--json', '--store', 'none'], h.env);
      return result.status === 0 ? (JSON.parse(result.stdout).sources[0]?.retrying as Record<string, string> | undefined) : undefined;
    };
    const exhausted = exhaustDescriptors(pid);
    try {
      writeSession(h, 'during-emfile', 1);
      await waitFor('the read to meet EMFILE', () => sidecar.output().includes('EMFILE'), 20_000);
      await waitFor('status to show the transcripts retrying', async () => /retrying after EMFILE/.test((await retrying())?.transcripts ?? ''), 20_000).catch(async (error: Error) => {
        throw new Error(`${error.message}: ${JSON.stringify(await retrying())}; ${sidecar.output()}`);
      });
      // Past the 2 s a changed file is checked again anyway: only a retry on a timer reads it now.
      await new Promise((resolveDelay) => setTimeout(resolveDelay, 3_000));
      expect(exported(h, 'during-emfile')).toBe(false);
    } finally {
      exhausted.release();
    }
    const freedMs = Date.now();
    // A retry within a second, then the OTLP-only flush interval (5 s).
    await waitFor('the transcript exported', () => exported(h, 'during-emfile'), 10_000).catch((error: Error) => {
      throw new Error(`${error.message}; ${sidecar.output()}`);
    });
    console.log(`row 3: exported ${Date.now() - freedMs} ms after the descriptors were freed`);
    await waitFor('status to show the retry over', async () => Object.keys((await retrying()) ?? { pending: 1 }).length === 0, 20_000).catch(async (error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(await retrying())}; ${sidecar.output()}`);
    });
    expect(await terminate(sidecar)).toBe(0);
  }, 180_000);
});
