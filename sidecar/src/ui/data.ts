// The web view's data, all for one time range: the report module's figures (`buildReport`, exactly what
// `ccotel report --json` prints; `usageReport` and its per-day and per-project sums, what `report daily|session
// --json` print: tokens and cost from the summaries, so history older than the raw tables is there too), plus
// the views of ui/queries.ts.
import type { ClickHouseClient } from '@clickhouse/client';
import { INSIGHT_TABLE } from '../../../schemas/insights.js';
import { USAGE_TABLES } from '../../../schemas/usage.js';
import type { InsightThresholds } from '../config.js';
import { insightsReport, type InsightsReport } from '../report/insights.js';
import { buildReport, sharedAnswers } from '../report/overview.js';
import { SHARED_QUERIES, spanGroups } from '../report/queries.js';
import { selectRows as rows } from '../report/select.js';
import type { TokenFigures, UsageRow } from '../report/tokens.js';
import { dailyFromChatDays, unpricedByDay, usageByPlace, usageReport, usageSummedBy, type ChatDay } from '../report/usage.js';
import { sessionFactsSql, spansFromFacts, type SpanFact } from './expired.js';
import { FAILURES, LOGS_PER_DAY, SESSION_LOGS, SESSION_SPAN_LIMIT, SESSION_SPANS, SESSIONS } from './queries.js';
import type { DaySeries, FailureRow, LogRow, Overview, SessionDetail, SessionRow, SpanRow, TimeRange } from './types.js';

/**
 * Every table the figures read, with the column of its time the range applies to: the insight slots' is the start of
 * each 15 minutes (a range of whole UTC days takes exactly the slots of those days).
 */
const TIMED_TABLES: Record<string, string> = {
  otel_traces: 'Timestamp', otel_logs: 'Timestamp', [USAGE_TABLES.spans]: 'Timestamp', [USAGE_TABLES.events]: 'Timestamp', [INSIGHT_TABLE]: 'Slot',
};
/** Days and sessions counted in UTC, the same days as the per-day queries. */
const TIMEZONE = 'UTC';

/**
 * A read of one of TIMED_TABLES in a statement (with its FINAL, if any), by its bare name or as `database`.`table`
 * (the usage views name their tables so); no statement aliases these tables.
 */
const TIMED_READ = new RegExp(`\\b(FROM|JOIN)\\s+((?:\`[^\`]+\`\\.)?\`?(${Object.keys(TIMED_TABLES).join('|')})\`?)(?![\\w.\`])(\\s+FINAL\\b)?`, 'g');

/**
 * `sql` with every read of the raw tables and the summaries limited to `filter` (of the table's time column): each
 * becomes a subquery of the rows in range under the table's own name, so the report's own SQL answers for a time
 * range without a second copy of it. Not ClickHouse's `additional_table_filters`: a setting, which the read-only query
 * endpoint of a running sidecar refuses, and which the embedded store's client would turn into a `SET` that stays.
 */
export function restrictToRange(sql: string, filter: (column: string) => string): string {
  return sql.replace(TIMED_READ, (_read, keyword: string, reference: string, table: string, final = '') =>
    `${keyword} (SELECT * FROM ${reference}${final} WHERE ${filter(TIMED_TABLES[table])}) AS ${table}`);
}

/** `client`, with every read of the raw tables and the summaries limited to `range` (restrictToRange). */
export function withRange(client: ClickHouseClient, range: TimeRange): ClickHouseClient {
  if (range.fromMs === undefined && range.toMs === undefined) return client;
  const filter = (column: string) => [
    range.fromMs === undefined ? '' : `${column} >= fromUnixTimestamp64Milli(${Math.trunc(range.fromMs)})`,
    range.toMs === undefined ? '' : `${column} < fromUnixTimestamp64Milli(${Math.trunc(range.toMs)})`,
  ].filter(Boolean).join(' AND ');
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'query') return Reflect.get(target, property, receiver);
      return (params: Parameters<ClickHouseClient['query']>[0]) => target.query({ ...params, query: restrictToRange(params.query, filter) } as never);
    },
  });
}

interface SpanDay {
  day: number;
  sessions: number;
  turns: number;
  tool_calls: number;
  tool_success: number;
}
interface LogDay {
  day: number;
  permission_blocks: number;
  starts: number;
  resumes: number;
  failure_modes: Record<string, number>;
}

/** Tokens and cost of one day (YYYY-MM-DD, UTC), as `report daily` gives them. */
type UsageDay = TokenFigures & { period: string };

/** A usage day as the per-day queries' epoch seconds. */
const daySeconds = (row: UsageDay) => Date.parse(`${row.period}T00:00:00Z`) / 1000;

