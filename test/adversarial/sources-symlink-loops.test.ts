// Issue 13 rows 6 and 7: symlink loops in a transcript root. `ln -s .. projects/P/loop` crashed `run` at
// start (ELOOP from the watcher); two loops made `run` and `backfill` walk forever (a recursive listing
// follows symlinked directories), ignoring SIGTERM, 2.7 GB in a minute. Now discovery never follows a
// symlinked directory: each loop is reported once and skipped, and memory stays that of a small tree.
import { symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertBuilt, peakRssMb, transcriptStatus } from '../reliability/cli.js';
import { waitFor } from '../reliability/transcripts.js';
import { hostileHome, OTLP_ONLY, runCaughtUp, runMeasured, terminate, writeSession, type HostileHome } from './sources-helpers.js';

/** Peak RSS allowed, OTLP-only (no embedded engine): Node and the pipeline take ~70–110 MB here. */
const MAX_RSS_MB = 256;

const occurrences = (text: string, part: string) => text.split(part).length - 1;

describe('symlink loops in a transcript root (slow: the real CLI)', () => {
  let h: HostileHome;
  afterEach(() => h.cleanup());

  it('one loop (`ln -s ..`): run starts, follows, reports the loop once and stops on SIGTERM', async () => {
    assertBuilt();
    h = await hostileHome('loop1');
    const first = writeSession(h, 'loop-a', 2);
    const loop = join(dirname(first), 'loop');
    symlinkSync('..', loop);
    const sidecar = await runCaughtUp(h, 1);
    writeSession(h, 'loop-a', 1);
    writeSession(h, 'loop-b', 1, '-home-dev-other');
    await waitFor('the appended turn and the new file', async () => {
      const source = await transcriptStatus(h.env, 'none');
      return source?.filesFollowed === 2 && source.bytesBehind === 0;
    }, 60_000);
    expect(await terminate(sidecar)).toBe(0);
    expect(occurrences(sidecar.output(), loop)).toBe(1);
    expect(sidecar.output()).toContain('not followed');
  }, 180_000);

  it('two loops and a link pair pointing at each other: backfill ends, run follows and stops, memory bounded', async () => {
    assertBuilt();
    h = await hostileHome('loop2');
    const project = dirname(writeSession(h, 'loops-a', 3));
    writeSession(h, 'loops-b', 1, '-home-dev-other');
    symlinkSync('..', join(project, 'loop1'));
    symlinkSync('../..', join(project, 'loop2'));
    symlinkSync(join(project, 'pair-b'), join(project, 'pair-a'));
    symlinkSync(join(project, 'pair-a'), join(project, 'pair-b'));

    const backfill = await runMeasured(['backfill', '--json', '--no-progress', ...OTLP_ONLY(h)], h.env);
    expect(backfill.code, backfill.stderr).toBe(0);
    expect(JSON.parse(backfill.stdout)).toMatchObject({ files: 2, lines: 4 * 4 });
    console.log(`backfill with two loops: peak RSS ${Math.round(backfill.peakRssMb)} MB`);
    expect(backfill.peakRssMb).toBeLessThan(MAX_RSS_MB);
    for (const name of ['loop1', 'loop2', 'pair-a', 'pair-b']) expect(occurrences(backfill.stderr, join(project, name))).toBe(1);

    const sidecar = await runCaughtUp(h, 2);
    const runRssMb = peakRssMb(sidecar.child.pid!);
    expect(await terminate(sidecar)).toBe(0);
    console.log(`run with two loops: peak RSS ${Math.round(runRssMb)} MB`);
    expect(runRssMb).toBeLessThan(MAX_RSS_MB);
  }, 300_000);
});
