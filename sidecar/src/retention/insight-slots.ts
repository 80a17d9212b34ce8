/**
 * Fills what `report insights` reads (schemas/insights.ts): each session's patterns, found over its whole history in
 * the facts (FINAL: a repeat counts once), and the sums the breakdowns need, per 15-minute slot. The patterns' hits
 * are kept whatever the thresholds (retry_loop's and compaction_churn's counts beside them, slow calls from
 * SLOW_TOOL_FLOOR_MS up): a report applies its thresholds to them as it reads. Definitions: docs/REPORT.md "Insights".
 *
 * A session is refreshed whole (its loops and counts span it); a slot whose row is unchanged is not written again.
 * Who refreshes: `backfill` at its end, `ccotel retention`, a store's first open with this table, and `run` for the
 * sessions it writes (sinks/insight-refresh.ts).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { ident, renderContext, type RenderContext } from '../../../schemas/clickhouse.js';
import { INSIGHT_COLUMNS, INSIGHT_TABLE, insightTableDdl, insightTableName } from '../../../schemas/insights.js';
import type { SummarySchemaOptions } from '../../../schemas/summaries.js';
import { usageTableNames } from '../../../schemas/usage.js';
import { SLOW_TOOL_FLOOR_MS, type InsightPattern } from '../report/insight-types.js';
import { countWhere } from './summaries.js';

/** The patterns found as hits; cache_efficiency is found in the slots' sums by model as they are read. */
export type HitPattern = Exclude<InsightPattern, 'cache_efficiency'>;

/**
 * Each pattern's hits in the sessions refreshed: SessionId, TraceId, Timestamp, Ms, Key, Detail, Amount, After,
 * Repeats. They read `tools`, `turns`, `chats` and `compactions`: the sessions' facts.
 */
export const HIT_SQL: Record<HitPattern, string> = {
  retry_loop: `SELECT SessionId, TraceId, Timestamp, Ms, concat(SessionId, ' ', toString(InputKey)) AS Key, Rule AS Detail, 0 AS Amount, 0 AS After,
      count() OVER (PARTITION BY SessionId, InputKey) AS Repeats
    FROM tools WHERE Outcome = 'error' AND InputKey != 0`,
  // A read is repeated when the same read (file and range) came before it with no change of the file between.
  repeated_read: `SELECT SessionId, TraceId, Timestamp, Ms, concat(SessionId, ' ', toString(FileHash)) AS Key, Name AS Detail, ResultLength AS Amount, 0 AS After, 0 AS Repeats FROM (
      SELECT *, row_number() OVER (PARTITION BY SessionId, FileHash, Changes, InputKey ORDER BY Timestamp, SpanId) AS Nth FROM (
        SELECT *, sum(Name != 'Read') OVER (PARTITION BY SessionId, FileHash ORDER BY Timestamp, SpanId ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS Changes
        FROM tools WHERE FileHash != 0 AND Outcome = 'success'))
    WHERE Name = 'Read' AND Nth > 1`,
  not_found: `SELECT SessionId, TraceId, Timestamp, Ms, Name AS Key, Name AS Detail, 0 AS Amount, 0 AS After, 0 AS Repeats FROM tools WHERE Outcome = 'error' AND ErrorClass = 'not_found'`,
  permission_friction: `SELECT SessionId, TraceId, Timestamp, WaitedMs AS Ms, Rule AS Key, Rule AS Detail, 0 AS Amount, 0 AS After, 0 AS Repeats
    FROM tools WHERE Asked = 1 AND Outcome != 'denied'`,
  interrupted_work: `SELECT SessionId, TraceId, Timestamp, Ms, TraceId AS Key, '' AS Detail, 0 AS Amount, 0 AS After, 0 AS Repeats FROM turns WHERE Outcome = 'interrupted'`,
  // Tokens after: the context of the session's first response after the compaction.
  compaction_churn: `SELECT e.SessionId AS SessionId, e.TraceId AS TraceId, e.Timestamp AS Timestamp, 0 AS Ms, e.SessionId AS Key, '' AS Detail,
      e.PreTokens AS Amount, c.Context AS After, e.Repeats AS Repeats
    FROM (SELECT *, count() OVER (PARTITION BY SessionId) AS Repeats FROM compactions) AS e
    ASOF LEFT JOIN (SELECT SessionId, Timestamp, InputTokens + CacheReadTokens + CacheCreationTokens AS Context FROM chats) AS c
      ON e.SessionId = c.SessionId AND c.Timestamp > e.Timestamp`,
  slow_tools: `SELECT SessionId, TraceId, Timestamp, Ms, Name AS Key, if(WaitedMs > 0, concat(Name, ', ', toString(WaitedMs), ' ms of it waiting on the user'), Name) AS Detail,
    WaitedMs AS Amount, 0 AS After, 0 AS Repeats FROM tools WHERE Ms >= ${SLOW_TOOL_FLOOR_MS}`,
};

