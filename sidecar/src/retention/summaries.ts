/**
 * Builds the masked per-session summaries (schemas/summaries.ts) from otel_traces and otel_logs, using
 * only DESIGN's attribute and event names. Every count is over distinct ids (SpanId, or the log record's
 * `ccotel.record.id`), because delivery is at-least-once and the raw tables may hold repeats.
 *
 * A (session, day) is recomputed while that day's raw rows are all still within the raw TTL, and computed
 * once when it was never summarised (first run, backfill); after that it is kept as it was. A refresh that
 * finds the same facts writes nothing, so running the job twice changes nothing.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { OTEL_TABLES, ident, type RenderContext } from '../../../schemas/clickhouse.js';
import { SUMMARY_TABLES, SUMMARY_TEXT_CAP } from '../../../schemas/summaries.js';

export const TURN_SPAN = 'invoke_agent claude-code';
export const TOOL_SPAN_PREFIX = 'execute_tool ';
export const CHAT_SPAN_PREFIX = 'chat ';

const FACTS = [
  'Host', 'User', 'Project', 'FirstSeen', 'LastSeen', 'Turns', 'TurnOutcomes', 'ToolCalls', 'ToolOutcomes',
  'PermissionBlocks', 'Starts', 'Resumes', 'InputTokens', 'OutputTokens', 'CacheReadTokens',
  'CacheCreationTokens', 'FailureModes', 'EndReason', 'EndedAt',
];

const tokenMap = (attribute: string): string =>
  `sumMapIf(map(if(model != '', model, substring(SpanName, ${CHAT_SPAN_PREFIX.length + 1})), ` +
  `toUInt64OrZero(SpanAttributes['gen_ai.usage.${attribute}'])), startsWith(SpanName, '${CHAT_SPAN_PREFIX}'))`;

const nonEmpty = (expression: string): string => `anyIf(${expression}, ${expression} != '')`;

/** Facts per (session, day) straight from the raw tables. */
function sessionDaysQuery(database: string): string {
  const traces = `${ident(database)}.${ident(OTEL_TABLES.traces)}`;
  const logs = `${ident(database)}.${ident(OTEL_TABLES.logs)}`;
  const isTurn = `SpanName = '${TURN_SPAN}'`;
  const isTool = `startsWith(SpanName, '${TOOL_SPAN_PREFIX}')`;
  // A log record without an id is deduplicated on its content.
  const logId = `if(LogAttributes['ccotel.record.id'] != '', LogAttributes['ccotel.record.id'], toString(cityHash64(Timestamp, EventName, Body, LogAttributes)))`;
  return `
SELECT
  SessionId,
  Day,
  leftUTF8(if(s.Host != '', s.Host, l.Host), ${SUMMARY_TEXT_CAP}) AS Host,
  leftUTF8(if(s.User != '', s.User, l.User), ${SUMMARY_TEXT_CAP}) AS User,
  leftUTF8(s.Project, ${SUMMARY_TEXT_CAP}) AS Project,
  toDateTime64(multiIf(s.n = 0, l.FirstSeen, l.n = 0, s.FirstSeen, least(s.FirstSeen, l.FirstSeen)), 3) AS FirstSeen,
  toDateTime64(greatest(s.LastSeen, l.LastSeen), 3) AS LastSeen,
  s.Turns AS Turns, s.TurnOutcomes AS TurnOutcomes, s.ToolCalls AS ToolCalls, s.ToolOutcomes AS ToolOutcomes,
  l.PermissionBlocks AS PermissionBlocks, l.Starts AS Starts, l.Resumes AS Resumes,
  s.InputTokens AS InputTokens, s.OutputTokens AS OutputTokens,
  s.CacheReadTokens AS CacheReadTokens, s.CacheCreationTokens AS CacheCreationTokens,
  l.FailureModes AS FailureModes, l.EndReason AS EndReason, toDateTime64(l.EndedAt, 3) AS EndedAt
FROM (
  SELECT
    SessionId, toDate(Timestamp) AS Day, count() AS n,
    ${nonEmpty("ResourceAttributes['host.name']")} AS Host,
    ${nonEmpty("ResourceAttributes['user.name']")} AS User,
    argMinIf(SpanAttributes['ccotel.cwd'], Timestamp, SpanAttributes['ccotel.cwd'] != '') AS Project,
    min(Timestamp) AS FirstSeen,
    max(fromUnixTimestamp64Nano(toUnixTimestamp64Nano(Timestamp) + toInt64(Duration))) AS LastSeen,
    toUInt32(countIf(${isTurn})) AS Turns,
    sumMapIf(map(SpanAttributes['ccotel.turn.outcome'], toUInt32(1)), ${isTurn}) AS TurnOutcomes,
    toUInt32(countIf(${isTool})) AS ToolCalls,
    sumMapIf(map(SpanAttributes['ccotel.tool.outcome'], toUInt32(1)), ${isTool}) AS ToolOutcomes,
    ${tokenMap('input_tokens')} AS InputTokens,
    ${tokenMap('output_tokens')} AS OutputTokens,
    ${tokenMap('cache_read.input_tokens')} AS CacheReadTokens,
    ${tokenMap('cache_creation.input_tokens')} AS CacheCreationTokens
  FROM (
    SELECT SpanAttributes['session.id'] AS SessionId, SpanAttributes['gen_ai.request.model'] AS model,
           Timestamp, Duration, SpanName, SpanAttributes, ResourceAttributes
    FROM ${traces}
    WHERE SpanAttributes['session.id'] != ''
    LIMIT 1 BY SpanId
  )
  GROUP BY SessionId, Day
) AS s
FULL OUTER JOIN (
  SELECT
    SessionId, toDate(Timestamp) AS Day, count() AS n,
    ${nonEmpty("ResourceAttributes['host.name']")} AS Host,
    ${nonEmpty("ResourceAttributes['user.name']")} AS User,
    min(Timestamp) AS FirstSeen,
    max(Timestamp) AS LastSeen,
    toUInt32(countIf(EventName = 'ccotel.permission.blocked')) AS PermissionBlocks,
    toUInt32(countIf(EventName = 'ccotel.session.started')) AS Starts,
    toUInt32(countIf(EventName = 'ccotel.session.started' AND LogAttributes['source'] = 'resume')) AS Resumes,
    sumMapIf(map(LogAttributes['mode'], toUInt32(1)), EventName = 'ccotel.failure_mode.detected') AS FailureModes,
    argMaxIf(LogAttributes['reason'], Timestamp, EventName = 'ccotel.session.ended') AS EndReason,
    maxIf(Timestamp, EventName = 'ccotel.session.ended') AS EndedAt
  FROM (
    SELECT LogAttributes['session.id'] AS SessionId, Timestamp, EventName, LogAttributes, ResourceAttributes
    FROM ${logs}
    WHERE LogAttributes['session.id'] != ''
    LIMIT 1 BY ${logId}
  )
  GROUP BY SessionId, Day
) AS l USING (SessionId, Day)`;
}

