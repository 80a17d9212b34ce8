// The questions `ccotel report` answers, as SQL over the exporter's table layout and DESIGN's attribute
// names. Rows may repeat (at-least-once delivery), so every count goes through distinct ids.

export interface ReportQuery {
  title: string;
  sql: string;
}

import { USAGE_TABLES } from '../../../schemas/usage.js';

const TRACES = 'otel_traces';
const LOGS = 'otel_logs';

/** One row per span id: repeats of a span (same id) are the same span. */
export const uniqueSpans = (where: string) => `(SELECT * FROM ${TRACES} WHERE ${where} LIMIT 1 BY SpanId)`;
export const uniqueLogs = (where: string) => `(SELECT * FROM ${LOGS} WHERE ${where} LIMIT 1 BY LogAttributes['ccotel.record.id'])`;

export const REPORT_QUERIES = {
  overview: {
    title: 'Overview',
    sql: `SELECT
        uniqExact(SpanAttributes['session.id']) AS sessions,
        countIf(SpanName = 'invoke_agent claude-code') AS turns,
        countIf(startsWith(SpanName, 'execute_tool ')) AS tool_calls,
        countIf(startsWith(SpanName, 'chat ')) AS api_responses,
        min(Timestamp) AS first_event,
        max(Timestamp) AS last_event
      FROM ${uniqueSpans('1')}`,
  },
  turns: {
    title: 'Turns by outcome',
    sql: `SELECT SpanAttributes['ccotel.turn.outcome'] AS outcome, count() AS turns
      FROM ${uniqueSpans(`SpanName = 'invoke_agent claude-code'`)}
      GROUP BY outcome ORDER BY turns DESC, outcome`,
  },
  tools: {
    title: 'Tool calls by tool',
    sql: `SELECT SpanAttributes['gen_ai.tool.name'] AS tool, count() AS calls,
        countIf(SpanAttributes['ccotel.tool.outcome'] = 'success') AS success,
        countIf(SpanAttributes['ccotel.tool.outcome'] = 'error') AS error,
        countIf(SpanAttributes['ccotel.tool.outcome'] = 'denied') AS denied,
        countIf(SpanAttributes['ccotel.tool.outcome'] = 'interrupted') AS interrupted,
        countIf(SpanAttributes['ccotel.tool.outcome'] = 'unanswered') AS unanswered,
        round(success / calls, 3) AS success_rate
      FROM ${uniqueSpans(`startsWith(SpanName, 'execute_tool ')`)}
      GROUP BY tool ORDER BY calls DESC, tool`,
  },
  permissionBlocks: {
    title: 'Permission blocks',
    sql: `SELECT LogAttributes['gen_ai.tool.name'] AS tool, LogAttributes['source'] AS source, count() AS blocks
      FROM ${uniqueLogs(`EventName = 'ccotel.permission.blocked'`)}
      GROUP BY tool, source ORDER BY blocks DESC, tool, source`,
  },
  sessionStarts: {
    title: 'Session starts and resume frequency',
    sql: `SELECT count() AS starts, countIf(LogAttributes['source'] = 'resume') AS resumes,
        round(if(starts = 0, 0, resumes / starts), 3) AS resume_frequency
      FROM ${uniqueLogs(`EventName = 'ccotel.session.started'`)}`,
  },
  sessionStates: {
    title: 'Sessions by latest state (most recent first)',
    sql: `SELECT LogAttributes['session.id'] AS session, argMax(LogAttributes['state'], Timestamp) AS state,
        argMax(LogAttributes['reason'], Timestamp) AS reason, max(Timestamp) AS since, count() AS changes
      FROM ${uniqueLogs(`EventName = 'ccotel.session.state_changed'`)}
      GROUP BY session ORDER BY since DESC, session LIMIT 20`,
  },
  failureModes: {
    title: 'Failure modes detected',
    sql: `SELECT LogAttributes['mode'] AS mode, count() AS detections, uniqExact(LogAttributes['session.id']) AS sessions
      FROM ${uniqueLogs(`EventName = 'ccotel.failure_mode.detected'`)}
      GROUP BY mode ORDER BY detections DESC, mode`,
  },
  tokens: {
    title: 'Tokens by model',
    sql: `SELECT SpanAttributes['gen_ai.request.model'] AS model,
        sum(toUInt64OrZero(SpanAttributes['gen_ai.usage.input_tokens'])) AS input,
        sum(toUInt64OrZero(SpanAttributes['gen_ai.usage.output_tokens'])) AS output,
        sum(toUInt64OrZero(SpanAttributes['gen_ai.usage.cache_read.input_tokens'])) AS cache_read,
        sum(toUInt64OrZero(SpanAttributes['gen_ai.usage.cache_creation.input_tokens'])) AS cache_creation
      FROM ${uniqueSpans(`startsWith(SpanName, 'chat ')`)}
      GROUP BY model ORDER BY model`,
  },
  cost: {
    title: 'Cost by model, all history (from the summaries; USD)',
    sql: `SELECT Name AS model, count() AS api_responses, sum(InputTokens + OutputTokens + CacheReadTokens + CacheCreationTokens) AS tokens,
        round(sum(CostUsd), 6) AS cost_usd, max(UnknownModel) = 1 AS unknown_model
      FROM ${USAGE_TABLES.spans} FINAL WHERE Kind = 'chat'
      GROUP BY model ORDER BY cost_usd DESC, model`,
  },
  skipped: {
    title: 'Input lines skipped',
    sql: `SELECT LogAttributes['ccotel.source'] AS source, LogAttributes['reason'] AS reason, count() AS lines,
        uniqExact(LogAttributes['ccotel.source.file']) AS files
      FROM ${uniqueLogs(`EventName = 'ccotel.record.skipped'`)}
      GROUP BY source, reason ORDER BY lines DESC, reason`,
  },
} satisfies Record<string, ReportQuery>;

export type ReportSection = keyof typeof REPORT_QUERIES;
