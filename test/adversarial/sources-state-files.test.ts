// Issue 13 row 11 and "nothing kills the process": a state dir on a full disk crashed `run` (ENOSPC from
// the checkpoint write, uncaught). Every write of a checkpoint or status file now survives ENOSPC, EROFS
// and EMFILE: the error is logged and shown by `ccotel status`, the previous version is kept, and the
// write is retried until it succeeds.
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointStore, type SidecarStatus } from '../../sidecar/src/sources/checkpoints.js';
import { StateWrites } from '../../sidecar/src/sources/state-file.js';
import { assertBuilt, runCli, startRun } from '../reliability/cli.js';
import { waitFor } from '../reliability/transcripts.js';
import { hostileHome, terminate, writeSession, type HostileHome } from './sources-helpers.js';

const STATUS: SidecarStatus = {
  pid: process.pid, startedMs: 1, updatedMs: 2, store: '', otlpEndpoint: 'http://127.0.0.1:1', roots: [], watcher: 'inotify',
  sink: { state: 'ok', retries: 0 }, filesFollowed: 0, unreadableFiles: {}, linesSkipped: {},
};

/** This process's soft limit of open files (from /proc, as prlimit sets it). */
function openFilesLimit(): number {
  return Number(/Max open files\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'))![1]);
}

/** Whether this machine lets the test mount a tmpfs (root with CAP_SYS_ADMIN, as in the team's containers). */
function canMount(): boolean {
  const probe = mkdtempSync(join(tmpdir(), 'ccotel-mount-probe-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16k', 'tmpfs', probe]).status === 0;
  if (mounted) spawnSync('umount', [probe]);
  rmSync(probe, { recursive: true, force: true });
  return mounted;
}

describe('state files on a failing filesystem', () => {
  /** Run `during` with every descriptor of this process taken (the soft limit lowered to at most 4096 first). */
  function withoutDescriptors<T>(during: () => T): T {
    const limit = openFilesLimit();
    const hogs: number[] = [];
    execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${Math.min(limit, 4096)}:`]);
    try {
      for (;;) hogs.push(openSync('/dev/null', 'r'));
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe('EMFILE');
    }
    try {
      return during();
    } finally {
      for (const fd of hogs) closeSync(fd);
      execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${limit}:`]);
    }
  }

  it('EMFILE: checkpoint and status writes that find no descriptor are reported, not thrown, and succeed once one is free', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ccotel-emfile-'));
    const logs: string[] = [];
    // Made while no descriptor is free, so it could not set one aside (below).
    const [store, saved, statusSaved] = withoutDescriptors(() => {
      const inside = new CheckpointStore(dir, 'k', new StateWrites((message) => logs.push(message)));
      return [inside, inside.save([], 1), inside.saveStatus(STATUS)] as const;
    });
    expect([saved, statusSaved]).toEqual([false, false]);
    expect(store.writes.errors[store.path]).toMatch(/EMFILE/);
    expect(logs.join('\n')).toMatch(/cannot write .*transcripts-k\.json.*EMFILE/);
    expect(store.save([], 2)).toBe(true);
    expect(store.load()?.committedAtMs).toBe(2);
    expect(store.writes.errors).toEqual({ [store.statusPath]: expect.stringMatching(/EMFILE/) });
    expect(store.saveStatus(STATUS)).toBe(true);
    expect(store.writes.errors).toEqual({});
    rmSync(dir, { recursive: true, force: true });
  });

  it('Hardening II row 3: state writes go on while another holds every descriptor, on the one set aside for them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ccotel-emfile-'));
    const store = new CheckpointStore(dir, 'k', new StateWrites());
    const written = withoutDescriptors(() => [store.save([], 1), store.saveStatus(STATUS), store.save([], 2), store.saveStatus({ ...STATUS, updatedMs: 3 })]);
    expect(written).toEqual([true, true, true, true]);
    expect([store.load()?.committedAtMs, store.loadStatus()?.updatedMs]).toEqual([2, 3]);
    rmSync(dir, { recursive: true, force: true });
  });

  describe.runIf(canMount())('a state dir on its own small filesystem (slow: the real CLI)', () => {
    let h: HostileHome;
    let stateDir: string;
    afterEach(() => {
      spawnSync('umount', ['-l', stateDir]);
      h.cleanup();
    });

    it('ENOSPC, then EROFS: run keeps running, status names the failing file, and the checkpoint is written once it can be', async () => {
      assertBuilt();
      h = await hostileHome('full-disk');
      stateDir = join(h.home, 'state');
      mkdirSync(stateDir);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k,mode=0700', 'tmpfs', stateDir]);
      // 120 transcripts: a checkpoint of ~30 KB, written whole before the disk is filled. Then the disk is filled
      // but 24 KB: the key, the status (~1 KB, twice while it is replaced) and the shell log positions fit, a new
      // version of the checkpoint not. (Filled before the start, how much fit depended on how far the catch-up had
      // got at its first commit: a partial checkpoint could take the status's room.)
      for (let i = 0; i < 120; i++) writeSession(h, `full-${i}`, 1, `-home-dev-project-${i % 5}`);
      const store = join(h.home, 'store'); // embedded, outside the small filesystem: only state files are on it
      type Source = { running: boolean; filesFollowed: number; bytesBehind: number; stateErrors: Record<string, string>; lastCommitTime?: string; lastSavedTime?: string };
      const status = async () => JSON.parse((await runCli(['status', '--json', '--store', store], h.env)).stdout).sources[0] as Source | undefined;
      let files = 120;
      const committedAll = async () => {
        const source = await status();
        return source?.filesFollowed === files && source.bytesBehind === 0 && Object.keys(source.stateErrors).length === 0;
      };
      // Row 9 of Hardening II: while nothing can be written to the state dir, status still tells the running
      // sidecar's truth: the failing writes with their error, its own count of files, and a commit made in memory
      // since the checkpoint on disk.
      const toldWhileFailing = async (code: string) => {
        const source = await status();
        return (
          source?.filesFollowed === files &&
          Object.values(source.stateErrors).some((error) => error.includes(code)) &&
          source.lastCommitTime !== undefined &&
          source.lastSavedTime !== undefined &&
          source.lastCommitTime > source.lastSavedTime
        );
      };
      const expectTold = async (code: string) => {
        await waitFor(`status to tell ${code}, ${files} files and a commit not on disk`, () => toldWhileFailing(code), 60_000).catch(async (error: Error) => {
          throw new Error(`${error.message}: ${JSON.stringify(await status())}`);
        });
        const text = (await runCli(['status', '--store', store], h.env)).stdout;
        expect(text).toMatch(new RegExp(`state writes failing[^\\n]*${code}`));
        expect(text).toMatch(/in memory; not written to disk since/);
      };

      const sidecar = startRun(['--store', store], h.env);
      h.sidecars.push(sidecar.child);
      await waitFor('the query endpoint', () => sidecar.output().includes('queries served on'), 90_000);
      await waitFor('the whole checkpoint written', committedAll, 120_000);
      const filler = join(stateDir, 'filler');
      const fd = openSync(filler, 'w');
      try {
        for (;;) writeSync(fd, Buffer.alloc(4096, 1));
      } catch (error) {
        expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
      }
      closeSync(fd);
      execFileSync('truncate', ['-s', `-${24 * 1024}`, filler]);
      writeSession(h, 'full-1', 1, '-home-dev-project-1'); // read, so its checkpoint is written anew
      await waitFor('status to report the checkpoint write failing', async () => Object.values((await status())?.stateErrors ?? {}).some((error) => error.includes('ENOSPC')), 60_000).catch(async (error: Error) => {
        throw new Error(`${error.message}: ${JSON.stringify(await status())}; ${sidecar.output()}; ${execFileSync('ls', ['-la', join(stateDir, 'checkpoints')], { encoding: 'utf8' })}`);
      });
      expect((await status())?.running).toBe(true);

      // Full to the last byte: not even the status fits in the state dir now.
      const rest = openSync(join(stateDir, 'filler-rest'), 'w');
      try {
        for (;;) writeSync(rest, Buffer.alloc(1024, 1));
      } catch (error) {
        expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
      }
      closeSync(rest);
      writeSession(h, 'full-new', 1, '-home-dev-project-0');
      files++;
      await expectTold('ENOSPC');

      rmSync(join(stateDir, 'filler-rest'));
      rmSync(filler);
      await waitFor('the checkpoint written once there is space', committedAll, 120_000);

      execFileSync('mount', ['-o', 'remount,ro', stateDir]);
      writeSession(h, 'full-0', 1, '-home-dev-project-0');
      writeSession(h, 'read-only-new', 1, '-home-dev-project-0');
      files++;
      await waitFor('the read-only filesystem to be reported', () => sidecar.output().includes('EROFS'), 120_000);
      await expectTold('EROFS');
      await new Promise((resolveDelay) => setTimeout(resolveDelay, 6_000)); // a retry or two
      expect(sidecar.child.exitCode).toBeNull();
      execFileSync('mount', ['-o', 'remount,rw', stateDir]);
      await waitFor('everything committed again', committedAll, 120_000);
      expect(await terminate(sidecar)).toBe(0);
      expect(sidecar.output()).toMatch(/written again/);
    }, 600_000);
  });
});
