// No silent empty answers: a store that does not exist is an error for every reading command (only `run` and
// `backfill` make one, and say so); impossible dates and reversed ranges are errors; a range without data says so
// instead of showing 1970 dates.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { assertBuilt, cliEnv, runCli, runProcess } from '../reliability/cli.js';
import { generateCorpus } from '../generator/corpus.js';

const home = mkdtempSync(join(tmpdir(), 'ccotel-no-silent-'));
const storeDir = join(home, 'store');
const missing = join(home, 'nonexistent');
let env: NodeJS.ProcessEnv;
let backfillOutput: string;

beforeAll(async () => {
  assertBuilt();
  await generateCorpus({ seed: 5, root: join(home, 'claude'), startMs: Date.UTC(2025, 5, 2, 9), hostLayout: 'single-root' });
  env = cliEnv(home, { TZ: 'UTC' });
  const result = await runCli(['backfill', '--no-progress', '--store', storeDir], env, 300_000);
  expect(result.status, result.stderr).toBe(0);
  backfillOutput = result.stdout;
}, 300_000);

it('says when backfill made the store', () => {
  expect(backfillOutput).toContain(`created a new store at ${storeDir}`);
});

it.each([['report'], ['report', 'daily'], ['query', 'SELECT 1'], ['retention']])('%s on a store that does not exist is an error, and makes none', async (...args) => {
  const result = await runCli([...args, '--store', missing], env);
  expect(result.status, result.stdout).not.toBe(0);
  expect(result.stderr).toContain(`there is no store at ${missing}`);
  expect(existsSync(missing)).toBe(false);
});

it('status says there is no store, and makes none', async () => {
  const result = await runCli(['status', '--store', missing], env);
  expect(result.stdout).toContain(`store: there is no store at ${missing}`);
  expect(existsSync(missing)).toBe(false);
});

it.each(['2025-02-30', '2025-11-31', '2025-13-01'])('rejects the impossible date %s', async (day) => {
  const result = await runCli(['report', 'daily', '--since', day, '--store', storeDir], env);
  expect(result.status).not.toBe(0);
  expect(result.stderr).toContain(`not a date (YYYY-MM-DD): ${day}`);
});

it('rejects --until before --since', async () => {
  const result = await runCli(['report', 'daily', '--since', '2025-06-10', '--until', '2025-06-01', '--store', storeDir], env);
  expect(result.status).not.toBe(0);
  expect(result.stderr).toContain('--until 2025-06-01 is before --since 2025-06-10');
});

it('says a range holds no usage', async () => {
  const result = await runCli(['report', 'daily', '--since', '2024-01-01', '--until', '2024-01-31', '--store', storeDir], env);
  expect(result.status, result.stderr).toBe(0);
  expect(result.stdout).toContain('no usage from 2024-01-01 to 2024-01-31 in the store');
});

it('shows no 1970 date for a range without data (the web view\'s last 24 hours on old history)', async () => {
  const script = `const { openStore } = await import(${JSON.stringify(join(import.meta.dirname, '..', '..', 'dist', 'sidecar', 'src', 'store', 'open-store.js'))});
    const { UiData } = await import(${JSON.stringify(join(import.meta.dirname, '..', '..', 'dist', 'sidecar', 'src', 'ui', 'data.js'))});
    const store = await openStore(process.argv[1], { command: 'test', access: 'read' });
    try { console.log(JSON.stringify((await new UiData(store.client).overview({ fromMs: Date.now() - 86400000 })).report.overview)); } finally { await store.close(); }`;
  const result = await runProcess(process.execPath, ['--input-type=module', '-e', script, storeDir], env);
  expect(result.status, result.stderr).toBe(0);
  expect(result.stdout).not.toContain('1970');
  expect(JSON.parse(result.stdout)).toEqual([{ sessions: 0, turns: 0, tool_calls: 0, api_responses: 0, cost_usd: 0, first_event: null, last_event: null }]);
  const overview = await runCli(['report', '--store', storeDir], env);
  expect(overview.stdout).not.toContain('1970');
});
