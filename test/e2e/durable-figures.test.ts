// Every figure from one durable source: history of 2025 and of two days ago read with default settings, then every
// table merged (OPTIMIZE … FINAL) and a retention run with the clock moved 40 days on, so that the raw TTL has
// dropped all detail. `report --json`, `report daily|session|insights --json` and the web view's data (ui/data.ts, what its
// JSON API serves) are the same before and after, and the web view's tiles, per-day series and session table agree
// with each other and with `report --json`.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import type { InsightsReport } from '../../sidecar/src/report/insights.js';
import type { Report } from '../../sidecar/src/report/overview.js';
import type { UsageReport } from '../../sidecar/src/report/usage.js';
import { runRetention } from '../../sidecar/src/retention/run-retention.js';
import { openStore } from '../../sidecar/src/store/open-store.js';
import { UiData } from '../../sidecar/src/ui/data.js';
import { assertBuilt, cliEnv } from '../reliability/cli.js';
import { generateCorpus } from '../generator/corpus.js';
import { storeCli } from './store-cli.js';

const DAY = 86_400_000;
const home = mkdtempSync(join(tmpdir(), 'ccotel-durable-'));
const storeDir = join(home, 'store');
let env: NodeJS.ProcessEnv;

async function figures() {
  const { ccotel } = storeCli(storeDir, () => env);
  const report = JSON.parse(await ccotel('report', '--json')) as Report;
  const daily = JSON.parse(await ccotel('report', 'daily', '--json', '--timezone', 'UTC')) as UsageReport;
  const sessions = JSON.parse(await ccotel('report', 'session', '--json', '--timezone', 'UTC')) as UsageReport;
  const insights = JSON.parse(await ccotel('report', 'insights', '--json', '--timezone', 'UTC')) as InsightsReport;
  const { linesSkipped } = JSON.parse(await ccotel('status', '--json')) as { linesSkipped: Record<string, number> };
  const store = await openStore(storeDir, { command: 'test', access: 'read' });
  try {
    const data = new UiData(store.client);
    const { range: _range, ...overview } = await data.overview({});
    return { report, daily, sessions, insights, linesSkipped, ui: { overview, sessions: await data.sessions({}), insights: await data.insights({}) } };
  } finally {
    await store.close();
  }
}

/**
 * What only `run` tells (a backfill reads finished history): a session state change and a detection, for a session
 * of each corpus, as the sidecar writes them.
 */
async function plantLiveRecords(): Promise<void> {
  const store = await openStore(storeDir, { command: 'test', access: 'write' });
  try {
    const sessions = await (await store.client.query({
      query: `SELECT SessionId AS id, toUnixTimestamp64Milli(max(EndTime)) AS last FROM ccotel_span_facts GROUP BY id ORDER BY last`,
      format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
    })).json<{ id: string; last: number }>();
    const [oldest, newest] = [sessions[0], sessions[sessions.length - 1]];
    const record = (id: string, session: { id: string; last: number }, eventName: string, attributes: Record<string, string>) => ({
      Timestamp: new Date(session.last + 60_000).toISOString().replace('T', ' ').replace('Z', ''), EventName: eventName,
      LogAttributes: { 'ccotel.record.id': id, 'session.id': session.id, ...attributes },
    });
    const rows = [
      record('state-old', oldest, 'ccotel.session.state_changed', { state: 'abandoned', previous_state: 'active', reason: 'idle' }),
      record('state-new', newest, 'ccotel.session.state_changed', { state: 'ended', previous_state: 'active', reason: 'exit' }),
      record('mode-old', oldest, 'ccotel.failure_mode.detected', { mode: 'abandoned_session' }),
    ];
    await store.client.command({ query: `INSERT INTO otel_logs FORMAT JSONEachRow\n${rows.map((row) => JSON.stringify(row)).join('\n')}` });
  } finally {
    await store.close();
  }
}

let before: Awaited<ReturnType<typeof figures>>;
let after: Awaited<ReturnType<typeof figures>>;

