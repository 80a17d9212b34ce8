import { afterAll, beforeAll, expect, it } from 'vitest';
import { openTempChdb, rows, runAll, type TempChdb } from './chdb-testing.js';
import { SUMMARY_TABLES, summaryTablesDdl } from './summaries.js';

let store: TempChdb;
beforeAll(() => {
  store = openTempChdb();
});
afterAll(async () => {
  await store?.close();
});

it('creates both summary tables with no TTL by default, idempotently, and keeps the newest version', async () => {
  await store.client.command({ query: 'CREATE DATABASE s' });
  await runAll(store.client, summaryTablesDdl({ database: 's' }));
  await runAll(store.client, summaryTablesDdl({ database: 's' }));
  const tables = await rows<{ name: string; engine_full: string }>(store.client,
    `SELECT name, engine_full FROM system.tables WHERE database = 's' ORDER BY name`);
  expect(tables.map((t) => t.name)).toEqual([SUMMARY_TABLES.days, SUMMARY_TABLES.summaries]);
  expect(tables.map((t) => t.engine_full).join('\n')).not.toContain('TTL');

  const version = (turns: number, updatedAt: string) => ({ SessionId: 's1', Turns: turns, LastSeen: updatedAt, UpdatedAt: updatedAt });
  await store.client.insert({ table: `s.${SUMMARY_TABLES.summaries}`, format: 'JSONEachRow',
    values: [version(2, '2026-11-01 00:00:00.000'), version(5, '2026-11-02 00:00:00.000')] });
  expect(await rows(store.client, `SELECT SessionId, Turns FROM s.${SUMMARY_TABLES.summaries} FINAL`))
    .toEqual([{ SessionId: 's1', Turns: 5 }]);
});

it('has a configurable TTL, 0 meaning kept forever', () => {
  expect(summaryTablesDdl({ summaryTtlDays: 30 }).join('\n')).toContain('toIntervalDay(30)');
  expect(summaryTablesDdl({ summaryTtlDays: 0 }).join('\n')).not.toContain('TTL');
  expect(() => summaryTablesDdl({ summaryTtlDays: -3 })).toThrow(/summaryTtlDays/);
});

it('has a cluster variant: replicated local tables behind Distributed ones sharded by session', async () => {
  const ddl = summaryTablesDdl({ cluster: 'prod', database: 'otel' });
  expect(ddl).toHaveLength(4);
  for (const statement of ddl) {
    expect(statement.split('\n')[0]).toContain('ON CLUSTER `prod`');
    await store.client.query({ query: `EXPLAIN AST ${statement}` });
  }
  expect(ddl[0]).toContain("ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', UpdatedAt)");
  expect(ddl[1]).toContain(`Distributed('prod', 'otel', '${SUMMARY_TABLES.days}_local', cityHash64(SessionId))`);
});
