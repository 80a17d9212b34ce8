// The questions `ccotel report` answers. Counts over all history come from the summaries kept at insert
// (schemas/usage.ts, read with FINAL: one row per span or record id); what only the raw tables hold (permission
// blocks by tool, session states, skipped input) covers their window, as SQL over the exporter's layout and
// DESIGN's attribute names. Raw rows may repeat (at-least-once delivery): those counts go through distinct ids.
import { USAGE_TABLES } from '../../../schemas/usage.js';

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

const LOGS = 'otel_logs';

export const uniqueLogs = (where: string) => `(SELECT * FROM ${LOGS} WHERE ${where} LIMIT 1 BY LogAttributes['ccotel.record.id'])`;
const spanFacts = (kind?: 'turn' | 'tool' | 'chat') => `(SELECT * FROM ${USAGE_TABLES.spans} FINAL${kind ? ` WHERE Kind = '${kind}'` : ''})`;
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
 * Reads several sections answer together. The raw logs: EventName is not in their sort key, so each question
 * of them scans every part; permission blocks and skipped input are one scan. The chats by model: one read
 * of the facts with FINAL for the tokens and the cost.
 */
export const SHARED_QUERIES = {
  rawLogCounts: `SELECT EventName AS event,
        if(event = 'ccotel.permission.blocked', LogAttributes['gen_ai.tool.name'], LogAttributes['ccotel.source']) AS name,
        if(event = 'ccotel.permission.blocked', LogAttributes['source'], LogAttributes['reason']) AS detail,
        count() AS records,
        sum(toUInt64OrDefault(LogAttributes['ccotel.record.count'], toUInt64(1))) AS lines,
        uniqExact(LogAttributes['ccotel.source.file']) AS files
      FROM (SELECT * FROM ${LOGS} WHERE EventName IN ('ccotel.permission.blocked', 'ccotel.record.skipped')
            LIMIT 1 BY EventName, LogAttributes['ccotel.record.id'])
      GROUP BY event, name, detail`,
  chatsByModel: `SELECT Name AS model, count() AS api_responses, sum(InputTokens) AS input, sum(OutputTokens) AS output,
        sum(CacheReadTokens) AS cache_read, sum(CacheCreationTokens) AS cache_creation,
        sum(InputTokens + OutputTokens + CacheReadTokens + CacheCreationTokens) AS tokens,
        round(sum(CostUsd), 6) AS cost_usd, max(UnknownModel) = 1 AS unknown_model
      FROM ${spanFacts('chat')}
      GROUP BY model`,
};

const ofEvent = (rows: ReportRows, event: string) => rows.filter((row) => row.event === event);

export const REPORT_QUERIES = {
  overview: {
    title: 'Overview (all history)',
    sql: `SELECT
        uniqExact(SessionId) AS sessions,
        countIf(Kind = 'turn') AS turns,
        countIf(Kind = 'tool') AS tool_calls,
        countIf(Kind = 'chat') AS api_responses,
        round(sum(CostUsd), 6) AS cost_usd,
        min(Timestamp) AS first_event,
        max(Timestamp) AS last_event
      FROM ${spanFacts()}`,
  },
  turns: {
    title: 'Turns by outcome',
    sql: `SELECT Outcome AS outcome, count() AS turns FROM ${spanFacts('turn')}
      GROUP BY outcome ORDER BY turns DESC, outcome`,
  },
  tools: {
    title: 'Tool calls by tool',
    sql: `SELECT Name AS tool, count() AS calls,
        countIf(Outcome = 'success') AS success,
        countIf(Outcome = 'error') AS error,
        countIf(Outcome = 'denied') AS denied,
        countIf(Outcome = 'interrupted') AS interrupted,
        countIf(Outcome = 'unanswered') AS unanswered,
        round(success / calls, 3) AS success_rate
      FROM ${spanFacts('tool')}
      GROUP BY tool ORDER BY calls DESC, tool`,
  },
  permissionBlocks: {
    title: 'Permission blocks (raw window)',
    shared: 'rawLogCounts',
    pick: (rows) => ordered(ofEvent(rows, 'ccotel.permission.blocked').map((row) => ({ tool: row.name, source: row.detail, blocks: row.records })), ['tool', 'source'], 'blocks'),
  },
  sessionStarts: {
    title: 'Session starts and resume frequency',
    sql: `SELECT count() AS starts, countIf(Source = 'resume') AS resumes,
        round(if(starts = 0, 0, resumes / starts), 3) AS resume_frequency
      FROM ${eventFacts('ccotel.session.started')}`,
  },
  sessionStates: {
    title: 'Sessions by latest state (most recent first, raw window)',
    sql: `SELECT LogAttributes['session.id'] AS session, argMax(LogAttributes['state'], Timestamp) AS state,
        argMax(LogAttributes['reason'], Timestamp) AS reason, max(Timestamp) AS since, count() AS changes
      FROM ${uniqueLogs(`EventName = 'ccotel.session.state_changed'`)}
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
    shared: 'chatsByModel',
    pick: (rows) => ordered(rows.map(({ model, input, output, cache_read, cache_creation }) => ({ model, input, output, cache_read, cache_creation })), ['model']),
  },
  cost: {
    title: 'Cost by model, all history (from the summaries; USD)',
    shared: 'chatsByModel',
    pick: (rows) => ordered(rows.map(({ model, api_responses, tokens, cost_usd, unknown_model }) => ({ model, api_responses, tokens, cost_usd, unknown_model })), ['model'], 'cost_usd'),
  },
  skipped: {
    title: 'Input lines skipped (raw window)',
    shared: 'rawLogCounts',
    pick: (rows) => ordered(ofEvent(rows, 'ccotel.record.skipped').map((row) => ({ source: row.name, reason: row.detail, lines: row.lines, files: row.files })), ['reason', 'source'], 'lines'),
  },
} satisfies Record<string, ReportQuery | SharedSection>;

export type ReportSection = keyof typeof REPORT_QUERIES;
