/**
 * SQL building blocks over the exporter tables, using only DESIGN.md names. Every block keeps one row per
 * id (SpanId, or the log record's `ccotel.record.id`): delivery is at-least-once, so the tables may hold
 * repeats. Time filters use the plugin's macros; log queries also bound the five-minute sort key, which
 * no macro does (pipeline-reference §1.1).
 */

import { TURN_AGENT, TURN_SPANS } from '../../schemas/usage.js';

/** Spans in the dashboard's time range matching `where`, one row per SpanId. */
export function spans(...conditions: Array<string | undefined>): string {
  const where = ['$__timeFilter(Timestamp)', ...conditions.filter(Boolean)].join(' AND ');
  return `(SELECT * FROM otel_traces WHERE ${where} LIMIT 1 BY SpanId)`;
}

export const turns = (extra?: string) => spans(`SpanName IN (${TURN_SPANS.map((name) => `'${name}'`).join(', ')})`, extra);
export const toolCalls = (extra?: string) => spans(`startsWith(SpanName, 'execute_tool ')`, extra);
export const shellCommands = (extra?: string) => spans(`startsWith(SpanName, 'shell ')`, extra);

/** Log records with this event name in the time range, one row per record id. */
export function events(eventName: string, extra?: string): string {
  const where = [
    'toStartOfFiveMinutes(Timestamp) >= toStartOfFiveMinutes($__fromTime)',
    '$__timeFilter(Timestamp)',
    `EventName = '${eventName}'`,
    extra,
  ].filter(Boolean).join(' AND ');
  return `(SELECT * FROM otel_logs WHERE ${where} LIMIT 1 BY LogAttributes['ccotel.record.id'])`;
}

/** Metric points of one name in the time range, one row per point id (kept in the exemplar). */
export function metricPoints(table: 'otel_metrics_sum' | 'otel_metrics_gauge', metricName: string): string {
  return (
    `(SELECT * FROM ${table} WHERE $__timeFilter(TimeUnix) AND MetricName = '${metricName}' ` +
    `LIMIT 1 BY Exemplars.FilteredAttributes[1]['ccotel.point.id'])`
  );
}

export const sessionIdOf = (attributes: 'SpanAttributes' | 'LogAttributes') => `${attributes}['session.id']`;
export const HOST = "ResourceAttributes['host.name']";

/**
 * The attribution variables (DESIGN §11) and the agent (§12) of the boards that read the facts: each a multi-value
 * choice of the values the facts hold. "All" is the custom value ALL, which Grafana puts in as it is (no quoting),
 * and which lets every row through, one that names no value too; a choice of values lets through the rows with one
 * of them. The agent is the session's (its turn facts name it): it lets through every row of the sessions chosen.
 */
interface Dimension {
  variable: string;
  label: string;
  column: string;
  /** The value is the session's, on its turn facts only. */
  ofSession?: true;
}
export const DIMENSIONS: readonly Dimension[] = [
  { variable: 'host', label: 'Host', column: 'Host' },
  { variable: 'user', label: 'User', column: 'User' },
  { variable: 'repo', label: 'Repository', column: 'Repository' },
  { variable: 'branch', label: 'Branch', column: 'Branch' },
  { variable: 'team', label: 'Team', column: "Resource['team']" },
  { variable: 'agent', label: 'Agent', column: TURN_AGENT, ofSession: true },
];
export const ALL = "'__all__'";
const chosen = (variable: string) => `\${${variable}:singlequote}`;
/** The attribution variables as a board opens (each at All), formatted as Grafana puts them in. */
export const ALL_VARIABLES: Record<string, string> = Object.fromEntries(DIMENSIONS.map(({ variable }) => [variable, ALL]));
/** The facts rows the dashboard's attribution variables let through. */
export const DIMENSION_FILTER = DIMENSIONS.map(({ variable, column, ofSession }) => {
  const rows = `${column} IN (${chosen(variable)})`;
  return `(${ALL} IN (${chosen(variable)}) OR ${ofSession ? `SessionId IN (SELECT SessionId FROM ccotel_span_facts WHERE Kind = 'turn' AND ${rows})` : rows})`;
}).join(' AND ');
/** The query listing a variable's values: those the span facts (a session's: its turn facts) hold in the dashboard's time range. */
export const dimensionValuesSql = ({ column, ofSession }: Dimension): string =>
  `SELECT DISTINCT ${column} AS value FROM ccotel_span_facts WHERE $__timeFilter(Timestamp)${ofSession ? " AND Kind = 'turn'" : ''} AND ${column} != '' ORDER BY value`;

/** The facts tables as the boards name them (the database the datasource is set to). */
export const FACTS_TABLES = { spans: 'ccotel_span_facts', events: 'ccotel_event_facts' };

/**
 * Span facts of one kind (`turn`, `tool`, `chat`) from the summaries kept at insert (schemas/usage.ts): all history,
 * also past the raw tables' window, each span once (FINAL); chats priced by the sidecar (`ccotel.cost.usd`).
 * Every figure reads these or eventFacts, so none changes when the raw TTL runs.
 */
export function spanFacts(kind: 'turn' | 'tool' | 'chat', extra?: string): string {
  return `(SELECT * FROM ccotel_span_facts FINAL WHERE ${['$__timeFilter(Timestamp)', `Kind = '${kind}'`, extra, DIMENSION_FILTER].filter(Boolean).join(' AND ')})`;
}
export const chatFacts = (extra?: string): string => spanFacts('chat', extra);

/** Event facts (permission blocks, session starts and ends, detections) with this name, each record once. */
export function eventFacts(eventName: string, extra?: string): string {
  return `(SELECT * FROM ccotel_event_facts FINAL WHERE ${['$__timeFilter(Timestamp)', `EventName = '${eventName}'`, extra, DIMENSION_FILTER].filter(Boolean).join(' AND ')})`;
}

/** The description of a panel of detail only the raw tables hold (kept raw_ttl_days). */
export const RAW_DETAIL = 'Detail from the raw tables: kept for raw_ttl_days (30 days by default), then gone';
