// A store made before this version of the facts: its views are made again and the facts of the raw rows still
// there rebuilt with the columns added since; a store at this version is left as it is.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openTempChdb, rows, runAll, type TempChdb } from '../../../schemas/chdb-testing.js';
import { otelTablesDdl } from '../../../schemas/clickhouse.js';
import { chTime } from '../../../schemas/corpus.js';
import { FACTS_VERSION, USAGE_TABLES, usageTablesDdl } from '../../../schemas/usage.js';
import { ensureFacts } from './facts.js';

let store: TempChdb;

beforeAll(async () => {
  store = openTempChdb();
  await runAll(store.client, otelTablesDdl({ rawTtlDays: 30 }));
  // The first version: views without a version, no Name column.
  await runAll(store.client, usageTablesDdl().map((statement) => statement.replace(/\nCOMMENT '[^']*'$/, '')));
  await store.client.command({ query: `ALTER TABLE ${USAGE_TABLES.events} DROP COLUMN Name` });
  const block = { Timestamp: chTime(Date.now() - 86_400_000), EventName: 'ccotel.permission.blocked',
    LogAttributes: { 'session.id': 's1', 'ccotel.record.id': 'b1', 'gen_ai.tool.name': 'Bash', source: 'config' } };
  await store.client.command({ query: `INSERT INTO otel_logs FORMAT JSONEachRow\n${JSON.stringify(block)}` });
});
afterAll(async () => {
  await store?.close();
});

it('upgrades views of an older version and rebuilds the facts the raw rows still hold', async () => {
  await ensureFacts(store.client);
  expect(await rows(store.client, `SELECT RecordId, Name, Source FROM ${USAGE_TABLES.events} FINAL`)).toEqual([{ RecordId: 'b1', Name: 'Bash', Source: 'config' }]);
  expect(await rows(store.client, `SELECT name, comment FROM system.tables WHERE database = 'default' AND name LIKE 'ccotel%' AND engine = 'MaterializedView' ORDER BY name`)).toEqual([
    { name: USAGE_TABLES.eventsMv, comment: FACTS_VERSION },
    { name: USAGE_TABLES.eventFeedMv, comment: FACTS_VERSION },
    { name: USAGE_TABLES.spansMv, comment: FACTS_VERSION },
    { name: USAGE_TABLES.spanFeedMv, comment: FACTS_VERSION },
  ]);
  const parts = await rows(store.client, `SELECT count() AS n FROM system.parts WHERE table = '${USAGE_TABLES.events}' AND active`);
  await ensureFacts(store.client);
  expect(await rows(store.client, `SELECT count() AS n FROM system.parts WHERE table = '${USAGE_TABLES.events}' AND active`)).toEqual(parts);
});

it('rebuilds a facts 4 store\'s tool calls with what report insights reads (facts 5), from the raw rows still there', async () => {
  // A database of its own in the same store (one embedded store per process).
  const database = 'facts4';
  const client = store.client;
  await runAll(client, otelTablesDdl({ rawTtlDays: 30, database }));
  await runAll(client, usageTablesDdl({ database }).map((statement) => statement.replace(`COMMENT '${FACTS_VERSION}'`, "COMMENT 'ccotel facts 4'")));
  const added = ['TraceId', 'InputKey', 'Rule', 'FileHash', 'ErrorClass', 'Asked', 'WaitedMs', 'ResultLength'];
  await client.command({ query: `ALTER TABLE ${database}.${USAGE_TABLES.spans} ${added.map((column) => `DROP COLUMN ${column}`).join(', ')}` });
  await client.command({ query: `ALTER TABLE ${database}.${USAGE_TABLES.events} DROP COLUMN PreTokens, DROP COLUMN TraceId` });
  const call = { Timestamp: chTime(Date.now() - 86_400_000), TraceId: 't1', SpanId: 'c1', SpanName: 'execute_tool Read', Duration: 1_000_000,
    SpanAttributes: { 'session.id': 's1', 'gen_ai.tool.name': 'Read', 'ccotel.tool.outcome': 'error', 'ccotel.tool.input': '{"file_path":"/src/a.ts"}', 'ccotel.tool.output': 'File does not exist.' } };
  await client.command({ query: `INSERT INTO ${database}.otel_traces FORMAT JSONEachRow\n${JSON.stringify(call)}` });
  await ensureFacts(client, { database });
  expect(await rows(client, `SELECT TraceId, Rule, ErrorClass, FileHash != 0 AS named, InputKey != 0 AS keyed FROM ${database}.${USAGE_TABLES.spans} FINAL`))
    .toEqual([{ TraceId: 't1', Rule: 'Read', ErrorClass: 'not_found', named: 1, keyed: 1 }]);
});