beforeAll(async () => {
  assertBuilt();
  await generateCorpus({ seed: 41, root: join(home, 'old'), sessions: 6, startMs: Date.UTC(2025, 4, 5, 9), hostLayout: 'single-root' });
  await generateCorpus({ seed: 42, root: join(home, 'recent'), sessions: 6, startMs: Date.now() - 2 * DAY, hostLayout: 'single-root' });
  env = { ...cliEnv(home, { TZ: 'UTC' }), CLAUDE_CONFIG_DIR: `${join(home, 'old')},${join(home, 'recent')}` };
  delete env.CCOTEL_RAW_TTL_DAYS; // default settings: detail for 30 days
  await storeCli(storeDir, () => env).ccotel('backfill', '--no-progress');
  await plantLiveRecords();
  before = await figures();

  const store = await openStore(storeDir, { command: 'test', access: 'write' });
  try {
    const tables = await (await store.client.query({
      query: `SELECT name FROM system.tables WHERE database = 'default' AND engine LIKE '%MergeTree'`, format: 'JSONEachRow',
    })).json<{ name: string }>();
    for (const { name } of tables) await store.client.command({ query: `OPTIMIZE TABLE default.${name} FINAL` });
    await runRetention(store.client, { nowMs: Date.now() + 40 * DAY });
    const [{ spans }] = await (await store.client.query({ query: 'SELECT count() AS spans FROM otel_traces', format: 'JSONEachRow' })).json<{ spans: string }>();
    expect(Number(spans), 'raw spans left after the moved clock').toBe(0);
  } finally {
    await store.close();
  }
  after = await figures();
}, 600_000);

it('holds figures of every kind, also those only raw rows held before: blocks, states, skipped input', () => {
  const { report } = before;
  for (const section of ['overview', 'turns', 'tools', 'permissionBlocks', 'sessionStates', 'failureModes', 'tokens', 'cost', 'skipped'] as const) {
    expect(report[section].length, section).toBeGreaterThan(0);
  }
  expect(before.report.sessionStates.map((row) => row.state).sort()).toEqual(['abandoned', 'ended']);
  expect(before.daily.rows[0].period.startsWith('2025-')).toBe(true);
});

it('gives every figure the same after merges and a TTL that has passed', () => {
  expect(after.report).toEqual(before.report);
  // `status` counts the skipped input the store holds, from the summaries too.
  expect(Object.keys(before.linesSkipped).length).toBeGreaterThan(0);
  expect(after.linesSkipped).toEqual(before.linesSkipped);
  expect(after.daily).toEqual(before.daily);
  expect(after.sessions).toEqual(before.sessions);
  expect(before.insights.insights.filter((insight) => insight.count > 0).length).toBeGreaterThan(2);
  expect(after.insights).toEqual(before.insights);
  expect(after.ui).toEqual(before.ui);
});

it("agrees in the web view: tiles are `report --json`, the per-day series and the session table sum to them", () => {
  const { report, daily, sessions, ui } = after;
  expect(ui.overview.report).toEqual(report);
  expect(ui.insights).toEqual(after.insights);
  const [overview] = report.overview as { sessions: number; turns: number; tool_calls: number; cost_usd: number }[];
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
  const days = ui.overview.days;
  expect(sum(days.turns)).toBe(overview.turns);
  expect(sum(days.toolCalls)).toBe(overview.tool_calls);
  expect(sum(days.permissionBlocks)).toBe(sum(report.permissionBlocks.map((row) => Number(row.blocks))));
  expect(sum(days.costUsd)).toBeCloseTo(daily.totals.cost_usd, 6);
  expect(sum(days.inputTokens)).toBe(daily.totals.input_tokens);
  expect(ui.sessions.length).toBe(overview.sessions);
  expect(sum(ui.sessions.map((row) => row.turns))).toBe(overview.turns);
  expect(sum(ui.sessions.map((row) => row.tool_calls))).toBe(overview.tool_calls);
  expect(sum(ui.sessions.map((row) => row.cost_usd))).toBeCloseTo(sessions.totals.cost_usd, 6);
  expect(sessions.totals.sessions).toBe(overview.sessions);
  const states = new Map(report.sessionStates.map((row) => [row.session, row.state]));
  for (const row of ui.sessions) if (states.has(row.session)) expect(row.state, row.session).toBe(states.get(row.session));
});
