import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otelTablesDdl, renderContext } from '../../../schemas/clickhouse.js';
import { openTempChdb, rows, runAll, type TempChdb } from '../../../schemas/chdb-testing.js';
import { corpusRows, expectedSummary, generateSessions, insertCorpus, type SessionSpec } from '../../../schemas/corpus.js';
import { ensureSummaryTables, formatRetentionReport, runRetention, type RetentionReport } from './run-retention.js';
import { refreshSummaries } from './summaries.js';

const DAY = 86_400_000;
const NOW = Date.now();

/** A session that ran 20 days ago and was resumed today: its old day expires, its summary must not shrink. */
const longSession: SessionSpec = {
  id: 'sess-long', host: 'build-1', user: 'alice', project: '/work/long', startMs: NOW - 20 * DAY,
  restarts: [{ atMs: 20 * DAY - 2 * 3_600_000, source: 'resume' }],
  turns: [
    { atMs: 60_000, durationMs: 9_000, outcome: 'completed',
      chats: [{ model: 'claude-opus-4-5', input: 10, output: 20, cacheRead: 30, cacheCreation: 40 }],
      tools: [{ name: 'Bash', outcome: 'success', command: 'npm test', durationMs: 500 },
        { name: 'Write', outcome: 'denied', blockedBy: 'rule', durationMs: 10 }] },
    { atMs: 20 * DAY - 3_600_000, durationMs: 4_000, outcome: 'interrupted',
      chats: [{ model: 'claude-opus-4-5', input: 1, output: 2, cacheRead: 3, cacheCreation: 4 },
        { model: 'claude-haiku-4-5', input: 5, output: 6, cacheRead: 7, cacheCreation: 8 }],
      tools: [{ name: 'Read', outcome: 'error', durationMs: 100 }] },
  ],
  failureModes: [{ atMs: 20 * DAY - 1_800_000, mode: 'replay_divergence' }],
  end: { atMs: 20 * DAY - 600_000, reason: 'abandoned' },
};

const specs = [longSession, ...generateSessions(25, NOW, 30)];
let store: TempChdb;
let first: RetentionReport;
let second: RetentionReport;

const withoutZeros = (map: Record<string, number | string>) =>
  Object.fromEntries(Object.entries(map).filter(([, v]) => Number(v) !== 0).map(([k, v]) => [k, Number(v)]));

const tableCounts = async () =>
  rows<{ table: string; n: string }>(store.client, `SELECT * FROM (
    SELECT 'traces' AS table, toString(count()) AS n FROM otel.otel_traces UNION ALL
    SELECT 'logs', toString(count()) FROM otel.otel_logs UNION ALL
    SELECT 'days', toString(count()) FROM otel.ccotel_session_days UNION ALL
    SELECT 'summaries', toString(count()) FROM otel.ccotel_session_summaries) ORDER BY table`);

beforeAll(async () => {
  store = openTempChdb();
  // Created without a TTL so rows older than 14 days can be loaded; the job must then apply the TTL.
  await runAll(store.client, otelTablesDdl({ database: 'otel', rawTtlDays: 0 }));
  await insertCorpus(store.client, 'otel', corpusRows(specs));
  first = await runRetention(store.client, { database: 'otel', rawTtlDays: 14, nowMs: NOW });
});

afterAll(async () => {
  await store?.close();
});