/**
 * The responses by slot and model: cache_efficiency's figures, each with its turns and its largest uncached inputs.
 * `savings`: what a token read from the cache saves against reading it uncached, by model and day (refreshInsightSlots).
 */
export const MODELS_SQL = `SELECT r.SessionId AS SessionId, r.Slot AS Slot, r.Name AS Name, toUInt32(count()) AS Chats, sum(r.InputTokens) AS InputTokens,
    sum(r.CacheReadTokens) AS CacheReadTokens, sum(r.CacheCreationTokens) AS CacheCreationTokens,
    round(sum(r.CacheReadTokens * r.Saving), 10) AS SavedUsd, round(sum(r.InputTokens * r.Saving), 10) AS WouldSaveUsd,
    arraySort(groupUniqArrayIf((r.TraceId, r.TurnTokens, r.TurnCost), r.TraceId != '')) AS Turns,
    arraySlice(arraySort(x -> (-toInt64(x.3), x.2, x.1), groupArray((r.TraceId, r.Timestamp, r.InputTokens))), 1, 5) AS Examples
  FROM (SELECT ${['SessionId', 'TraceId', 'Timestamp', 'Name', 'InputTokens', 'CacheReadTokens', 'CacheCreationTokens'].map((column) => `c.${column} AS ${column}`).join(', ')},
      toStartOfFifteenMinutes(c.Timestamp) AS Slot, u.Tokens AS TurnTokens, u.Cost AS TurnCost, s.Saving AS Saving
    FROM chats AS c LEFT JOIN usage AS u ON u.TraceId = c.TraceId LEFT JOIN savings AS s ON s.Model = c.Name AND s.Day = toDate(c.Timestamp)) AS r
  GROUP BY SessionId, Slot, Name`;

const slotOf = (time: string) => `toStartOfFifteenMinutes(${time})`;

/** The sessions' span facts of one kind, FINAL, with the columns the patterns read. */
const facts = (spans: string, sessions: string, kind: string, columns: string[] = []) =>
  `(SELECT ${['SessionId', 'TraceId', 'SpanId', 'Timestamp', "toUInt64(greatest(0, dateDiff('millisecond', Timestamp, EndTime))) AS Ms", 'Name', 'Outcome', ...columns].join(', ')}
    FROM ${spans} FINAL WHERE Kind = '${kind}' AND ${sessions})`;

/** Columns of `Nested` column `name`, as the table names them (`Hits.Pattern`, …), and their values in `array` (tuples). */
function nestedColumns(name: string, array: string): { names: string[]; values: string[] } {
  const definition = INSIGHT_COLUMNS.find((c) => c.startsWith(`${name} Nested(`))!;
  const fields = [...definition.matchAll(/^\s+(\w+) /gm)].map((m) => m[1]);
  return {
    names: fields.map((field) => `\`${name}.${field}\``),
    values: fields.map((_, index) => `arrayMap(x -> x.${index + 1}, ${array})`),
  };
}

