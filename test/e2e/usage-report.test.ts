// `report session|daily|blocks` on a generated corpus: cost equal to list prices × tokens computed here,
// independently of ccotel's price table; tokens equal to the generator's exact answer and to ccusage 20.0.24's
// on the same files (sessions ccusage counts differently — copies of another session's messages, legacy
// agent-*.jsonl files — left out and counted). The corpus is dated August 2026: older than the raw window,
// so every figure comes from the summaries.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { backfill } from '../../sidecar/src/commands/backfill.js';
import { usageReport, type UsageReport } from '../../sidecar/src/report/usage.js';
import { openStore, type Store } from '../../sidecar/src/store/open-store.js';
import { generateCorpus } from '../generator/corpus.js';
import { sessionListCost } from './list-prices.js';
import type { Expected, TokenSums } from '../generator/expected.js';

const CCUSAGE = join(import.meta.dirname, '..', '..', 'node_modules', 'ccusage', 'src', 'cli.js');

interface CcusageRow { period: string; inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheCreationTokens: number; totalCost: number;
  modelBreakdowns: { missingPricing?: boolean }[] }

let expected: Expected;
let store: Store;
let sessions: UsageReport;
let daily: UsageReport;
let blocks: UsageReport;
let env: NodeJS.ProcessEnv;
const storeDir = mkdtempSync(join(tmpdir(), 'ccotel-usage-'));

const ccusage = <T>(...args: string[]): T => JSON.parse(execFileSync(process.execPath, [CCUSAGE, ...args, '--json', '--offline'], { env, encoding: 'utf8' })) as T;
const tokensOf = (row: { input_tokens: number; output_tokens: number; cache_read_tokens: number; cache_creation_tokens: number }): TokenSums =>
  ({ input: row.input_tokens, output: row.output_tokens, cacheRead: row.cache_read_tokens, cacheCreation: row.cache_creation_tokens });
const theirTokens = (row: CcusageRow): TokenSums =>
  ({ input: row.inputTokens, output: row.outputTokens, cacheRead: row.cacheReadTokens, cacheCreation: row.cacheCreationTokens });

/** Sessions whose subagents sit in legacy `agent-*.jsonl` files: ccusage reports those files as sessions of their own. */
function sessionsWithLegacyAgentFiles(configDirs: string[]): Set<string> {
  const found = new Set<string>();
  for (const dir of configDirs) {
    for (const file of readdirSync(join(dir, 'projects'), { recursive: true }) as string[]) {
      const parts = file.split('/');
      if (!parts[parts.length - 1].startsWith('agent-') || parts[parts.length - 2] === 'subagents') continue;
      const match = /"sessionId":"([^"]+)"/.exec(readFileSync(join(dir, 'projects', file), 'utf8'));
      if (match) found.add(match[1]);
    }
  }
  return found;
}

