// Sections answered by a shared query (report/queries.ts SHARED_QUERIES) give exactly what each section's own
// SQL gives: the same rows, fields and order, repeats counted once (a record without an id is known by its content).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTempChdb, rows, runAll, type TempChdb } from '../../../schemas/chdb-testing.js';
import { otelTablesDdl } from '../../../schemas/clickhouse.js';
import { chTime } from '../../../schemas/corpus.js';
import { USAGE_TABLES, usageTablesDdl } from '../../../schemas/usage.js';
import { buildReport } from './overview.js';
import { withRange } from '../ui/data.js';

const T0 = Date.UTC(2026, 9, 5, 12);
const events = (name: string) => `(SELECT * FROM ${USAGE_TABLES.events} FINAL WHERE EventName = '${name}')`;
const facts = (kind = 'chat') => `(SELECT * FROM ${USAGE_TABLES.spans} FINAL WHERE Kind = '${kind}')`;
/** What each section asked on its own before. */
const OWN_SQL = {
  overview: `SELECT uniqExact(SessionId) AS sessions, countIf(Kind = 'turn') AS turns, countIf(Kind = 'tool') AS tool_calls,
      countIf(Kind = 'chat') AS api_responses, round(sum(CostUsd), 6) AS cost_usd,
      if(count() = 0, NULL, min(Timestamp)) AS first_event, if(count() = 0, NULL, max(Timestamp)) AS last_event
    FROM ${USAGE_TABLES.spans} FINAL`,
  permissionBlocks: `SELECT Name AS tool, Source AS source, count() AS blocks
    FROM ${events('ccotel.permission.blocked')} GROUP BY tool, source ORDER BY blocks DESC, tool, source`,
  skipped: `SELECT Name AS source, Reason AS reason, sum(Count) AS lines, uniqExact(FileHash) AS files
    FROM ${events('ccotel.record.skipped')} GROUP BY source, reason ORDER BY lines DESC, reason`,
  tokens: `SELECT Name AS model, sum(InputTokens) AS input, sum(OutputTokens) AS output, sum(CacheReadTokens) AS cache_read,
      sum(CacheCreationTokens) AS cache_creation FROM ${facts()} GROUP BY model ORDER BY model`,
  cost: `SELECT Name AS model, count() AS api_responses, sum(InputTokens + OutputTokens + CacheReadTokens + CacheCreationTokens) AS tokens,
      round(sum(CostUsd), 6) AS cost_usd, max(UnknownModel) = 1 AS unknown_model FROM ${facts()} GROUP BY model ORDER BY cost_usd DESC, model`,
  turns: `SELECT Outcome AS outcome, count() AS turns FROM ${facts('turn')} GROUP BY outcome ORDER BY turns DESC, outcome`,
  tools: `SELECT Name AS tool, count() AS calls, countIf(Outcome = 'success') AS success, countIf(Outcome = 'error') AS error,
      countIf(Outcome = 'denied') AS denied, countIf(Outcome = 'interrupted') AS interrupted, countIf(Outcome = 'unanswered') AS unanswered,
      round(success / calls, 3) AS success_rate FROM ${facts('tool')} GROUP BY tool ORDER BY calls DESC, tool`,
};