/**
 * The slot rows of the sessions `sessions` (an SQL condition on SessionId), in the table's column order. Plain CTEs, so
 * the engine reads the facts again at each reference: materialized ones (read once) are experimental, and in the
 * engine we ship a materialized CTE read by another can be read before it is made (BENCHMARKS.md, "Summaries at insert").
 */
function slotsSql(ctx: RenderContext, sessions: string): { columns: string[]; select: string } {
  const { spans, events } = usageTableNames(ctx.database);
  const hitUnion = Object.entries(HIT_SQL).map(([pattern, sql]) =>
    `SELECT '${pattern}' AS Pattern, SessionId, TraceId, Timestamp, toUInt64(Ms) AS Ms, Key, Detail, toUInt64(Amount) AS Amount, toUInt64(After) AS After, toUInt32(Repeats) AS Repeats FROM (${sql})`)
    .join('\n    UNION ALL ');
  const nested = {
    hits: nestedColumns('Hits', 'h.Hits'),
    tools: nestedColumns('Tools', 't.Tools'),
    models: nestedColumns('Models', 'm.Models'),
    refusals: nestedColumns('Refusals', 'r.Refusals'),
  };
  const columns = ['SessionId', 'Slot', 'Project', 'Repo', 'User', ...Object.values(nested).flatMap((n) => n.names)];
  const select = `
WITH
  places AS (SELECT SessionId, argMinIf(Project, Timestamp, Project != '') AS Project, argMaxIf(Repository, Timestamp, Repository != '') AS Repo,
    argMaxIf(User, Timestamp, User != '') AS User FROM ${spans} WHERE ${sessions} GROUP BY SessionId),
  tools AS ${facts(spans, sessions, 'tool', ['InputKey', 'Rule', 'FileHash', 'ErrorClass', 'Asked', 'WaitedMs', 'ResultLength'])},
  turns AS ${facts(spans, sessions, 'turn')},
  chats AS ${facts(spans, sessions, 'chat', ['InputTokens', 'CacheReadTokens', 'CacheCreationTokens', 'OutputTokens', 'CostUsd'])},
  compactions AS (SELECT SessionId, TraceId, Timestamp, PreTokens FROM ${events} FINAL WHERE EventName = 'ccotel.compaction.occurred' AND ${sessions}),
  refusals AS (SELECT SessionId, Timestamp, Source, Name FROM ${events} FINAL WHERE EventName = 'ccotel.permission.blocked' AND ${sessions}),
  savings AS (SELECT s.1 AS Model, s.2 AS Day, s.3 AS Saving FROM (SELECT arrayJoin(arrayZip({savingModels:Array(String)}, {savingDays:Array(Date)}, {savings:Array(Float64)})) AS s)),
  -- Each turn's tokens and cost, all its responses; the cost rounded so that a sum's order never changes a row's hash.
  usage AS (SELECT TraceId, sum(InputTokens + OutputTokens + CacheReadTokens + CacheCreationTokens) AS Tokens, round(sum(CostUsd), 10) AS Cost
    FROM chats WHERE TraceId != '' GROUP BY TraceId),
  hits AS (SELECT SessionId, ${slotOf('Timestamp')} AS Slot,
      arraySort(groupArray((Pattern, TraceId, toDateTime64(Timestamp, 3), Ms, Key, Detail, Amount, After, Repeats, Tokens, Cost))) AS Hits
    FROM (SELECT h.*, u.Tokens AS Tokens, u.Cost AS Cost FROM (${hitUnion}) AS h LEFT JOIN usage AS u USING (TraceId))
    GROUP BY SessionId, Slot),
  tool_sums AS (SELECT SessionId, Slot, arraySort(groupArray((Name, Calls, Errors, NotFound, WaitedMs, Durations))) AS Tools FROM (
      SELECT SessionId, ${slotOf('Timestamp')} AS Slot, Name, toUInt32(count()) AS Calls, toUInt32(countIf(Outcome = 'error')) AS Errors,
        toUInt32(countIf(Outcome = 'error' AND ErrorClass = 'not_found')) AS NotFound, sum(WaitedMs) AS WaitedMs, arraySort(groupArray(Ms)) AS Durations
      FROM tools GROUP BY SessionId, Slot, Name)
    GROUP BY SessionId, Slot),
  model_sums AS (SELECT SessionId, Slot,
      arraySort(groupArray((Name, Chats, InputTokens, CacheReadTokens, CacheCreationTokens, SavedUsd, WouldSaveUsd, Turns, Examples))) AS Models
    FROM (${MODELS_SQL}) GROUP BY SessionId, Slot),
  refusal_sums AS (SELECT SessionId, Slot, arraySort(groupArray((Source, Name, Count))) AS Refusals FROM (
      SELECT SessionId, ${slotOf('Timestamp')} AS Slot, Source, Name, toUInt32(count()) AS Count FROM refusals GROUP BY SessionId, Slot, Source, Name)
    GROUP BY SessionId, Slot),
  slots AS (SELECT DISTINCT SessionId, Slot FROM (
    SELECT SessionId, ${slotOf('Timestamp')} AS Slot FROM tools UNION ALL SELECT SessionId, ${slotOf('Timestamp')} FROM turns
    UNION ALL SELECT SessionId, ${slotOf('Timestamp')} FROM chats UNION ALL SELECT SessionId, ${slotOf('Timestamp')} FROM compactions
    UNION ALL SELECT SessionId, ${slotOf('Timestamp')} FROM refusals))
SELECT s.SessionId AS SessionId, s.Slot AS Slot, p.Project AS Project, p.Repo AS Repo, p.User AS User,
  ${Object.values(nested).flatMap((n) => n.values.map((value, index) => `${value} AS ${n.names[index]}`)).join(',\n  ')}
FROM slots AS s
LEFT JOIN places AS p ON p.SessionId = s.SessionId
LEFT JOIN hits AS h ON h.SessionId = s.SessionId AND h.Slot = s.Slot
LEFT JOIN tool_sums AS t ON t.SessionId = s.SessionId AND t.Slot = s.Slot
LEFT JOIN model_sums AS m ON m.SessionId = s.SessionId AND m.Slot = s.Slot
LEFT JOIN refusal_sums AS r ON r.SessionId = s.SessionId AND r.Slot = s.Slot`;
  return { columns, select };
}