describe('runRetention', () => {
  it('applies the 14-day TTL it finds missing on every raw table', () => {
    const raw = first.ttl.filter((t) => t.table.startsWith('otel_'));
    expect(raw).toHaveLength(8);
    for (const t of raw) {
      expect(t.status, t.table).toBe('applied');
      expect(t.found).toBe('');
      expect(t.expected).toMatch(/^TTL toDateTime\(\w+\) \+ toIntervalDay\(14\)$/);
    }
    expect(first.ttl.filter((t) => t.table.startsWith('ccotel_')).map((t) => t.status)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
  });

  it('deletes raw rows whose day is past the TTL and keeps the rest', async () => {
    const [old] = await rows<{ n: string }>(store.client,
      `SELECT toString(count()) AS n FROM otel.otel_traces WHERE Timestamp < now64() - INTERVAL 15 DAY`);
    expect(old.n).toBe('0');
    const recentSpecs = specs.filter((s) => s.startMs > NOW - 10 * DAY);
    expect(recentSpecs.length).toBeGreaterThan(3);
    const [kept] = await rows<{ n: string }>(store.client,
      `SELECT toString(uniqExact(SpanAttributes['session.id'])) AS n FROM otel.otel_traces
       WHERE SpanAttributes['session.id'] IN (${recentSpecs.map((s) => `'${s.id}'`).join(',')})`);
    expect(Number(kept.n)).toBe(recentSpecs.length);
    expect(first.expired.find((e) => e.table === 'otel_traces')?.rows).toBeGreaterThan(0);
  });

  it('keeps one summary per session with counts over distinct ids, including expired sessions', async () => {
    const summaries = await rows<Record<string, unknown>>(store.client,
      `SELECT * EXCEPT (ContentHash, UpdatedAt) FROM otel.ccotel_session_summaries FINAL ORDER BY SessionId`);
    expect(summaries).toHaveLength(specs.length);
    expect(first.summaries.sessions).toBe(specs.length);
    // The rows were stored before the views that keep their facts existed: the job repaired them.
    expect(first.summaries.factsRepaired).toBeGreaterThan(0);
    for (const spec of specs) {
      const row = summaries.find((r) => r.SessionId === spec.id);
      const want = expectedSummary(spec);
      const got = Object.fromEntries(Object.keys(want).map((k) => {
        const value = row?.[k];
        return [k, value !== null && typeof value === 'object' ? withoutZeros(value as Record<string, number>) : value];
      }));
      const wantNormalised = Object.fromEntries(Object.entries(want).map(([k, v]) =>
        [k, typeof v === 'object' ? withoutZeros(v) : v]));
      expect(got, spec.id).toEqual(wantNormalised);
      expect(row?.FirstSeen, spec.id).toBe(new Date(spec.startMs).toISOString().slice(0, 23).replace('T', ' '));
    }
  });

  it('repairs no facts when told the store needs none (a store a backfill has just made)', async () => {
    // Raw rows stored before the views that keep their facts existed, in a database of their own.
    await runAll(store.client, otelTablesDdl({ database: 'factless', rawTtlDays: 0 }));
    await insertCorpus(store.client, 'factless', corpusRows(specs.slice(0, 3)));
    await ensureSummaryTables(store.client, { database: 'factless' });
    const ctx = renderContext({ database: 'factless' });
    expect((await refreshSummaries(store.client, ctx, NOW, { repairFacts: false })).factsRepaired).toBe(0);
    expect(await rows(store.client, 'SELECT toString(count()) AS n FROM factless.ccotel_span_facts')).toEqual([{ n: '0' }]);
    expect((await refreshSummaries(store.client, ctx, NOW + 1)).factsRepaired).toBeGreaterThan(0);
  });

  it('changes nothing when run again', async () => {
    const before = await tableCounts();
    second = await runRetention(store.client, { database: 'otel', rawTtlDays: 14, nowMs: NOW + 1 });
    expect(second.ttl.every((t) => t.status === 'ok')).toBe(true);
    expect(first.summaries.insightSlots).toBeGreaterThan(0);
    expect(second.summaries).toEqual({ factsRepaired: 0, sessionDays: 0, sessions: 0, insightSlots: 0 });
    expect(second.expired.every((e) => e.rows === 0)).toBe(true);
    expect(await tableCounts()).toEqual(before);
    expect(formatRetentionReport(second)).toContain('expired      nothing');
  });

  it('refreshes a summary when a kept day gets new data, without losing the expired days', async () => {
    // The whole session arrives again (repeats, the old day's rows past the raw TTL) plus one new turn today.
    const newTurn = { ...longSession.turns[1], atMs: 20 * DAY - 1_000 };
    const late = corpusRows([{ ...longSession, turns: [...longSession.turns, newTurn] }]);
    await insertCorpus(store.client, 'otel', { traces: late.traces, logs: [] });
    const report = await runRetention(store.client, { database: 'otel', rawTtlDays: 14, nowMs: NOW + 2 });
    expect(report.summaries.sessions).toBe(1);
    const [row] = await rows<{ Turns: number; Resumes: number }>(store.client,
      `SELECT Turns, Resumes FROM otel.ccotel_session_summaries FINAL WHERE SessionId = 'sess-long'`);
    expect(row).toEqual({ Turns: 3, Resumes: 1 });
  });

  it('reports drift without changing anything when only checking', async () => {
    const report = await runRetention(store.client, { database: 'otel', rawTtlDays: 7, nowMs: NOW + 3, checkOnly: true });
    expect(report.drift).toBe(true);
    expect(report.ttl.filter((t) => t.status === 'drift')).toHaveLength(8);
    const [logs] = await rows<{ engine_full: string }>(store.client,
      `SELECT engine_full FROM system.tables WHERE database = 'otel' AND name = 'otel_logs'`);
    expect(logs.engine_full).toContain('toIntervalDay(14)');
    expect(formatRetentionReport(report)).toMatch(/ttl drift +otel_logs: TTL toDateTime\(Timestamp\) \+ toIntervalDay\(14\) -> TTL toDateTime\(Timestamp\) \+ toIntervalDay\(7\)/);
  });

  it('drops the partitions of expired days that merges left empty, and only those', async () => {
    // A day 30 days old, past the 14-day TTL: a merge applying the TTL leaves each of its partitions an empty part.
    const old = corpusRows(generateSessions(3, NOW - 30 * DAY, 1));
    await insertCorpus(store.client, 'otel', old);
    await store.client.command({ query: 'OPTIMIZE TABLE otel.otel_logs FINAL' });
    const emptyParts = () => rows<{ table: string; n: string }>(store.client,
      `SELECT table, toString(count()) AS n FROM system.parts WHERE database = 'otel' AND active AND rows = 0 GROUP BY table ORDER BY table`);
    expect((await emptyParts()).find((row) => row.table === 'otel_logs')).toBeDefined();
    const inWindow = () => rows(store.client, `SELECT toString(count()) AS n FROM otel.otel_logs WHERE Timestamp >= now64() - INTERVAL 13 DAY`);
    const [before, windowBefore] = [await tableCounts(), await inWindow()];
    const report = await runRetention(store.client, { database: 'otel', rawTtlDays: 14, nowMs: NOW + 4 });
    expect(await emptyParts()).toEqual([]);
    expect(report.expired.find((e) => e.table === 'otel_logs')?.emptyPartitions).toBeGreaterThan(0);
    expect(formatRetentionReport(report)).toMatch(/removed +otel_logs: \d+ partitions of expired days left empty by merges/);
    // The summaries kept the old sessions; no row of the raw window went.
    expect(await inWindow()).toEqual(windowBefore);
    expect(Number(windowBefore[0].n)).toBeGreaterThan(0);
    const after = await tableCounts();
    expect(after.find((row) => row.table === 'summaries')!.n).toBe(String(Number(before.find((row) => row.table === 'summaries')!.n) + 3));
  });
});

