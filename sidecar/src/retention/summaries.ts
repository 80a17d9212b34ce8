/**
 * Builds the masked per-session summaries (schemas/summaries.ts) from the facts the materialized views keep
 * at insert (schemas/usage.ts), which outlive the raw tables: a session's days can be rebuilt for as long
 * as the summaries are kept. Facts repeat when delivery does (ReplacingMergeTree): they are read with FINAL.
 *
 * Repair first: spans and log records in the raw tables that have no facts (written before the views
 * existed) get them. Then every (session, day) whose facts changed is rewritten; a refresh that finds the
 * same facts writes nothing, so running the job twice, or after a backfill, changes nothing.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { OTEL_TABLES, ident, type RenderContext } from '../../../schemas/clickhouse.js';
import { SUMMARY_TABLES } from '../../../schemas/summaries.js';
import { eventFactsSelect, FACTS_COLUMNS, LOG_RECORD_ID, spanFactsSelect, USAGE_TABLES } from '../../../schemas/usage.js';

const FACTS = [
  'Host', 'User', 'Project', 'Repository', 'Branch', 'Branches', 'Ticket', 'Resource', 'FirstSeen', 'LastSeen', 'Turns', 'TurnOutcomes', 'ToolCalls', 'ToolOutcomes',
  'PermissionBlocks', 'Starts', 'Resumes', 'InputTokens', 'OutputTokens', 'CacheReadTokens',
  'CacheCreationTokens', 'CostUsd', 'ReportedCostUsd', 'LinesAdded', 'LinesRemoved', 'FailureModes', 'EndReason', 'EndedAt',
];

const byModel = (column: string): string => `sumMapIf(map(Name, ${column}), Kind = 'chat')`;
const nonEmpty = (expression: string): string => `anyIf(${expression}, ${expression} != '')`;
/** The value of the latest row that has one: a session's branch is the one it was on last. */
const lastNonEmpty = (column: string, time: string): string => `argMaxIf(${column}, ${time}, ${column} != '')`;