/**
 * What a token read from the cache saved, per model and (UTC) day of the sessions' responses: its input price less its
 * cache read price, from the price table every cost comes from (priced as a response below any long-context tier).
 */
async function cacheSavings(client: ClickHouseClient, ctx: RenderContext, ofSessions: string, sessions: string[]) {
  const result = await client.query({
    query: `SELECT DISTINCT Name, toString(toDate(Timestamp)) AS Day FROM ${usageTableNames(ctx.database).spans} WHERE Kind = 'chat' AND ${ofSessions}`,
    query_params: { sessions },
    format: 'JSONEachRow',
  });
  const days = await result.json<{ Name: string; Day: string }>();
  const { priceChat } = await import('../processors/price-chats.js');
  const perToken = 1000;
  const zero = { input: 0, output: 0, cacheRead: 0, cacheCreation: 0, cacheCreation1h: 0 };
  const priced = (name: string, day: string, tokens: Partial<typeof zero>) => priceChat(name, { ...zero, ...tokens }, Date.parse(`${day}T00:00:00Z`)).usd / perToken;
  return {
    savingModels: days.map((row) => row.Name),
    savingDays: days.map((row) => row.Day),
    savings: days.map((row) => priced(row.Name, row.Day, { input: perToken }) - priced(row.Name, row.Day, { cacheRead: perToken })),
  };
}