/** The per-day queries and the daily usage report on one x axis: every day any of them has data for, in order. */
export function mergeDays(spanDays: SpanDay[], logDays: LogDay[], usageDays: UsageDay[]): DaySeries {
  const days = [...new Set([...spanDays.map((row) => row.day), ...logDays.map((row) => row.day), ...usageDays.map(daySeconds)])].sort((a, b) => a - b);
  const spansBy = new Map(spanDays.map((row) => [row.day, row]));
  const logsBy = new Map(logDays.map((row) => [row.day, row]));
  const usageBy = new Map(usageDays.map((row) => [daySeconds(row), row]));
  const spanColumn = (key: keyof SpanDay) => days.map((day) => spansBy.get(day)?.[key] ?? 0);
  const logColumn = (key: 'permission_blocks' | 'starts' | 'resumes') => days.map((day) => logsBy.get(day)?.[key] ?? 0);
  const usageColumn = (key: 'cost_usd' | 'input_tokens' | 'output_tokens' | 'cache_read_tokens' | 'cache_creation_tokens') => days.map((day) => usageBy.get(day)?.[key] ?? 0);
  const modes = [...new Set(logDays.flatMap((row) => Object.keys(row.failure_modes)))].filter(Boolean).sort();
  return {
    days,
    sessions: spanColumn('sessions'),
    turns: spanColumn('turns'),
    toolCalls: spanColumn('tool_calls'),
    toolSuccess: spanColumn('tool_success'),
    costUsd: usageColumn('cost_usd'),
    inputTokens: usageColumn('input_tokens'),
    outputTokens: usageColumn('output_tokens'),
    cacheReadTokens: usageColumn('cache_read_tokens'),
    cacheCreationTokens: usageColumn('cache_creation_tokens'),
    permissionBlocks: logColumn('permission_blocks'),
    starts: logColumn('starts'),
    resumes: logColumn('resumes'),
    failureModes: Object.fromEntries(modes.map((mode) => [mode, days.map((day) => logsBy.get(day)?.failure_modes[mode] ?? 0)])),
  };
}

type FactSession = Omit<SessionRow, 'total_tokens' | 'cost_usd' | 'reported_cost_usd'>;

/** Each session's row (turns, outcome, state, failure modes) joined with its usage row (tokens and cost, as `report session` gives them). */
export function joinSessions(sessions: FactSession[], usage: UsageRow[]): SessionRow[] {
  const usageBy = new Map(usage.map((row) => [row.period, row]));
  return sessions.map((session) => {
    const figures = usageBy.get(session.session);
    return { ...session, total_tokens: figures?.total_tokens ?? 0, cost_usd: figures?.cost_usd ?? 0, reported_cost_usd: figures?.reported_cost_usd ?? null };
  });
}

/** The most costly first (then the most tokens, then by name). */
const byCost = <T extends { cost_usd: number; tokens: number }>(name: (row: T) => string) => (a: T, b: T): number =>
  b.cost_usd - a.cost_usd || b.tokens - a.tokens || name(a).localeCompare(name(b));

export class UiData {
  constructor(
    private readonly client: ClickHouseClient,
    private readonly database = 'default',
    private readonly thresholds?: InsightThresholds,
  ) {}

  /** Changes whenever rows are added or expire: counts of a MergeTree table come from its metadata, cheaply. */
  async version(): Promise<string> {
    const [row] = await rows<Record<string, number>>(this.client, `SELECT ${Object.keys(TIMED_TABLES).map((table) => `(SELECT count() FROM ${table})`).join(', ')}`);
    return JSON.stringify(row);
  }

  async overview(range: TimeRange): Promise<Overview> {
    const client = withRange(this.client, range);
    // Independent questions, asked at once; the counts, tokens and cost per day are rows of the report's span groups.
    const answer = sharedAnswers(client);
    const [report, spanRows, logDays, places, unpriced] = await Promise.all([
      buildReport(client, answer),
      answer(SHARED_QUERIES.spanGroups),
      rows<LogDay>(client, LOGS_PER_DAY),
      usageByPlace(client, { timezone: TIMEZONE, database: this.database }),
      unpricedByDay(client, this.database),
    ]);
    const usageDays = dailyFromChatDays(spanGroups(spanRows, 'model_day', 'chat') as unknown as ChatDay[], unpriced);
    const spanDays = spanGroups(spanRows, 'day') as unknown as SpanDay[];
    const projects = usageSummedBy(places, 'project').sort(byCost((row) => row.project));
    const repositories = usageSummedBy(places, 'repository').sort(byCost((row) => row.repository));
    return { range, report, days: mergeDays(spanDays, logDays, usageDays), projects, repositories };
  }

  async sessions(range: TimeRange): Promise<SessionRow[]> {
    const client = withRange(this.client, range);
    const [sessions, usage] = await Promise.all([rows<FactSession>(client, SESSIONS), usageReport(client, 'session', { timezone: TIMEZONE, database: this.database })]);
    return joinSessions(sessions, usage.rows);
  }

  /** What `report insights --json` prints, for the range (days in UTC). */
  insights(range: TimeRange): Promise<InsightsReport> {
    return insightsReport(withRange(this.client, range), { database: this.database, timezone: TIMEZONE }, this.thresholds);
  }

  failures(range: TimeRange): Promise<FailureRow[]> {
    return rows<FailureRow>(withRange(this.client, range), FAILURES);
  }

  async session(session: string): Promise<SessionDetail> {
    type RawSpan = Omit<SpanRow, 'events'> & { event_names: string[]; event_times_ms: number[]; event_attributes: Record<string, string>[] };
    const raw = await rows<RawSpan>(this.client, SESSION_SPANS, { session });
    const logs = await rows<LogRow>(this.client, SESSION_LOGS, { session });
    if (raw.length === 0) {
      // Older than the raw window: what the span facts kept.
      const facts = await rows<SpanFact>(this.client, sessionFactsSql(SESSION_SPAN_LIMIT + 1), { session });
      return { session, spans: spansFromFacts(facts.slice(0, SESSION_SPAN_LIMIT)), logs, truncated: facts.length > SESSION_SPAN_LIMIT, fromFacts: facts.length > 0 };
    }
    const spans = raw.slice(0, SESSION_SPAN_LIMIT).map(({ event_names, event_times_ms, event_attributes, ...span }) => ({
      ...span,
      events: event_names.map((name, index) => ({ name, time_ms: event_times_ms[index], attributes: event_attributes[index] })),
    }));
    return { session, spans, logs, truncated: raw.length > SESSION_SPAN_LIMIT, fromFacts: false };
  }
}
