// The questions `ccotel report` answers, every figure from the summaries kept at insert (schemas/usage.ts, read
// with FINAL: one row per span or record id), so that none changes when ClickHouse merges parts or a raw TTL runs.
// `uniqueLogs` is for the web view's detail (a session's records), which only the raw tables hold.
import { USAGE_TABLES } from '../../../schemas/usage.js';
import { RECORD_ID_KEY } from '../semconv.js';

export type ReportRows = Record<string, unknown>[];

export interface ReportQuery {
  title: string;
  sql: string;
}

/** A section whose rows come out of a query it shares with other sections (SHARED_QUERIES): one read for them all. */
export interface SharedSection {
  title: string;
  shared: keyof typeof SHARED_QUERIES;
  /** Its rows out of the shared answer, in its order. */
  pick: (rows: ReportRows) => ReportRows;
}

export const uniqueLogs = (where: string) => `(SELECT * FROM otel_logs WHERE ${where} LIMIT 1 BY LogAttributes['${RECORD_ID_KEY}'])`;
const eventFacts = (eventName: string) => `(SELECT * FROM ${USAGE_TABLES.events} FINAL WHERE EventName = '${eventName}')`;

/** Descending by `figure` if given, then ascending by each of `keys` (text compared as ClickHouse does, by code unit). */
function ordered(rows: ReportRows, keys: string[], figure?: string): ReportRows {
  const text = (row: Record<string, unknown>, key: string) => String(row[key]);
  return rows.sort((a, b) => {
    const byFigure = figure === undefined ? 0 : Number(b[figure]) - Number(a[figure]);
    if (byFigure !== 0) return byFigure;
    for (const key of keys) if (text(a, key) !== text(b, key)) return text(a, key) < text(b, key) ? -1 : 1;
    return 0;
  });
}

/**
 * Reads several sections answer together. The event facts: permission blocks and skipped input are one read. The span facts: one read with
 * FINAL (its merge is most of a read's cost), summed by kind, name, outcome and UTC day (sessions as a set,
 * exact when merged), and those sums summed again by `grouping_set`: `outcome` (kind, name and outcome: turns
 * by outcome), `name` (kind and name, every outcome together: tools, tokens and cost), `all` (the overview),
 * `day` (the web view's counts per day) and `model_day` (chats by model and day: the web view's usage per day).
 */
export const SHARED_QUERIES = {
  eventCounts: `SELECT EventName AS event, Name AS name, if(event = 'ccotel.permission.blocked', Source, Reason) AS detail,
        count() AS records, sum(Count) AS lines, uniqExact(FileHash) AS files
      FROM ${USAGE_TABLES.events} FINAL WHERE EventName IN ('ccotel.permission.blocked', 'ccotel.record.skipped')
      GROUP BY event, name, detail`,
  spanGroups: `SELECT Kind AS kind, Name AS name, Outcome AS outcome, Day AS day,
        multiIf(grouping(Day) = 1, multiIf(grouping(Kind) = 1, 'all', grouping(Outcome) = 1, 'name', 'outcome'),
                grouping(Kind) = 1, 'day', 'model_day') AS grouping_set,
        sum(Spans) AS spans, sumIf(Spans, Outcome = 'success') AS success, sumIf(Spans, Outcome = 'error') AS error,
        sumIf(Spans, Outcome = 'denied') AS denied, sumIf(Spans, Outcome = 'interrupted') AS interrupted,
        sumIf(Spans, Outcome = 'unanswered') AS unanswered, round(success / spans, 3) AS success_rate,
        sum(Input) AS input, sum(Output) AS output, sum(CacheRead) AS cache_read, sum(CacheCreation) AS cache_creation,
        sum(Input + Output + CacheRead + CacheCreation) AS tokens, round(sum(Cost), 6) AS cost_usd, sum(Cost) AS cost, max(Unknown) = 1 AS unknown_model,
        uniqExactMerge(Sessions) AS sessions, sumIf(Spans, Kind = 'turn') AS turns, sumIf(Spans, Kind = 'tool') AS tool_calls,
        sumIf(Spans, Kind = 'tool' AND Outcome = 'success') AS tool_success, sumIf(Spans, Kind = 'chat') AS api_responses,
        min(First) AS first_event, max(Last) AS last_event
      FROM (
        SELECT Kind, Name, Outcome, toUnixTimestamp(toStartOfDay(Timestamp, 'UTC')) AS Day, count() AS Spans,
          sum(InputTokens) AS Input, sum(OutputTokens) AS Output, sum(CacheReadTokens) AS CacheRead, sum(CacheCreationTokens) AS CacheCreation,
          sum(CostUsd) AS Cost, max(UnknownModel) AS Unknown, uniqExactState(SessionId) AS Sessions, min(Timestamp) AS First, max(Timestamp) AS Last
        FROM ${USAGE_TABLES.spans} FINAL GROUP BY Kind, Name, Outcome, Day
      )
      GROUP BY GROUPING SETS ((Kind, Name, Outcome), (Kind, Name), (), (Day), (Kind, Name, Day))
      HAVING grouping_set != 'model_day' OR kind = 'chat'`,
};

