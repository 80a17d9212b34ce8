import { afterAll, beforeAll, expect, it } from 'vitest';
import { otelTablesDdl, renderContext } from '../../../schemas/clickhouse.js';
import { openTempChdb, rows, runAll, type TempChdb } from '../../../schemas/chdb-testing.js';
import { corpusRows, insertCorpus, type SessionSpec } from '../../../schemas/corpus.js';
import { INSIGHT_TABLE } from '../../../schemas/insights.js';
import { usageTablesDdl } from '../../../schemas/usage.js';
import { emptyBatch, type Sink, type SpanRecord, type TelemetryBatch } from '../model.js';
import { ensureInsightSlots, refreshInsightSlots } from '../retention/insight-slots.js';
import { InsightRefreshingSink } from './insight-refresh.js';

let store: TempChdb;
const session = (id: string): SessionSpec => ({
  id, host: 'h', user: 'u', project: '/work/p', startMs: Date.UTC(2026, 9, 5, 9), restarts: [], failureModes: [],
  turns: [{ atMs: 1_000, durationMs: 2_000, outcome: 'interrupted', chats: [{ model: 'claude-sonnet-4-5', input: 1, output: 2, cacheRead: 3, cacheCreation: 4 }], tools: [] }],
});
/** A batch naming `sessions`: what the refresh reads of it (the facts themselves are in the store already). */
const batchOf = (...sessions: string[]): TelemetryBatch => ({
  ...emptyBatch(),
  spans: sessions.map((id) => ({ attributes: { 'session.id': id } }) as unknown as SpanRecord),
});
const slotSessions = async () => (await rows<{ SessionId: string }>(store.client, `SELECT DISTINCT SessionId FROM ${INSIGHT_TABLE} FINAL ORDER BY SessionId`)).map((row) => row.SessionId);

beforeAll(async () => {
  store = openTempChdb('ccotel-insight-refresh-');
  await runAll(store.client, [...otelTablesDdl(), ...usageTablesDdl()]);
  await insertCorpus(store.client, 'default', corpusRows([session('sess-a'), session('sess-b')]));
});
afterAll(async () => {
  await store?.close();
});

it('hands every batch to the store first, then refreshes the sessions it named; a failed refresh is logged and tried again', async () => {
  const stored: TelemetryBatch[] = [];
  let closed = false;
  const inner: Sink = { name: 'clickhouse', write: async (batch) => void stored.push(batch), close: async () => void (closed = true) };
  const logged: string[] = [];
  const sink = new InsightRefreshingSink(inner, store.client, 'default', (message) => logged.push(message));
  // No slots table yet: the refresh fails, and keeps the session.
  await sink.write(batchOf('sess-a'));
  expect(stored).toHaveLength(1);
  await sink.refresh();
  expect(logged).toEqual([expect.stringMatching(/^insights: could not refresh 1 sessions: .*ccotel_insight_slots/)]);
  // The same failure again is not logged again.
  await sink.refresh();
  expect(logged).toHaveLength(1);
  await ensureInsightSlots(store.client);
  await store.client.command({ query: `TRUNCATE TABLE ${INSIGHT_TABLE}` });
  await sink.write(batchOf('sess-a'));
  await sink.refresh();
  expect(await slotSessions()).toEqual(['sess-a']);
  // Refreshed by close, without waiting for the timer.
  await sink.write(batchOf('sess-b'));
  await sink.close();
  expect(await slotSessions()).toEqual(['sess-a', 'sess-b']);
  expect(closed).toBe(true);
  expect(logged).toHaveLength(1);
});

it('refreshes any number of sessions, a thousand per statement, and counts what it wrote once', async () => {
  await store.client.command({ query: `TRUNCATE TABLE ${INSIGHT_TABLE}` });
  const others = Array.from({ length: 1500 }, (_, n) => `sess-none-${n}`);
  expect(await refreshInsightSlots(store.client, renderContext({}), Date.now(), ['sess-a', ...others, 'sess-b'])).toBe(2);
  expect(await slotSessions()).toEqual(['sess-a', 'sess-b']);
});