export interface SummaryRefresh {
  /** (session, day) rows written. */
  sessionDays: number;
  /** Session summaries written. */
  sessions: number;
}

/**
 * @param windowStartDay first day (YYYY-MM-DD) whose raw rows are all still kept, or undefined when raw
 *   data never expires.
 * @param runAtMs this run's version stamp (UpdatedAt); must grow from run to run.
 */
export async function refreshSummaries(
  client: ClickHouseClient,
  ctx: RenderContext,
  windowStartDay: string | undefined,
  runAtMs: number,
): Promise<SummaryRefresh> {
  const days = `${ident(ctx.database)}.${ident(SUMMARY_TABLES.days)}`;
  const summaries = `${ident(ctx.database)}.${ident(SUMMARY_TABLES.summaries)}`;
  const runAt = `fromUnixTimestamp64Milli(toInt64(${runAtMs}))`;
  const recompute = windowStartDay ? `Day >= toDate('${windowStartDay}') OR ` : '';
  await client.command({
    query: `
INSERT INTO ${days} (SessionId, Day, ${FACTS.join(', ')}, ContentHash, UpdatedAt)
SELECT SessionId, Day, ${FACTS.join(', ')}, cityHash64(${FACTS.join(', ')}) AS ContentHash, ${runAt}
FROM (${sessionDaysQuery(ctx.database)})
WHERE (${recompute}(SessionId, Day) NOT IN (SELECT SessionId, Day FROM ${days} FINAL))
  AND (SessionId, Day, ContentHash) NOT IN (SELECT SessionId, Day, ContentHash FROM ${days} FINAL)`,
  });
  const sessionDays = await countWhere(client, days, `UpdatedAt = ${runAt}`);
  if (sessionDays === 0) return { sessionDays, sessions: 0 };

  // Columns are qualified (d.) so that they never resolve to the aggregate aliases of the same name.
  const sessionFacts = `
SELECT
  d.SessionId AS SessionId,
  argMaxIf(d.Host, d.LastSeen, d.Host != '') AS Host,
  argMaxIf(d.User, d.LastSeen, d.User != '') AS User,
  argMinIf(d.Project, d.FirstSeen, d.Project != '') AS Project,
  min(d.FirstSeen) AS FirstSeen, max(d.LastSeen) AS LastSeen,
  sum(d.Turns) AS Turns, sumMap(d.TurnOutcomes) AS TurnOutcomes,
  sum(d.ToolCalls) AS ToolCalls, sumMap(d.ToolOutcomes) AS ToolOutcomes,
  sum(d.PermissionBlocks) AS PermissionBlocks, sum(d.Starts) AS Starts, sum(d.Resumes) AS Resumes,
  sumMap(d.InputTokens) AS InputTokens, sumMap(d.OutputTokens) AS OutputTokens,
  sumMap(d.CacheReadTokens) AS CacheReadTokens, sumMap(d.CacheCreationTokens) AS CacheCreationTokens,
  sumMap(d.FailureModes) AS FailureModes,
  argMax(d.EndReason, d.EndedAt) AS EndReason, max(d.EndedAt) AS EndedAt
FROM ${days} AS d FINAL
WHERE d.SessionId IN (SELECT SessionId FROM ${days} WHERE UpdatedAt = ${runAt})
GROUP BY d.SessionId`;
  await client.command({
    query: `
INSERT INTO ${summaries} (SessionId, ${FACTS.join(', ')}, State, ContentHash, UpdatedAt)
SELECT SessionId, ${FACTS.join(', ')},
  multiIf(EndReason = '', 'open', EndReason = 'abandoned', 'abandoned', 'ended') AS State,
  cityHash64(${FACTS.join(', ')}) AS ContentHash, ${runAt}
FROM (${sessionFacts})
WHERE (SessionId, ContentHash) NOT IN (SELECT SessionId, ContentHash FROM ${summaries} FINAL)`,
  });
  return { sessionDays, sessions: await countWhere(client, summaries, `UpdatedAt = ${runAt}`) };
}

async function countWhere(client: ClickHouseClient, table: string, condition: string): Promise<number> {
  const result = await client.query({ query: `SELECT count() AS n FROM ${table} WHERE ${condition}`, format: 'JSONEachRow' });
  const [row] = await result.json<{ n: number | string }>();
  return Number(row?.n ?? 0);
}
