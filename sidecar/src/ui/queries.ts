// The web view's own questions, those the report module does not answer: blocks, starts and failure modes per
// day and each session's project, times, turns, outcome, state and failure modes, from the summaries as the
// report's figures are (turns and tool calls per day are rows of the report's span groups); one session's spans
// and records, and the detections' detail, which only the raw rows hold (labelled so in the view). (Tokens and
// cost per day and per session come from the report's usage views, report/usage.ts.) Raw rows go through distinct
// ids, the summaries through FINAL, so a repeat is never counted twice.
// Time ranges are not in this SQL: `withRange` (data.ts) applies them to every table read.
import { LOG_RECORD_ID, SESSION_AGENT, USAGE_TABLES } from '../../../schemas/usage.js';
import { uniqueLogs } from '../report/queries.js';

/** One row per span id: repeats of a span (same id) are the same span (at-least-once delivery). */
const uniqueSpans = (where: string) => `(SELECT * FROM otel_traces WHERE ${where} LIMIT 1 BY SpanId)`;


const DAY = `toUnixTimestamp(toStartOfDay(Timestamp, 'UTC'))`;

/** Per day from the summaries kept at insert, as the report's overview counts: all history, not only the raw window. */
export const LOGS_PER_DAY = `SELECT ${DAY} AS day,
    countIf(EventName = 'ccotel.permission.blocked') AS permission_blocks,
    countIf(EventName = 'ccotel.session.started') AS starts,
    countIf(EventName = 'ccotel.session.started' AND Source = 'resume') AS resumes,
    sumMapIf(map(Mode, toUInt64(1)), EventName = 'ccotel.failure_mode.detected') AS failure_modes
  FROM ${USAGE_TABLES.events} FINAL GROUP BY day ORDER BY day`;

/**
 * One row per session with a turn, tool call or API response (the sessions the report counts), from the summaries:
 * its figures stay when its raw rows expire.
 */
export const SESSIONS = `SELECT s.session AS session, s.project AS project, s.agent AS agent, s.repo AS repo, s.branch AS branch, s.start_ms AS start_ms, s.end_ms AS end_ms,
    s.turns AS turns, s.tool_calls AS tool_calls, s.outcome AS outcome,
    l.state AS state, l.resumes AS resumes, l.failure_modes AS failure_modes
  FROM (
    SELECT SessionId AS session,
      argMinIf(Project, Timestamp, Kind = 'turn' AND Project != '') AS project,
      -- Where it was last: a session that changed branch shows the one it ended on.
      argMaxIf(Repository, Timestamp, Repository != '') AS repo,
      argMaxIf(Branch, Timestamp, Branch != '') AS branch,
      ${SESSION_AGENT} AS agent,
      min(toUnixTimestamp64Milli(Timestamp)) AS start_ms,
      max(toUnixTimestamp64Milli(EndTime)) AS end_ms,
      countIf(Kind = 'turn') AS turns,
      countIf(Kind = 'tool') AS tool_calls,
      argMaxIf(Outcome, Timestamp, Kind = 'turn') AS outcome
    FROM ${USAGE_TABLES.spans} FINAL GROUP BY session
  ) AS s
  LEFT JOIN (
    SELECT SessionId AS session,
      argMaxIf(State, Timestamp, EventName = 'ccotel.session.state_changed') AS state,
      countIf(EventName = 'ccotel.session.started' AND Source = 'resume') AS resumes,
      arraySort(groupUniqArrayIf(Mode, EventName = 'ccotel.failure_mode.detected')) AS failure_modes
    FROM ${USAGE_TABLES.events} FINAL
    WHERE EventName IN ('ccotel.session.state_changed', 'ccotel.session.started', 'ccotel.failure_mode.detected')
    GROUP BY session
  ) AS l ON l.session = s.session
  ORDER BY start_ms DESC, session`;

/** Spans of one session cap: a session page stays a page. */
export const SESSION_SPAN_LIMIT = 20_000;

