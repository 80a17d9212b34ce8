// A new user's public-transcript shape, read with default settings: sessions of 2025 read a year and more later
// (older than the raw window and than any former summary TTL), some legacy `agent-*.jsonl` files whose parent
// transcript is empty or gone (generated, and a 2.0.42 recording of the real CLI whose agent files include the
// warmups it writes at start: an answer alone, no prompt). The built CLI's `report daily --json` equals ccusage 20.0.24's tokens day by day
// and in total, and `backfill` says what it kept where. Left out: transcripts with responses that carry no
// requestId (1.0-era): ccusage counts every streamed row of such a response (on seed 29, +117 input and +2,422
// output tokens: one response written four times), ccotel counts the response once.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { assertBuilt, cliEnv } from '../reliability/cli.js';
import { generateCorpus } from '../generator/corpus.js';
import type { Expected } from '../generator/expected.js';
import { storeCli } from './store-cli.js';

const RECORDED = join(import.meta.dirname, '..', 'fixtures', 'real', '2.0.42', 'subagent', 'projects');
const CCUSAGE = join(import.meta.dirname, '..', '..', 'node_modules', 'ccusage', 'src', 'cli.js');

interface Tokens { input_tokens: number; output_tokens: number; cache_read_tokens: number; cache_creation_tokens: number }
interface CcusageDay { period: string; inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheCreationTokens: number }

const home = mkdtempSync(join(tmpdir(), 'ccotel-old-history-'));
const storeDir = join(home, 'store');
let env: NodeJS.ProcessEnv;
let expected: Expected;
let orphaned: string[];
let backfillOutput: string;

/** Transcripts holding an assistant row with usage and no requestId. */
function withoutRequestIds(projects: string): string[] {
  return (readdirSync(projects, { recursive: true }) as string[]).filter((file) => file.endsWith('.jsonl')).map((file) => join(projects, file))
    .filter((path) => readFileSync(path, 'utf8').split('\n').some((line) => line.includes('"usage"') && line.includes('"type":"assistant"') &&
      !line.includes('"requestId"') && !line.includes('<synthetic>')));
}

/** Legacy agent files (`<project>/agent-*.jsonl`) and the main transcript of the session each belongs to. */
function legacyAgentFiles(projects: string): { agent: string; parent: string }[] {
  const found: { agent: string; parent: string }[] = [];
  for (const file of readdirSync(projects, { recursive: true }) as string[]) {
    const parts = file.split('/');
    if (parts.length !== 2 || !parts[1].startsWith('agent-')) continue;
    const session = /"sessionId":"([^"]+)"/.exec(readFileSync(join(projects, file), 'utf8'))?.[1];
    if (session) found.push({ agent: join(projects, file), parent: join(projects, parts[0], `${session}.jsonl`) });
  }
  return found;
}

beforeAll(async () => {
  assertBuilt();
  const root = join(home, 'claude');
  expected = await generateCorpus({ seed: 29, root, sessions: 16, startMs: Date.UTC(2025, 2, 3, 9), hostLayout: 'single-root' });
  for (const path of withoutRequestIds(join(root, 'projects'))) rmSync(path);
  // One parent emptied, one deleted: their agents' usage is still the user's.
  const agents = legacyAgentFiles(join(root, 'projects'));
  const parents = [...new Set(agents.map((a) => a.parent))];
  expect(parents.length).toBeGreaterThanOrEqual(2);
  writeFileSync(parents[0], '');
  rmSync(parents[1], { force: true });
  const recorded = join(home, 'recorded');
  cpSync(RECORDED, join(recorded, 'projects'), { recursive: true });
  const recordedParents = legacyAgentFiles(join(recorded, 'projects')).map((a) => a.parent);
  writeFileSync(recordedParents[0], '');
  orphaned = [...parents.slice(0, 2), recordedParents[0]];
  env = { ...cliEnv(home, { TZ: 'UTC' }), CLAUDE_CONFIG_DIR: `${root},${recorded}` };
  delete env.CCOTEL_RAW_TTL_DAYS; // default settings
  backfillOutput = await storeCli(storeDir, () => env).ccotel('backfill', '--no-progress');
}, 600_000);