beforeAll(async () => {
  // Each step says when it is done: a set-up that once hung in CI (not reproduced since) shows where.
  const started = performance.now();
  const done = (step: string) => console.log(`set-up: ${step} after ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const root = mkdtempSync(join(tmpdir(), 'ccotel-usage-corpus-'));
  expected = await generateCorpus({ seed: 11, root, sessions: 24 });
  env = { ...process.env, HOME: mkdtempSync(join(tmpdir(), 'ccotel-home-')), CLAUDE_CONFIG_DIR: expected.configDirs.join(','), TZ: 'UTC' };
  Object.assign(process.env, { HOME: env.HOME, CLAUDE_CONFIG_DIR: env.CLAUDE_CONFIG_DIR, CCOTEL_STATE_DIR: mkdtempSync(join(tmpdir(), 'ccotel-state-')) });
  done('corpus generated');
  await backfill({ store: storeDir });
  done('backfill');
  store = await openStore(storeDir, { command: 'test', access: 'read' });
  done('store opened');
  sessions = await usageReport(store.client, 'session', { timezone: 'UTC' });
  daily = await usageReport(store.client, 'daily', { timezone: 'UTC' });
  blocks = await usageReport(store.client, 'blocks', { timezone: 'UTC' });
  done('reports');
}, 600_000);

afterAll(async () => {
  await store?.close();
});

it('holds every session with the generator\'s exact tokens, and costs each at list prices × tokens', () => {
  expect(sessions.rows.map((r) => r.period).sort()).toEqual(Object.keys(expected.perSessionTokens).sort());
  for (const row of sessions.rows) {
    expect(tokensOf(row), row.period).toEqual(expected.perSessionTokens[row.period]);
    expect(row.cost_usd, row.period).toBeCloseTo(sessionListCost(expected, row.period), 6);
  }
  expect(sessions.totals.sessions).toBe(expected.sessions);
  expect(tokensOf(sessions.totals)).toEqual(expected.tokens);
  expect(tokensOf(daily.totals)).toEqual(expected.tokens);
  expect(daily.totals.cost_usd).toBeCloseTo(sessions.totals.cost_usd, 6);
  expect(tokensOf(blocks.totals)).toEqual(expected.tokens);
});

it('agrees with ccusage session --json on every comparable session: tokens exactly, cost within its pricing', () => {
  const theirs = ccusage<{ session: CcusageRow[] }>('session').session;
  const incomparable = new Set([...expected.sessionsSharingMessages, ...sessionsWithLegacyAgentFiles(expected.configDirs)]);
  let compared = 0;
  let costCompared = 0;
  for (const row of theirs) {
    if (incomparable.has(row.period) || !expected.perSessionTokens[row.period]) continue;
    compared++;
    const ours = sessions.rows.find((r) => r.period === row.period)!;
    expect(tokensOf(ours), row.period).toEqual(theirTokens(row));
    // ccusage has no price for some models (missingPricing: it counts them at 0); compare where it has one.
    if (row.modelBreakdowns.some((m) => m.missingPricing)) continue;
    costCompared++;
    expect(Math.abs(ours.cost_usd - row.totalCost), row.period).toBeLessThan(Math.max(1e-6, row.totalCost * 1e-3));
  }
  console.log(`ccusage session: ${compared} sessions compared, ${costCompared} of them on cost; ${incomparable.size} left out`);
  expect(compared).toBeGreaterThanOrEqual(5);
  expect(costCompared).toBeGreaterThanOrEqual(2);
});

it('agrees with ccusage daily, weekly and monthly --json on the sessions it counts the same way', async () => {
  // ccusage reads the comparable sessions' own files only (copied aside); ccotel reports the same sessions.
  const incomparable = new Set([...expected.sessionsSharingMessages, ...sessionsWithLegacyAgentFiles(expected.configDirs)]);
  const comparable = Object.keys(expected.perSessionTokens).filter((id) => !incomparable.has(id));
  const aside = mkdtempSync(join(tmpdir(), 'ccotel-usage-aside-'));
  for (const dir of expected.configDirs) {
    for (const file of readdirSync(join(dir, 'projects'), { recursive: true }) as string[]) {
      if (!file.endsWith('.jsonl') || !comparable.some((id) => file.includes(id))) continue;
      mkdirSync(dirname(join(aside, 'projects', file)), { recursive: true });
      copyFileSync(join(dir, 'projects', file), join(aside, 'projects', file));
    }
  }
  for (const period of ['daily', 'weekly', 'monthly'] as const) {
    const asideRows = (JSON.parse(execFileSync(process.execPath, [CCUSAGE, period, '--json', '--offline'],
      { env: { ...env, CLAUDE_CONFIG_DIR: aside }, encoding: 'utf8' })) as Record<string, CcusageRow[]>)[period];
    const ours = await usageReport(store.client, period, { timezone: 'UTC', sessionIds: comparable });
    expect(ours.rows.map((d) => d.period), period).toEqual(asideRows.map((d) => d.period));
    for (const row of asideRows) expect(tokensOf(ours.rows.find((d) => d.period === row.period)!), `${period} ${row.period}`).toEqual(theirTokens(row));
  }
  // All sessions: the same days.
  expect(ccusage<{ daily: CcusageRow[] }>('daily').daily.map((d) => d.period)).toEqual(daily.rows.map((d) => d.period));
  console.log(`ccusage daily/weekly/monthly: ${comparable.length} sessions compared, ${incomparable.size} left out`);
  expect(comparable.length).toBeGreaterThanOrEqual(5);
});

it('finds the same 5-hour blocks as ccusage blocks --json', () => {
  const theirs = ccusage<{ blocks: { id: string; isGap: boolean }[] }>('blocks').blocks.filter((b) => !b.isGap);
  expect(blocks.rows.map((b) => b.period)).toEqual(theirs.map((b) => b.id));
});