/** Sessions refreshed per statement: their ids are its parameters (on a server, in its URL). */
const SESSIONS_PER_STATEMENT = 1000;

/** The sessions with facts (span or event) from `sinceMs` on: those a frequent refresh of a server's slots takes. */
export async function sessionsSince(client: ClickHouseClient, ctx: RenderContext, sinceMs: number): Promise<string[]> {
  const since = `fromUnixTimestamp64Milli(toInt64(${Math.trunc(sinceMs)}))`;
  const { spans, events } = usageTableNames(ctx.database);
  const result = await client.query({
    query: `SELECT DISTINCT SessionId FROM (
      SELECT SessionId FROM ${spans} WHERE Timestamp >= ${since}
      UNION ALL SELECT SessionId FROM ${events} WHERE Timestamp >= ${since} AND SessionId != '')`,
    format: 'JSONEachRow',
  });
  return (await result.json<{ SessionId: string }>()).map((row) => row.SessionId);
}

/** The slots table (and, on a store that had facts before it, its first fill); idempotent. */
export async function ensureInsightSlots(client: ClickHouseClient, opts: SummarySchemaOptions = {}): Promise<void> {
  const ctx = renderContext(opts);
  const exists = await client.query({
    query: 'SELECT count() AS n FROM system.tables WHERE database = {database:String} AND name = {name:String}',
    query_params: { database: ctx.database, name: ctx.cluster ? `${INSIGHT_TABLE}_local` : INSIGHT_TABLE },
    format: 'JSONEachRow',
  });
  if (Number((await exists.json<{ n: string | number }>())[0]?.n ?? 0) > 0) return;
  for (const query of insightTableDdl(opts)) await client.command({ query });
  try {
    await refreshInsightSlots(client, ctx, Date.now());
  } catch (error) {
    // Not left half filled: the next open (or `ccotel retention`) makes and fills it again.
    for (const name of ctx.cluster ? [INSIGHT_TABLE, `${INSIGHT_TABLE}_local`] : [INSIGHT_TABLE]) {
      await client.command({ query: `DROP TABLE IF EXISTS ${ident(ctx.database)}.${ident(name)}${ctx.onCluster} SYNC` });
    }
    throw error;
  }
}

/**
 * Writes the slots of `sessions` (every session when absent) whose rows changed; returns how many it wrote.
 * @param runAtMs this run's version stamp (UpdatedAt); must grow from run to run.
 */
export async function refreshInsightSlots(client: ClickHouseClient, ctx: RenderContext, runAtMs: number, sessions?: string[]): Promise<number> {
  if (sessions?.length === 0) return 0;
  const table = insightTableName(ctx.database);
  const ofSessions = sessions === undefined ? '1' : 'SessionId IN {sessions:Array(String)}';
  const { columns, select } = slotsSql(ctx, ofSessions);
  const runAt = `fromUnixTimestamp64Milli(toInt64(${runAtMs}))`;
  const chunks = sessions === undefined ? [[]] : Array.from({ length: Math.ceil(sessions.length / SESSIONS_PER_STATEMENT) }, (_, n) => sessions.slice(n * SESSIONS_PER_STATEMENT, (n + 1) * SESSIONS_PER_STATEMENT));
  for (const chunk of chunks) {
    await client.command({
      query: `
INSERT INTO ${table} (${columns.join(', ')}, ContentHash, UpdatedAt)
SELECT ${columns.join(', ')}, cityHash64(${columns.join(', ')}) AS ContentHash, ${runAt}
FROM (${select})
WHERE (SessionId, Slot, ContentHash) NOT IN (SELECT SessionId, Slot, ContentHash FROM ${table} FINAL WHERE ${ofSessions})`,
      query_params: { sessions: chunk, ...(await cacheSavings(client, ctx, ofSessions, chunk)) },
    });
  }
  return countWhere(client, table, `UpdatedAt = ${runAt}`);
}