it('reports daily tokens equal to ccusage, day by day and in total', async () => {
  const ours = JSON.parse(await storeCli(storeDir, () => env).ccotel('report', 'daily', '--json', '--timezone', 'UTC')) as
    { rows: (Tokens & { period: string })[]; totals: Tokens };
  const theirs = (JSON.parse(execFileSync(process.execPath, [CCUSAGE, 'daily', '--json', '--offline'], { env, encoding: 'utf8' })) as
    { daily: CcusageDay[]; totals: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheCreationTokens: number } });
  const tokens = (row: Tokens) => [row.input_tokens, row.output_tokens, row.cache_read_tokens, row.cache_creation_tokens];
  const theirTokens = (row: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheCreationTokens: number }) =>
    [row.inputTokens, row.outputTokens, row.cacheReadTokens, row.cacheCreationTokens];
  expect(theirs.daily.length).toBeGreaterThan(0);
  expect(theirs.daily[0].period.startsWith('2025-')).toBe(true);
  expect(theirs.daily.some((row) => row.period.startsWith('2026-'))).toBe(true);
  expect(Object.fromEntries(ours.rows.map((row) => [row.period, tokens(row)]))).toEqual(Object.fromEntries(theirs.daily.map((row) => [row.period, theirTokens(row)])));
  expect(tokens(ours.totals)).toEqual(theirTokens(theirs.totals));
  const days = ours.rows.map((row) => `${row.period} ${tokens(row).join('/')}`).join(', ');
  console.log(`ccusage daily: ${theirs.daily.length} days equal (input/output/cache read/cache write: ${days}; total ${tokens(ours.totals).join('/')}), ` +
    `${orphaned.length} parents emptied or deleted, ${expected.sessions} sessions generated`);
}, 120_000);

it('says what backfill kept where: every session in the summaries, detail for the last 30 days', async () => {
  const report = JSON.parse(await storeCli(storeDir, () => env).ccotel('report', 'session', '--json')) as
    { rows: { last_activity: string }[]; totals: { sessions: number } };
  const sessions = report.totals.sessions;
  const recent = report.rows.filter((row) => Date.parse(row.last_activity) >= Date.now() - 30 * 86_400_000).length;
  expect(sessions).toBeGreaterThan(recent);
  expect(backfillOutput).toContain(`sessions: ${sessions} new (${sessions} in the store): detail for the last 30 days (${recent} of them), summaries for all`);
});

it('gives every chat and tool span the session its rows name, and a session whose main file is empty or gone its own row and cost', async () => {
  const cli = storeCli(storeDir, () => env);
  const sessionless = await cli.query<{ n: number }>("SELECT count() AS n FROM otel_traces WHERE (SpanName LIKE 'chat %' OR SpanName LIKE 'execute_tool %') AND SpanAttributes['session.id'] = ''");
  expect(sessionless[0].n, 'chat and tool spans with no session').toBe(0);
  const report = JSON.parse(await cli.ccotel('report', 'session', '--json')) as { rows: { period: string; cost_usd: number }[] };
  const costs = new Map(report.rows.map((row) => [row.period, row.cost_usd]));
  for (const parent of orphaned) expect(costs.get(basename(parent, '.jsonl')), `the session of ${basename(parent)}`).toBeGreaterThan(0);
});

it('leaves no part of a day past the raw window: the next command loads only parts that hold rows', async () => {
  // Each expired day left an empty part per raw table when a merge applied the TTL; a short command never removed them,
  // and loading them was half of every later command's start.
  const [past] = await storeCli(storeDir, () => env).query<{ parts: number; partitions: number }>(
    `SELECT count() AS parts, uniqExact(table, partition_id) AS partitions FROM system.parts
     WHERE active AND database = currentDatabase() AND startsWith(table, 'otel_') AND toDateOrNull(partition) + INTERVAL 37 DAY <= today()`);
  expect(past).toEqual({ parts: 0, partitions: 0 });
});