/** Facts per (session, day) from the facts tables. */
function sessionDaysQuery(database: string): string {
  const spans = `${ident(database)}.${ident(USAGE_TABLES.spans)}`;
  const events = `${ident(database)}.${ident(USAGE_TABLES.events)}`;
  return `
SELECT
  SessionId,
  Day,
  if(s.Host != '', s.Host, l.Host) AS Host,
  if(s.User != '', s.User, l.User) AS User,
  s.Project AS Project, s.Repository AS Repository, s.Branch AS Branch, s.Branches AS Branches, s.Ticket AS Ticket, s.Resource AS Resource,
  toDateTime64(multiIf(s.n = 0, l.FirstSeen, l.n = 0, s.FirstSeen, least(s.FirstSeen, l.FirstSeen)), 3) AS FirstSeen,
  toDateTime64(greatest(s.LastSeen, l.LastSeen), 3) AS LastSeen,
  s.Turns AS Turns, s.TurnOutcomes AS TurnOutcomes, s.ToolCalls AS ToolCalls, s.ToolOutcomes AS ToolOutcomes,
  l.PermissionBlocks AS PermissionBlocks, l.Starts AS Starts, l.Resumes AS Resumes,
  s.InputTokens AS InputTokens, s.OutputTokens AS OutputTokens,
  s.CacheReadTokens AS CacheReadTokens, s.CacheCreationTokens AS CacheCreationTokens,
  s.CostUsd AS CostUsd, l.ReportedCostUsd AS ReportedCostUsd, l.LinesAdded AS LinesAdded, l.LinesRemoved AS LinesRemoved,
  l.FailureModes AS FailureModes, l.EndReason AS EndReason, toDateTime64(l.EndedAt, 3) AS EndedAt
FROM (
  SELECT
    SessionId, toDate(Timestamp) AS Day, count() AS n,
    ${nonEmpty('Host')} AS Host, ${nonEmpty('User')} AS User,
    argMinIf(Project, Timestamp, Project != '') AS Project,
    ${lastNonEmpty('f.Repository', 'f.Timestamp')} AS Repository, ${lastNonEmpty('f.Branch', 'f.Timestamp')} AS Branch,
    arraySort(groupUniqArrayIf(f.Branch, f.Branch != '')) AS Branches, ${lastNonEmpty('f.Ticket', 'f.Timestamp')} AS Ticket,
    argMaxIf(f.Resource, f.Timestamp, notEmpty(f.Resource)) AS Resource,
    min(Timestamp) AS FirstSeen, max(EndTime) AS LastSeen,
    toUInt32(countIf(Kind = 'turn')) AS Turns,
    sumMapIf(map(Outcome, toUInt32(1)), Kind = 'turn') AS TurnOutcomes,
    toUInt32(countIf(Kind = 'tool')) AS ToolCalls,
    sumMapIf(map(Outcome, toUInt32(1)), Kind = 'tool') AS ToolOutcomes,
    ${byModel('InputTokens')} AS InputTokens,
    ${byModel('OutputTokens')} AS OutputTokens,
    ${byModel('CacheReadTokens')} AS CacheReadTokens,
    ${byModel('CacheCreationTokens')} AS CacheCreationTokens,
    ${byModel('CostUsd')} AS CostUsd
  FROM ${spans} AS f FINAL
  GROUP BY SessionId, Day
) AS s
FULL OUTER JOIN (
  SELECT
    SessionId, toDate(Timestamp) AS Day, count() AS n,
    ${nonEmpty('Host')} AS Host, ${nonEmpty('User')} AS User,
    min(Timestamp) AS FirstSeen, max(Timestamp) AS LastSeen,
    toUInt32(countIf(EventName = 'ccotel.permission.blocked')) AS PermissionBlocks,
    toUInt32(countIf(EventName = 'ccotel.session.started')) AS Starts,
    toUInt32(countIf(EventName = 'ccotel.session.started' AND Source = 'resume')) AS Resumes,
    -- Claude Code's figures are running totals for the session: a day holds the highest seen that day.
    maxIf(ReportedCostUsd, EventName = 'ccotel.cost.reported') AS ReportedCostUsd,
    maxIf(LinesAdded, EventName = 'ccotel.cost.reported') AS LinesAdded,
    maxIf(LinesRemoved, EventName = 'ccotel.cost.reported') AS LinesRemoved,
    sumMapIf(map(Mode, toUInt32(1)), EventName = 'ccotel.failure_mode.detected') AS FailureModes,
    argMaxIf(Reason, Timestamp, EventName = 'ccotel.session.ended') AS EndReason,
    maxIf(Timestamp, EventName = 'ccotel.session.ended') AS EndedAt
  FROM ${events} FINAL
  WHERE SessionId != '' -- skipped input of no session
  GROUP BY SessionId, Day
) AS l USING (SessionId, Day)`;
}

/** Facts for raw rows that have none (stored before the views existed); returns how many were added. */
async function repairFacts(client: ClickHouseClient, database: string): Promise<number> {
  const table = (name: string) => `${ident(database)}.${ident(name)}`;
  const before = await countWhere(client, table(USAGE_TABLES.spans), '1') + await countWhere(client, table(USAGE_TABLES.events), '1');
  await client.command({
    query: `INSERT INTO ${table(USAGE_TABLES.spans)} (${FACTS_COLUMNS.spans}) ${spanFactsSelect(table(OTEL_TABLES.traces))}
      AND SpanId NOT IN (SELECT SpanId FROM ${table(USAGE_TABLES.spans)}) LIMIT 1 BY SpanId`,
  });
  await client.command({
    query: `INSERT INTO ${table(USAGE_TABLES.events)} (${FACTS_COLUMNS.events}) ${eventFactsSelect(table(OTEL_TABLES.logs))}
      AND ${LOG_RECORD_ID} NOT IN (SELECT RecordId FROM ${table(USAGE_TABLES.events)}) LIMIT 1 BY RecordId`,
  });
  const after = await countWhere(client, table(USAGE_TABLES.spans), '1') + await countWhere(client, table(USAGE_TABLES.events), '1');
  return after - before;
}

