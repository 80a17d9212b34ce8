// The time range of the web view: every figure of the report for that range only, and nothing left behind on
// the embedded store's one session (its client turns `clickhouse_settings` into SETs that stay).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otelTablesDdl } from '../../../schemas/clickhouse.js';
import { chTime } from '../../../schemas/corpus.js';
import { USAGE_TABLES, usageTablesDdl } from '../../../schemas/usage.js';
import { openTempChdb, rows, runAll, type TempChdb } from '../../../schemas/chdb-testing.js';
import { buildReport } from '../report/overview.js';
import { usageByProject, usageReport } from '../report/usage.js';
import { withRange } from './data.js';

const DAY = 86_400_000;
const START = Date.UTC(2026, 7, 1);

describe('withRange', () => {
  let chdb: TempChdb;

  beforeAll(async () => {
    chdb = openTempChdb();
    await runAll(chdb.client, [...otelTablesDdl({ database: 'default', rawTtlDays: 0 }), ...usageTablesDdl({ database: 'default' })]);
    // One turn per day for five days, each its own session.
    const values = [0, 1, 2, 3, 4].map(
      (day) => `(fromUnixTimestamp64Milli(${START + day * DAY + 3_600_000}), 'trace${day}', 'span${day}', 'invoke_agent claude-code', map('session.id', 'session${day}', 'ccotel.turn.outcome', 'completed'))`,
    );
    await chdb.client.command({ query: `INSERT INTO otel_traces (Timestamp, TraceId, SpanId, SpanName, SpanAttributes) VALUES ${values.join(', ')}` });
    // And an API response of a dollar in each of those sessions, in the summaries only.
    const chats = [0, 1, 2, 3, 4].map((day) => ({
      SpanId: `chat${day}`, Timestamp: chTime(START + day * DAY + 7_200_000), EndTime: chTime(START + day * DAY + 7_201_000), SessionId: `session${day}`,
      Project: '/src/app', Kind: 'chat', Name: 'claude-opus-5-5', InputTokens: 10, CostUsd: 1,
    }));
    await chdb.client.insert({ table: USAGE_TABLES.spans, values: chats, format: 'JSONEachRow' });
  });

  afterAll(() => chdb?.close());

  it("answers the report's own queries for the range only", async () => {
    const report = await buildReport(withRange(chdb.client, { fromMs: START + DAY, toMs: START + 3 * DAY }));
    expect(report.overview[0]).toMatchObject({ sessions: 2, turns: 2 });
    // The summaries (filled at insert) are limited to the range too.
    const [{ turns }] = await rows<{ turns: string }>(withRange(chdb.client, { toMs: START + DAY }), `SELECT count() AS turns FROM ccotel_span_facts FINAL WHERE Kind = 'turn'`);
    expect(Number(turns)).toBe(1);
    expect(report.turns).toEqual([{ outcome: 'completed', turns: 2 }]);
    const open = await buildReport(withRange(chdb.client, { fromMs: START + 4 * DAY }));
    expect(open.overview[0]).toMatchObject({ sessions: 1, turns: 1 });
  });

  it('limits the usage views, which name their tables with the database, to the range', async () => {
    const client = withRange(chdb.client, { fromMs: START + DAY, toMs: START + 3 * DAY });
    const daily = await usageReport(client, 'daily', { timezone: 'UTC' });
    expect(daily.rows.map((row) => [row.period, row.cost_usd])).toEqual([['2026-08-02', 1], ['2026-08-03', 1]]);
    expect(await usageByProject(client, { timezone: 'UTC' })).toEqual([{ project: '/src/app', sessions: 2, tokens: 20, cost_usd: 2 }]);
  });

  it('leaves later queries on the same store unfiltered', async () => {
    await buildReport(withRange(chdb.client, { fromMs: START + 4 * DAY }));
    const [{ turns }] = await rows<{ turns: string }>(chdb.client, `SELECT count() AS turns FROM otel_traces`);
    expect(Number(turns)).toBe(5);
    expect((await buildReport(chdb.client)).overview[0]).toMatchObject({ sessions: 5, turns: 5 });
  });
});