/** The rows of one grouping set of SHARED_QUERIES.spanGroups (of `kind`, if given). */
export const spanGroups = (rows: ReportRows, set: 'outcome' | 'name' | 'all' | 'day' | 'model_day', kind?: string) =>
  rows.filter((row) => row.grouping_set === set && (kind === undefined || row.kind === kind));

const ofEvent = (rows: ReportRows, event: string) => rows.filter((row) => row.event === event);

/** Turns by outcome, every agent's together (a turn fact's name is its agent). */
function turnsByOutcome(groups: ReportRows): ReportRows {
  const turns = new Map<string, number>();
  for (const row of groups) turns.set(String(row.outcome), (turns.get(String(row.outcome)) ?? 0) + Number(row.spans));
  return [...turns].map(([outcome, count]) => ({ outcome, turns: count }));
}

export const REPORT_QUERIES = {
  overview: {
    title: 'Overview (all history)',
    shared: 'spanGroups',
    // Times of no span are null, not 1970 (an empty store, or a range of the web view without data).
    pick: (rows) => spanGroups(rows, 'all').map(({ spans, sessions, turns, tool_calls, api_responses, cost_usd, first_event, last_event }) =>
      ({ sessions, turns, tool_calls, api_responses, cost_usd, first_event: Number(spans) > 0 ? first_event : null, last_event: Number(spans) > 0 ? last_event : null })),
  },
  turns: {
    title: 'Turns by outcome',
    shared: 'spanGroups',
    pick: (rows) => ordered(turnsByOutcome(spanGroups(rows, 'outcome', 'turn')), ['outcome'], 'turns'),
  },
  tools: {
    title: 'Tool calls by tool',
    shared: 'spanGroups',
    pick: (rows) => ordered(spanGroups(rows, 'name', 'tool').map(({ name, spans, success, error, denied, interrupted, unanswered, success_rate }) =>
      ({ tool: name, calls: spans, success, error, denied, interrupted, unanswered, success_rate })), ['tool'], 'calls'),
  },
  permissionBlocks: {
    title: 'Permission blocks',
    shared: 'eventCounts',
    pick: (rows) => ordered(ofEvent(rows, 'ccotel.permission.blocked').map((row) => ({ tool: row.name, source: row.detail, blocks: row.records })), ['tool', 'source'], 'blocks'),
  },
  sessionStarts: {
    title: 'Session starts and resume frequency',
    sql: `SELECT count() AS starts, countIf(Source = 'resume') AS resumes,
        round(if(starts = 0, 0, resumes / starts), 3) AS resume_frequency
      FROM ${eventFacts('ccotel.session.started')}`,
  },
  sessionStates: {
    title: 'Sessions by latest state (most recent first)',
    sql: `SELECT SessionId AS session, argMax(State, Timestamp) AS state,
        argMax(Reason, Timestamp) AS reason, max(Timestamp) AS since, count() AS changes
      FROM ${eventFacts('ccotel.session.state_changed')}
      GROUP BY session ORDER BY since DESC, session LIMIT 20`,
  },
  failureModes: {
    title: 'Failure modes detected',
    sql: `SELECT Mode AS mode, count() AS detections, uniqExact(SessionId) AS sessions
      FROM ${eventFacts('ccotel.failure_mode.detected')}
      GROUP BY mode ORDER BY detections DESC, mode`,
  },
  tokens: {
    title: 'Tokens by model',
    shared: 'spanGroups',
    pick: (rows) => ordered(spanGroups(rows, 'name', 'chat').map(({ name, input, output, cache_read, cache_creation }) => ({ model: name, input, output, cache_read, cache_creation })), ['model']),
  },
  cost: {
    title: 'Cost by model, all history (from the summaries; USD)',
    shared: 'spanGroups',
    pick: (rows) => ordered(spanGroups(rows, 'name', 'chat').map(({ name, spans, tokens, cost_usd, unknown_model }) => ({ model: name, api_responses: spans, tokens, cost_usd, unknown_model })), ['model'], 'cost_usd'),
  },
  skipped: {
    title: 'Input lines skipped',
    shared: 'eventCounts',
    pick: (rows) => ordered(ofEvent(rows, 'ccotel.record.skipped').map((row) => ({ source: row.name, reason: row.detail, lines: row.lines, files: row.files })), ['reason', 'source'], 'lines'),
  },
} satisfies Record<string, ReportQuery | SharedSection>;

export type ReportSection = keyof typeof REPORT_QUERIES;