export interface SummaryRefresh {
  /** Facts added for raw rows that had none (repair). */
  factsRepaired: number;
  /** (session, day) rows written. */
  sessionDays: number;
  /** Session summaries written. */
  sessions: number;
}

/**
 * @param runAtMs this run's version stamp (UpdatedAt); must grow from run to run.
 * @param options.repairFacts whether raw rows without facts are looked for first (a scan of the whole raw history): only
 *   a store whose every raw row went in through the views (one a backfill has just made) may skip it.
 */
export async function refreshSummaries(client: ClickHouseClient, ctx: RenderContext, runAtMs: number, options: { repairFacts?: boolean } = {}): Promise<SummaryRefresh> {
  const factsRepaired = (options.repairFacts ?? true) ? await repairFacts(client, ctx.database) : 0;
  const days = `${ident(ctx.database)}.${ident(SUMMARY_TABLES.days)}`;
  const summaries = `${ident(ctx.database)}.${ident(SUMMARY_TABLES.summaries)}`;
  const runAt = `fromUnixTimestamp64Milli(toInt64(${runAtMs}))`;
  await client.command({
    query: `
INSERT INTO ${days} (SessionId, Day, ${FACTS.join(', ')}, ContentHash, UpdatedAt)
SELECT SessionId, Day, ${FACTS.join(', ')}, cityHash64(${FACTS.join(', ')}) AS ContentHash, ${runAt}
FROM (${sessionDaysQuery(ctx.database)})
WHERE (SessionId, Day, ContentHash) NOT IN (SELECT SessionId, Day, ContentHash FROM ${days} FINAL)`,
  });
  const sessionDays = await countWhere(client, days, `UpdatedAt = ${runAt}`);
  if (sessionDays === 0) return { factsRepaired, sessionDays, sessions: 0 };

  // Columns are qualified (d.) so that they never resolve to the aggregate aliases of the same name.
  const sessionFacts = `
SELECT
  d.SessionId AS SessionId,
  argMaxIf(d.Host, d.LastSeen, d.Host != '') AS Host,
  argMaxIf(d.User, d.LastSeen, d.User != '') AS User,
  argMinIf(d.Project, d.FirstSeen, d.Project != '') AS Project,
  ${lastNonEmpty('d.Repository', 'd.LastSeen')} AS Repository, ${lastNonEmpty('d.Branch', 'd.LastSeen')} AS Branch,
  arraySort(arrayDistinct(flatten(groupArray(d.Branches)))) AS Branches, ${lastNonEmpty('d.Ticket', 'd.LastSeen')} AS Ticket,
  argMaxIf(d.Resource, d.LastSeen, notEmpty(d.Resource)) AS Resource,
  min(d.FirstSeen) AS FirstSeen, max(d.LastSeen) AS LastSeen,
  sum(d.Turns) AS Turns, sumMap(d.TurnOutcomes) AS TurnOutcomes,
  sum(d.ToolCalls) AS ToolCalls, sumMap(d.ToolOutcomes) AS ToolOutcomes,
  sum(d.PermissionBlocks) AS PermissionBlocks, sum(d.Starts) AS Starts, sum(d.Resumes) AS Resumes,
  sumMap(d.InputTokens) AS InputTokens, sumMap(d.OutputTokens) AS OutputTokens,
  sumMap(d.CacheReadTokens) AS CacheReadTokens, sumMap(d.CacheCreationTokens) AS CacheCreationTokens,
  sumMap(d.CostUsd) AS CostUsd, max(d.ReportedCostUsd) AS ReportedCostUsd,
  max(d.LinesAdded) AS LinesAdded, max(d.LinesRemoved) AS LinesRemoved,
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
  return { factsRepaired, sessionDays, sessions: await countWhere(client, summaries, `UpdatedAt = ${runAt}`) };
}

/** Rows of `table` (as named in SQL) that meet `condition`. */
export async function countWhere(client: ClickHouseClient, table: string, condition: string): Promise<number> {
  const result = await client.query({ query: `SELECT count() AS n FROM ${table} WHERE ${condition}`, format: 'JSONEachRow' });
  const [row] = await result.json<{ n: number | string }>();
  return Number(row?.n ?? 0);
}
