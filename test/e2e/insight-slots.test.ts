// Issue 35, where `report insights` reads: the insight slots (schemas/insights.ts), each session's patterns found over
// its whole history ahead of the report. A loop that spans two days counts in each the calls it made there; `run` keeps
// the slots of the sessions it stores current, so that nothing is left for a refresh once it stops; a store made
// before the slots existed gets them, filled, when a command opens it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { renderContext } from '../../schemas/clickhouse.js';
import { INSIGHT_TABLE } from '../../schemas/insights.js';
import type { InsightsReport } from '../../sidecar/src/report/insights.js';
import { refreshInsightSlots } from '../../sidecar/src/retention/insight-slots.js';
import { openStore } from '../../sidecar/src/store/open-store.js';
import { failing, writeInsightSessions, type PlannedSession } from '../generator/insights.js';
import { assertBuilt, cliEnv, startRun, stopRun, transcriptStatus } from '../reliability/cli.js';
import { storeCli } from './store-cli.js';

const DAY = 86_400_000;
const home = mkdtempSync(join(tmpdir(), 'ccotel-insight-slots-'));
const storeDir = join(home, 'store');
// Turns idle this long are closed by `run`: the live session's interrupted turn is counted soon after it is written.
const env = cliEnv(home, { TZ: 'UTC', CCOTEL_IDLE_MS: '2000' });
const { ccotel } = storeCli(storeDir, () => env);
/** 22:00 UTC: the loop's first two calls on 5 October, its third a day later. */
const START = Date.UTC(2026, 9, 5, 22);
const build = () => failing('cargo build', 'error[E0425]: cannot find value `x` in this scope');
const STRADDLING: PlannedSession[] = [
  { name: 'straddling', cwd: '/work/delta', turns: [{ calls: [build(), build()] }, { gapMs: DAY, calls: [build()] }] },
];
const LIVE: PlannedSession[] = [{ name: 'live', cwd: '/work/delta', turns: [{ calls: [], interrupted: true }] }];
let running: ReturnType<typeof startRun> | undefined;

const insights = async (...args: string[]) => JSON.parse(await ccotel('report', 'insights', '--json', ...args)) as InsightsReport;
const countOf = (report: InsightsReport, pattern: string) => report.insights.find((insight) => insight.pattern === pattern)!.count;

beforeAll(async () => {
  assertBuilt();
  writeInsightSessions(join(home, 'claude'), join(home, 'state', 'spool'), START, STRADDLING);
  await ccotel('backfill', '--no-progress');
}, 300_000);

afterAll(async () => {
  await stopRun(running);
});

it('counts a loop that spans two days in each day by the calls made there: the loop is the session\'s', async () => {
  expect(countOf(await insights(), 'retry_loop')).toBe(3);
  expect(countOf(await insights('--until', '2026-10-05'), 'retry_loop')).toBe(2);
  // One failing call that day, of a loop of three.
  expect(countOf(await insights('--since', '2026-10-06'), 'retry_loop')).toBe(1);
  // In a time zone where the whole loop falls on 6 October.
  expect(countOf(await insights('--since', '2026-10-06', '--timezone', 'Asia/Kathmandu'), 'retry_loop')).toBe(3);
});

it('keeps the slots of the sessions `run` stores current: the interrupted turn is counted while it runs, and nothing is left to refresh', async () => {
  running = startRun(['--store', storeDir], env);
  while ((await transcriptStatus(env, storeDir))?.running !== true) await new Promise((resolve) => setTimeout(resolve, 250));
  expect(countOf(await insights(), 'interrupted_work')).toBe(0);
  writeInsightSessions(join(home, 'claude'), join(home, 'state', 'spool'), START + 3 * DAY, LIVE);
  const deadline = Date.now() + 60_000;
  let interrupted = 0;
  while (interrupted === 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    interrupted = countOf(await insights(), 'interrupted_work');
  }
  expect(interrupted).toBe(1);
  expect(await stopRun(running)).toBe(0);
  running = undefined;
  const store = await openStore(storeDir, { command: 'test', access: 'write' });
  try {
    expect(await refreshInsightSlots(store.client, renderContext({ database: store.database }), Date.now())).toBe(0);
  } finally {
    await store.close();
  }
}, 120_000);

it('makes and fills the slots when a command opens a store made before them', async () => {
  const before = await insights();
  const store = await openStore(storeDir, { command: 'test', access: 'write' });
  await store.client.command({ query: `DROP TABLE ${INSIGHT_TABLE} SYNC` });
  await store.close();
  expect(await insights()).toEqual(before);
  expect(countOf(before, 'retry_loop') + countOf(before, 'interrupted_work')).toBe(4);
});