export const SESSION_SPANS = `SELECT TraceId AS trace_id, SpanId AS span_id, ParentSpanId AS parent_span_id, SpanName AS name,
    toUnixTimestamp64Milli(Timestamp) AS start_ms, intDiv(Duration, 1000000) AS duration_ms, StatusCode AS status,
    SpanAttributes AS attributes,
    Events.Name AS event_names, arrayMap(t -> toUnixTimestamp64Milli(t), Events.Timestamp) AS event_times_ms,
    Events.Attributes AS event_attributes
  FROM ${uniqueSpans(`SpanAttributes['session.id'] = {session:String}`)}
  ORDER BY start_ms, span_id LIMIT ${SESSION_SPAN_LIMIT + 1}`;

/**
 * The event facts of `facts` whose raw records (`raw`, the same records over otel_logs) the raw window no longer
 * holds: session, event, time, source, mode and reason of history older than the raw TTL, without the detail.
 */
const factsBeyondRaw = (facts: string, raw: string) => `(SELECT * FROM ${USAGE_TABLES.events} FINAL
  WHERE ${facts} AND RecordId NOT IN (SELECT ${LOG_RECORD_ID} FROM otel_logs WHERE ${raw}))`;

const DETECTED = `EventName = 'ccotel.failure_mode.detected'`;

const SESSION_EVENTS = `EventName IN ('ccotel.session.started', 'ccotel.session.ended', 'ccotel.permission.blocked', 'ccotel.failure_mode.detected')`;

export const SESSION_LOGS = `SELECT * FROM (
    SELECT toUnixTimestamp64Milli(Timestamp) AS time_ms, EventName AS event, TraceId AS trace_id, SpanId AS span_id,
      -- a failure mode's body says what was found (telemetry_gap: what differs, from when)
      if(${DETECTED} AND Body != '', mapUpdate(LogAttributes, map('detail', Body)), LogAttributes) AS attributes
    FROM ${uniqueLogs(`LogAttributes['session.id'] = {session:String} AND (${SESSION_EVENTS} OR EventName IN ('ccotel.session.state_changed', 'ccotel.settings.effective'))`)}
    UNION ALL
    -- the settings files changed while it ran (they name the sessions that ran under them)
    SELECT toUnixTimestamp64Milli(Timestamp), EventName, '', '', mapUpdate(LogAttributes, map('changes', Body))
    FROM ${uniqueLogs(`EventName = 'ccotel.settings.changed' AND has(splitByChar('\\n', LogAttributes['ccotel.settings.sessions']), {session:String})`)}
    UNION ALL
    SELECT toUnixTimestamp64Milli(Timestamp), EventName, '', '',
      mapFilter((key, value) -> value != '', map('session.id', SessionId, 'source', Source, 'mode', Mode, 'reason', Reason))
    FROM ${factsBeyondRaw(`SessionId = {session:String} AND ${SESSION_EVENTS}`, `LogAttributes['session.id'] = {session:String} AND ${SESSION_EVENTS}`)}
  ) ORDER BY time_ms, event LIMIT 10000`;

export const FAILURES = `SELECT * FROM (
    SELECT toUnixTimestamp64Milli(Timestamp) AS time_ms, LogAttributes['mode'] AS mode,
      LogAttributes['session.id'] AS session, LogAttributes['tool_use_id'] AS tool_use_id, LogAttributes['process.pid'] AS pid,
      LogAttributes['process.command_line'] AS command_line, LogAttributes['network.local.port'] AS port,
      LogAttributes['cause'] AS cause, Body AS detail, TraceId AS trace_id
    FROM ${uniqueLogs(DETECTED)}
    UNION ALL
    SELECT toUnixTimestamp64Milli(Timestamp), Mode, SessionId, '', '', '', '', '', '', '' FROM ${factsBeyondRaw(DETECTED, DETECTED)}
  ) ORDER BY time_ms DESC, session LIMIT 10000`;
