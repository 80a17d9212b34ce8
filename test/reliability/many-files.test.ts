// 10k transcript files: the real CLI (`npm run build` first) follows them all on inotify, reads what is
// appended to any of them and the files that appear by the hundred after it started, without crashing and
// with bounded memory; the store ends with exactly the reference set.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Rng } from '../generator/random.js';
import { assertBuilt, cliEnv, peakRssMb, runCli, startRun, transcriptStatus } from './cli.js';
import { compareSpanIds, referenceSpanIds } from './reference.js';
import { appendTurns, manyFilesPath, waitFor, writeManyTranscripts } from './transcripts.js';

const FILES = 10_000;
/** One file in this many starts with a complete turn; the others hold only a summary row. */
const TURN_EVERY = 10;
const HOUR_AGO = Date.now() - 3_600_000;
/** Peak resident memory allowed, embedded engine (chdb) included: ~300 MB with one file, ~530 MB measured here. */
const MAX_RSS_MB = 768;

describe('10k transcript files (slow: the real CLI)', () => {
  const home = mkdtempSync(join(tmpdir(), 'ccotel-many-files-'));
  let sidecar: ReturnType<typeof startRun> | undefined;

  afterAll(() => {
    sidecar?.child.kill('SIGKILL');
    rmSync(home, { recursive: true, force: true });
  });

  it('follows 10k files, reads appends and new files, bounded memory, exact reference set', async () => {
    assertBuilt();
    const env = cliEnv(home);
    const claude = join(home, 'claude');
    const store = join(home, 'store');
    const rng = new Rng(3);
    writeManyTranscripts(claude, 0, FILES, TURN_EVERY, HOUR_AGO);
    const status = () => transcriptStatus(env, store);

    sidecar = startRun(['--store', store, '--idle', '1000'], env);
    const pid = sidecar.child.pid!;
    await waitFor(
      'the catch-up on 10k files',
      async () => {
        const source = await status();
        return source?.filesFollowed === FILES && source.bytesBehind === 0;
      },
      60_000,
    );
    expect((await status())?.watcher).toBe('inotify');

    // Appends to files of both kinds, and 500 files that appear at once (every other one with a turn).
    for (const i of new Set(Array.from({ length: 200 }, () => rng.int(0, FILES - 1)))) {
      appendTurns(manyFilesPath(claude, i), `session-${i}`, 1, 2, HOUR_AGO);
    }
    writeManyTranscripts(claude, FILES, FILES + 500, 2, HOUR_AGO);
    const reference = await referenceSpanIds(claude);
    const stored = async () => {
      const result = await runCli(['query', 'SELECT SpanId FROM otel_traces', '--format', 'TSV', '--store', store], env);
      return result.status === 0 ? result.stdout.split('\n').filter(Boolean) : [];
    };
    await waitFor('the appended turns', async () => new Set(await stored()).size >= reference.size, 60_000).catch(() => {});
    expect(compareSpanIds(await stored(), reference)).toEqual({ missing: 0, extra: 0, duplicates: 0 });
    // The rows can be stored by a delivery started while reading, before the round's own flush marks the sink ok.
    await waitFor('status to count the new files', async () => {
      const source = await status();
      return source?.filesFollowed === FILES + 500 && source.sink.state === 'ok';
    }, 15_000);
    expect(await status()).toMatchObject({ bytesBehind: 0, running: true, sink: { state: 'ok' } });
    const rssMb = peakRssMb(pid);
    console.log(`10k files: peak RSS ${Math.round(rssMb)} MB`);
    expect(rssMb).toBeLessThan(MAX_RSS_MB);
    expect(sidecar.output()).not.toMatch(/watcher failed|cannot read/);
  }, 240_000);
});
