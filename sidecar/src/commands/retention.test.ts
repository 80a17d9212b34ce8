import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { INSIGHT_TABLE } from '../../../schemas/insights.js';
import { corpusRows, insertCorpus, type SessionSpec } from '../../../schemas/corpus.js';
import { ttlOf } from '../retention/ttl.js';
import { openStore } from '../store/open-store.js';
import { retentionCommand } from './retention.js';

let home: string;
const saved = { HOME: process.env.HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME, XDG_DATA_HOME: process.env.XDG_DATA_HOME };

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'ccotel-retention-cmd-'));
  Object.assign(process.env, { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_DATA_HOME: join(home, '.local/share') });
  // Only run and backfill make a store; retention works on one they made.
  await (await openStore(join(home, 'store'), { command: 'test', access: 'write' })).close();
});
afterAll(() => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  rmSync(home, { recursive: true, force: true });
});

async function run(flags: Parameters<typeof retentionCommand>[0]) {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const report = await retentionCommand({ store: join(home, 'store'), ...flags }, out);
  return { report, text };
}

it('prints what it did, and on --check reports a changed TTL as drift without applying it', async () => {
  const first = await run({});
  expect(first.report.drift).toBe(false);
  expect(first.text).toMatch(/^ttl ok +otel_logs: TTL toDateTime\(Timestamp\) \+ toIntervalDay\(30\)$/m);
  expect(first.text).toMatch(/^ttl ok +ccotel_session_summaries: no TTL$/m);
  expect(first.text).toContain('summaries    0 session-days, 0 sessions, 0 insight slots written');

  const check = await run({ rawTtlDays: '7', check: true });
  expect(check.report.drift).toBe(true);
  expect(check.text).toMatch(/^ttl drift +otel_traces: .*toIntervalDay\(30\) -> .*toIntervalDay\(7\)$/m);

  const applied = await run({ rawTtlDays: '7', json: true });
  expect(JSON.parse(applied.text).ttl.filter((t: { status: string }) => t.status === 'applied')).toHaveLength(8);
  expect((await run({ rawTtlDays: '7' })).text).not.toMatch(/drift|applied/);
});

it('applies a summary TTL set by the user to a fresh store and to an existing one when a writer opens it', async () => {
  const dir = join(home, 'ttl-store');
  const ttls = async (summaryTtlDays: number) => {
    const store = await openStore(dir, { command: 'test', access: 'write', summaryTtlDays });
    try {
      const result = await store.client.query({ query: `SELECT name, engine_full FROM system.tables WHERE database = 'default' AND (name LIKE 'ccotel_%_facts' OR name = '${INSIGHT_TABLE}') ORDER BY name`, format: 'JSONEachRow' });
      return (await result.json<{ name: string; engine_full: string }>()).map((t) => ttlOf(t.engine_full));
    } finally {
      await store.close();
    }
  };
  // ccotel_event_facts, ccotel_insight_slots, ccotel_span_facts.
  expect(await ttls(2000)).toEqual(['TTL toDateTime(Timestamp) + toIntervalDay(2000)', 'TTL Slot + toIntervalDay(2000)', 'TTL toDateTime(Timestamp) + toIntervalDay(2000)']);
  expect(await ttls(0)).toEqual(['', '', '']);
  // retention changes it later, no second backfill needed; the config's setting (env) is its default.
  process.env.CCOTEL_SUMMARY_TTL_DAYS = '900';
  try {
    const report = (await retentionCommand({ store: dir }, new PassThrough())).ttl.filter((t) => t.table.endsWith('_facts') || t.table === INSIGHT_TABLE);
    expect(report.map((t) => [t.status, t.expected])).toEqual([
      ['applied', 'TTL toDateTime(Timestamp) + toIntervalDay(900)'], ['applied', 'TTL toDateTime(Timestamp) + toIntervalDay(900)'], ['applied', 'TTL Slot + toIntervalDay(900)'],
    ]);
  } finally {
    delete process.env.CCOTEL_SUMMARY_TTL_DAYS;
  }
});

it('rejects a TTL that is not a whole number of days', async () => {
  await expect(run({ rawTtlDays: '2w' })).rejects.toThrow(/--raw-ttl-days must be a whole number of days/);
});

it('--insights-only refreshes the insight slots alone: with --recent, only of the sessions with facts from those minutes', async () => {
  const dir = join(home, 'insights-store');
  const now = Date.now();
  const session = (id: string, startMs: number): SessionSpec => ({
    id, host: 'h', user: 'u', project: '/work/p', startMs, restarts: [], failureModes: [],
    turns: [{ atMs: 1_000, durationMs: 2_000, outcome: 'interrupted', chats: [{ model: 'claude-sonnet-4-5', input: 1, output: 2, cacheRead: 3, cacheCreation: 4 }], tools: [] }],
  });
  const store = await openStore(dir, { command: 'test', access: 'write' });
  try {
    // Stored as a Collector gateway stores them: through the views, with no ccotel writer to refresh the slots.
    await insertCorpus(store.client, store.database, corpusRows([session('sess-now', now - 120_000), session('sess-old', now - 3 * 86_400_000)]));
  } finally {
    await store.close();
  }
  const slotsOf = async () => {
    const reader = await openStore(dir, { command: 'test', access: 'read' });
    try {
      const result = await reader.client.query({ query: `SELECT DISTINCT SessionId FROM ${INSIGHT_TABLE} FINAL ORDER BY SessionId`, format: 'JSONEachRow' });
      return (await result.json<{ SessionId: string }>()).map((row) => row.SessionId);
    } finally {
      await reader.close();
    }
  };
  const refresh = (flags: Parameters<typeof retentionCommand>[0]) => run({ store: dir, insightsOnly: true, ...flags });
  expect(await slotsOf()).toEqual([]);
  expect((await refresh({ recent: '60' })).text).toBe('insights     1 insight slots written\n');
  expect(await slotsOf()).toEqual(['sess-now']);
  expect((await refresh({})).report.summaries.insightSlots).toBe(1);
  expect(await slotsOf()).toEqual(['sess-now', 'sess-old']);
  expect((await refresh({})).report.summaries.insightSlots).toBe(0);
  await expect(run({ store: dir, recent: '60' })).rejects.toThrow('--recent goes with --insights-only');
});
