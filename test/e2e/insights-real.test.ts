// Issue 35 on the recorded real-CLI samples (test/fixtures/real: every release's scenarios): backfilled with no raw
// rows kept, `report insights` finds exactly what the scenario scripts (expectations.json) and the transcripts'
// own rows say: every failing call (thresholds at 1), the interrupted turns with their tokens and cost, and every
// compaction with the context it compacted.
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULTS } from '../../sidecar/src/config.js';
import { priceChat } from '../../sidecar/src/processors/price-chats.js';
import { insightsReport, type InsightsReport } from '../../sidecar/src/report/insights.js';
import { openStore, type Store } from '../../sidecar/src/store/open-store.js';
import { assertBuilt, cliEnv } from '../reliability/cli.js';
import { storeCli } from './store-cli.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'real');
const scenarioDirs = (dir: string): string[] => existsSync(join(dir, 'expectations.json')) ? [dir]
  : readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).flatMap((e) => scenarioDirs(join(dir, e.name)));
const SCENARIOS = scenarioDirs(FIXTURES);

interface ExpectedSession { sessionId: string; turns: string[]; toolCalls: { outcome: string }[]; tokens: { input: number; output: number; cacheRead: number; cacheCreation: number } }
const sessions = SCENARIOS.flatMap((dir) => (JSON.parse(readFileSync(join(dir, 'expectations.json'), 'utf8')) as { sessions: ExpectedSession[] }).sessions);

/** Every transcript row of the samples (main and subagent files). */
const rowsOf = (dir: string): Record<string, unknown>[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
  e.isDirectory() ? rowsOf(join(dir, e.name)) : e.name.endsWith('.jsonl')
    ? readFileSync(join(dir, e.name), 'utf8').split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>) : []);
const ROWS = SCENARIOS.flatMap((dir) => existsSync(join(dir, 'projects')) ? rowsOf(join(dir, 'projects')) : []);

let store: Store;
let report: InsightsReport;
const home = mkdtempSync(join(tmpdir(), 'ccotel-insights-real-'));
const storeDir = join(home, 'store');
const insight = (pattern: string) => report.insights.find((i) => i.pattern === pattern)!;

beforeAll(async () => {
  assertBuilt();
  // Backfilled by the CLI in a child, which the end-to-end tests' watchdog prints the threads and stacks of should it
  // hang: CI once found this set-up still running after 600 s, with nothing to say where.
  await storeCli(storeDir, () => cliEnv(home, { CLAUDE_CONFIG_DIR: SCENARIOS.join(',') })).ccotel('backfill', '--no-progress');
  store = await openStore(storeDir, { command: 'test', access: 'read' });
  report = await insightsReport(store.client, { database: store.database, timezone: 'UTC' }, { ...DEFAULTS.insights, retryMin: 1, compactionsMin: 1 });
}, 600_000);
afterAll(async () => {
  await store?.close();
});

it(`reads ${SCENARIOS.length} recorded scenarios`, () => {
  expect(SCENARIOS.map((dir) => relative(FIXTURES, dir))).toEqual(expect.arrayContaining(['2.1.332/interrupt', '1.0.128/compaction', '2.1.332-interactive/deny']));
});

it('finds every failing call as a loop of one when a loop is one call, and no error of theirs as not found', () => {
  const errors = sessions.flatMap((s) => s.toolCalls).filter((call) => call.outcome === 'error').length;
  expect(errors).toBeGreaterThan(5);
  expect(insight('retry_loop').count).toBe(errors);
  expect(insight('not_found').details.errors).toBe(errors);
  expect(insight('not_found').count).toBe(0);
});

it('finds the interrupted turns, with what they cost', () => {
  const interrupted = sessions.filter((s) => s.turns.includes('interrupted'));
  // Each interrupted session of the samples is that one turn: its tokens are the session's.
  expect(interrupted.every((s) => s.turns.length === 1)).toBe(true);
  const model = (sessionId: string) => String((ROWS.find((row) => row.sessionId === sessionId && row.type === 'assistant')!.message as { model: string }).model);
  const tokens = interrupted.map((s) => s.tokens.input + s.tokens.output + s.tokens.cacheRead + s.tokens.cacheCreation);
  const cost = interrupted.map((s) => priceChat(model(s.sessionId), { ...s.tokens, cacheCreation1h: 0 }, Date.now()).usd);
  expect(insight('interrupted_work')).toMatchObject({
    count: interrupted.length, sessions: interrupted.length, turns: interrupted.length,
    tokens: tokens.reduce((a, b) => a + b, 0),
  });
  expect(insight('interrupted_work').cost_usd).toBeCloseTo(cost.reduce((a, b) => a + b, 0), 9);
});

it('finds every compaction the transcripts hold, with the context it compacted', () => {
  // A compaction is one however many files repeat it (a resume copies the history).
  const boundaries = new Map(ROWS.filter((row) => row.subtype === 'compact_boundary').map((row) => [`${String(row.sessionId)} ${String(row.timestamp)}`, row]));
  expect(boundaries.size).toBeGreaterThan(3);
  expect(insight('compaction_churn').count).toBe(boundaries.size);
  expect(insight('compaction_churn').details.tokens_before)
    .toBe([...boundaries.values()].reduce((sum, row) => sum + Number((row.compactMetadata as { preTokens?: number } | undefined)?.preTokens ?? 0), 0));
});
