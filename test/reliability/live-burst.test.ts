// Claude Code often writes the last rows of a turn in a burst (rows a few ms apart) and then nothing
// more. Every row of such a burst must be read without any later write: here each turn is appended in 4
// writes 5–30 ms apart, then the file stays silent until the sidecar has committed its whole length and
// the turn's rows are queryable (a watcher that throttled change events left about half of such turns
// unread for good). The time from the last write to that point is printed (the goal is 2 s).
import { mkdtempSync, rmSync, statSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CheckpointStore, checkpointStoresIn } from '../../sidecar/src/sources/checkpoints.js';
import { Rng } from '../generator/random.js';
import { assertBuilt, cliEnv, endpointClient, startRun } from './cli.js';
import { appendTurns, sessionPath, turnLines, waitFor } from './transcripts.js';

const TURNS = 20;
const sleep = (ms: number) => new Promise((resolveDelay) => setTimeout(resolveDelay, ms));

/** The committed read position of `path` in the (only) checkpoint set, or -1. */
function committedOffset(checkpointDir: string, path: string): number {
  const [checkpoints]: CheckpointStore[] = checkpointStoresIn(checkpointDir);
  return checkpoints?.load()?.files.find((file) => file.pathId === checkpoints.pathId(path))?.offset ?? -1;
}

describe('live bursts (slow: the real CLI)', () => {
  const home = mkdtempSync(join(tmpdir(), 'ccotel-burst-'));
  let sidecar: ReturnType<typeof startRun> | undefined;

  afterAll(async () => {
    sidecar?.child.kill('SIGTERM');
    await sidecar?.exited;
    rmSync(home, { recursive: true, force: true });
  });

  it('reads every row of a turn written in a burst of 4 writes 5–30 ms apart, with no later write', async () => {
    assertBuilt();
    const env = cliEnv(home);
    const store = join(home, 'store');
    const session = 'burst-session';
    const transcript = sessionPath(join(home, 'claude'), session);
    const rng = new Rng(12);
    // Turns dated now (one minute apart in the records), so nothing is closed as idle while it is read.
    const startMs = Date.now() - TURNS * 60_000;
    appendTurns(transcript, session, 0, 1, startMs);
    sidecar = startRun(['--store', store, '--idle', '600000'], env);
    await waitFor('the query endpoint', () => sidecar!.output().includes('queries served on'), 90_000);
    const client = endpointClient(store);
    const tools = async () => {
      const result = await client.query({ query: "SELECT count() AS n FROM otel_traces WHERE SpanName = 'execute_tool Bash'", format: 'JSONEachRow' });
      return Number((await result.json<{ n: string }>())[0].n);
    };
    await waitFor('the first turn', async () => (await tools()) === 1, 60_000);

    const latenciesMs: number[] = [];
    for (let index = 1; index < TURNS; index++) {
      for (const line of turnLines({ sessionId: session, index, startMs })) {
        appendFileSync(transcript, line + '\n');
        await sleep(rng.int(5, 30));
      }
      const lastWriteMs = Date.now();
      const size = statSync(transcript).size;
      await waitFor(
        `turn ${index} read to the end of the file without a later write`,
        async () => committedOffset(join(home, 'state', 'checkpoints'), transcript) === size && (await tools()) === index + 1,
        30_000,
      );
      latenciesMs.push(Date.now() - lastWriteMs);
    }
    await client.close();
    console.log(`burst turns: ${latenciesMs.length}, last write → committed and queryable: max ${Math.max(...latenciesMs)} ms, each ${latenciesMs.join(' ')} ms`);
    expect(latenciesMs).toHaveLength(TURNS - 1);
  }, 600_000);
});
