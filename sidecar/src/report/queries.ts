// The questions `ccotel report` answers. Counts over all history come from the summaries kept at insert
// (schemas/usage.ts, read with FINAL: one row per span or record id); what only the raw tables hold (permission
// blocks by tool, session states, skipped input) covers their window, as SQL over the exporter's layout and
// DESIGN's attribute names. Raw rows may repeat (at-least-once delivery): those counts go through distinct ids.
import { USAGE_TABLES } from '../../../schemas/usage.js';
import { RECORD_ID_KEY } from '../semconv.js';

export interface ReportQuery {
  title: string;
  sql: string;
}

const LOGS = 'otel_logs';

export const uniqueLogs = (where: string) => `(SELECT * FROM ${LOGS} WHERE ${where} LIMIT 1 BY LogAttributes['${RECORD_ID_KEY}'])`;
const spanFacts = (kind?: 'turn' | 'tool' | 'chat') => `(SELECT * FROM ${USAGE_TABLES.spans} FINAL${kind ? ` WHERE Kind = '${kind}'` : ''})`;
const eventFacts = (eventName: string) => `(SELECT * FROM ${USAGE_TABLES.events} FINAL WHERE EventName = '${eventName}')`;

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
    sql: `SELECT LogAttributes['gen_ai.tool.name'] AS tool, LogAttributes['source'] AS source, count() AS blocks
      FROM ${uniqueLogs(`EventName = 'ccotel.permission.blocked'`)}
      GROUP BY tool, source ORDER BY blocks DESC, tool, source`,
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
    sql: `SELECT Name AS model, sum(InputTokens) AS input, sum(OutputTokens) AS output,
        sum(CacheReadTokens) AS cache_read, sum(CacheCreationTokens) AS cache_creation
      FROM ${spanFacts('chat')}
      GROUP BY model ORDER BY model`,
  },
  cost: {
    title: 'Cost by model, all history (from the summaries; USD)',
    sql: `SELECT Name AS model, count() AS api_responses, sum(InputTokens + OutputTokens + CacheReadTokens + CacheCreationTokens) AS tokens,
        round(sum(CostUsd), 6) AS cost_usd, max(UnknownModel) = 1 AS unknown_model
      FROM ${spanFacts('chat')}
      GROUP BY model ORDER BY cost_usd DESC, model`,
  },
  skipped: {
    title: 'Input lines skipped (raw window)',
    sql: `SELECT LogAttributes['ccotel.source'] AS source, LogAttributes['reason'] AS reason,
        sum(toUInt64OrDefault(LogAttributes['ccotel.record.count'], toUInt64(1))) AS lines,
        uniqExact(LogAttributes['ccotel.source.file']) AS files
      FROM ${uniqueLogs(`EventName = 'ccotel.record.skipped'`)}
      GROUP BY source, reason ORDER BY lines DESC, reason`,
  },
} satisfies Record<string, ReportQuery>;

export type ReportSection = keyof typeof REPORT_QUERIES;
