// A catch-up that shows: `ccotel run` on existing history says in one line when it has caught up, and then every
// session and token of that history is in the report at once (before, the turns of sessions idle for long waited
// for the next idle tick, up to a minute); while it runs, `status` shows what is left and `report` warns; after,
// `status` says it is done.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateCorpus, type Expected } from '../generator/corpus.js';
import { assertBuilt, cliEnv, runCli, startRun } from '../reliability/cli.js';

const home = mkdtempSync(join(tmpdir(), 'ccotel-catch-up-'));
const storeDir = join(home, 'store');
let expected: Expected;
let env: NodeJS.ProcessEnv;
let run: ReturnType<typeof startRun>;
let caughtUpAfterMs: number;
let during: { status: { done: boolean; bytesLeft: number } | undefined; reportStderr: string };

const waitFor = async (text: string, started: number) => {
  while (!run.output().includes(text)) {
    if (Date.now() - started > 90_000) throw new Error(`no '${text}' within 90 s:\n${run.output()}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
};

beforeAll(async () => {
  assertBuilt();
  // Large enough that the catch-up lasts some seconds.
  expected = await generateCorpus({ seed: 29, root: join(home, 'claude'), targetBytes: 60e6, startMs: Date.UTC(2025, 8, 1, 9), hostLayout: 'single-root' });
  env = cliEnv(home, { TZ: 'UTC' });
  const started = Date.now();
  run = startRun(['--store', storeDir], env);
  await waitFor('following transcripts', started);
  const status = JSON.parse((await runCli(['status', '--json', '--store', storeDir], env)).stdout) as { sources: { catchUp?: { done: boolean; bytesLeft: number } }[] };
  during = { status: status.sources[0]?.catchUp, reportStderr: (await runCli(['report', '--store', storeDir], env)).stderr };
  await waitFor('caught up:', started);
  caughtUpAfterMs = Date.now() - started;
}, 240_000);

it('shows the catch-up while it runs: status has what is left, report warns that its figures still grow', () => {
  expect(during.status?.done).toBe(false);
  expect(during.reportStderr).toContain('ccotel run is catching up (running: ');
});

afterAll(async () => {
  run?.child.kill('SIGINT');
  await run?.exited;
});

it('prints one line when it has caught up, and the report then holds all of the history', async () => {
  expect(run.output().match(/caught up:/g)).toHaveLength(1);
  expect(run.output()).toMatch(/caught up: \d+ files read and every record of them stored/);
  const report = await runCli(['report', 'session', '--json', '--store', storeDir], env);
  expect(report.status, report.stderr).toBe(0);
  expect(report.stderr).not.toContain('catching up');
  const sessions = JSON.parse(report.stdout) as { rows: { period: string; input_tokens: number; output_tokens: number }[] };
  expect(sessions.rows.map((row) => row.period).sort()).toEqual(Object.keys(expected.perSessionTokens).sort());
  for (const row of sessions.rows) expect([row.input_tokens, row.output_tokens], row.period).toEqual([expected.perSessionTokens[row.period].input, expected.perSessionTokens[row.period].output]);
  console.log(`caught up after ${(caughtUpAfterMs / 1000).toFixed(1)} s`);
});

it('has status say the catch-up is done', async () => {
  const status = JSON.parse((await runCli(['status', '--json', '--store', storeDir], env)).stdout) as { sources: { catchUp?: { done: boolean } }[] };
  expect(status.sources[0].catchUp?.done).toBe(true);
  const text = (await runCli(['status', '--store', storeDir], env)).stdout;
  expect(text).toMatch(/catch-up\s*│\s*done/);
});