describe('report sections answered by a shared query', () => {
  let store: TempChdb;

  beforeAll(async () => {
    store = openTempChdb();
    await runAll(store.client, [...otelTablesDdl({ database: 'default', rawTtlDays: 0 }), ...usageTablesDdl({ database: 'default' })]);
    const log = (index: number, event: string, attributes: Record<string, string>) => ({ Timestamp: chTime(T0 + index * 1000), EventName: event, LogAttributes: attributes });
    const blocked = (index: number, tool: string, source: string, id = `b${index}`) =>
      log(index, 'ccotel.permission.blocked', { 'ccotel.record.id': id, 'session.id': 's1', 'gen_ai.tool.name': tool, source });
    const skipped = (index: number, reason: string, file: string, count?: string, id = `k${index}`) =>
      log(index, 'ccotel.record.skipped', { 'ccotel.record.id': id, 'ccotel.source': 'transcript', reason, 'ccotel.source.file': file, ...(count ? { 'ccotel.record.count': count } : {}) });
    const values = [
      blocked(1, 'Bash', 'rule'), blocked(2, 'Bash', 'rule'), blocked(2, 'Bash', 'rule', 'b2'), // a repeat
      blocked(3, 'Edit', 'user'), blocked(4, 'Write', 'rule'), blocked(5, 'Bash', 'user'), blocked(6, 'Write', 'hook', ''), blocked(7, 'Write', 'hook', ''),
      skipped(8, 'malformed_json', '/a.jsonl'), skipped(9, 'malformed_json', '/b.jsonl', '12'), skipped(10, 'unknown_type', '/a.jsonl'),
      skipped(11, 'not_object', '/c.jsonl', '13'), skipped(12, 'partial_last_line', '/c.jsonl', undefined, ''),
    ];
    await store.client.insert({ table: 'otel_logs', values, format: 'JSONEachRow' });
    const chat = (id: string, model: string, input: number, costUsd: number, unknown = 0) => ({
      SpanId: id, Timestamp: chTime(T0), EndTime: chTime(T0 + 1000), SessionId: 's1', Kind: 'chat', Name: model, InputTokens: input, OutputTokens: 3, CacheReadTokens: 5, CostUsd: costUsd, UnknownModel: unknown,
    });
    const span = (id: string, kind: string, name: string, outcome: string) => ({ SpanId: id, Timestamp: chTime(T0), EndTime: chTime(T0 + 1000), SessionId: 's1', Kind: kind, Name: name, Outcome: outcome });
    // 1 success in 16 Bash calls: a rate of 0.0625, where rounding ties differ (ClickHouse rounds a float's tie to even).
    const tools = [...Array.from({ length: 16 }, (_, i) => span(`t${i}`, 'tool', 'Bash', i === 0 ? 'success' : i < 10 ? 'error' : 'denied')),
      span('t20', 'tool', 'Read', 'success'), span('t21', 'tool', 'Read', 'interrupted'), span('t22', 'tool', 'Edit', 'unanswered'), span('t23', 'tool', 'Edit', '')];
    const turns = ['completed', 'completed', 'interrupted', 'error', 'error', 'unanswered'].map((outcome, i) => span(`u${i}`, 'turn', '', outcome));
    const chats = [chat('c1', 'claude-opus-5-5', 100, 0.5), chat('c2', 'claude-opus-5-5', 200, 1.25), chat('c3', 'claude-haiku-4-5', 50, 0.1), chat('c4', 'claude-future-9', 70, 0, 1), chat('c5', 'claude-sonnet-4-5', 10, 0.1), ...tools, ...turns];
    // c2 again: a repeat replaces itself.
    for (const batch of [chats, [chats[1]]]) await store.client.insert({ table: USAGE_TABLES.spans, values: batch, format: 'JSONEachRow' });
  });

  afterAll(async () => {
    await store?.close();
  });

  it('equals what each section asked on its own', async () => {
    const report = await buildReport(store.client);
    for (const [section, sql] of Object.entries(OWN_SQL)) expect(report[section as keyof typeof OWN_SQL], section).toEqual(await rows(store.client, sql));
    expect(report.permissionBlocks).toEqual([
      { tool: 'Bash', source: 'rule', blocks: 2 }, { tool: 'Write', source: 'hook', blocks: 2 }, { tool: 'Bash', source: 'user', blocks: 1 },
      { tool: 'Edit', source: 'user', blocks: 1 }, { tool: 'Write', source: 'rule', blocks: 1 },
    ]);
    expect(report.skipped.map((row) => [row.reason, row.lines, row.files])).toEqual([['malformed_json', 13, 2], ['not_object', 13, 1], ['partial_last_line', 1, 1], ['unknown_type', 1, 1]]);
    expect(report.cost.map((row) => row.model)).toEqual(['claude-opus-5-5', 'claude-haiku-4-5', 'claude-sonnet-4-5', 'claude-future-9']);
    expect(report.tools[0]).toMatchObject({ tool: 'Bash', calls: 16, success: 1, error: 9, denied: 6, success_rate: 0.062 });
    expect(report.turns.map((row) => [row.outcome, row.turns])).toEqual([['completed', 2], ['error', 2], ['interrupted', 1], ['unanswered', 1]]);
  });

  it('answers the overview with its one row when nothing is in range', async () => {
    const nothing = withRange(store.client, { fromMs: 0, toMs: 1 });
    const report = await buildReport(nothing);
    expect(report.overview).toEqual(await rows(nothing, OWN_SQL.overview));
    expect(report.overview[0]).toMatchObject({ sessions: 0, turns: 0, cost_usd: 0 });
  });
});
