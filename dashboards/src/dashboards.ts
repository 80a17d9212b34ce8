/**
 * The ccotel Grafana dashboards as code (@grafana/grafana-foundation-sdk). `npm run dashboards` writes them
 * to dashboards/*.json; test/dashboards/ runs every panel's SQL, macros expanded as the plugin does, on a
 * real ClickHouse loaded with a corpus and checks what comes back.
 */
import {
  DashboardBuilder,
  DatasourceVariableBuilder,
  QueryVariableBuilder,
  RowBuilder,
  VariableRefresh,
  TextBoxVariableBuilder,
  type Dashboard,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { ReduceDataOptionsBuilder } from '@grafana/grafana-foundation-sdk/common';
import { PanelBuilder as StatBuilder } from '@grafana/grafana-foundation-sdk/stat';
import { PanelBuilder as TableBuilder } from '@grafana/grafana-foundation-sdk/table';
import { PanelBuilder as TimeSeriesBuilder } from '@grafana/grafana-foundation-sdk/timeseries';
import { DEFAULTS, INSIGHT_KEYS } from '../../sidecar/src/config.js';
import { INSIGHT_TABLE } from '../../schemas/insights.js';
import { insightsSummarySql } from '../../sidecar/src/report/insights.js';
import { CLICKHOUSE_PLUGIN, ClickHouseQueryBuilder, DATASOURCE } from './clickhouse-query.js';
import {
  ALL,
  DIMENSIONS,
  DIMENSION_FILTER,
  dimensionValuesSql,
  FACTS_TABLES,
  HOST,
  RAW_DETAIL,
  chatFacts,
  eventFacts,
  events,
  metricPoints,
  sessionIdOf,
  shellCommands,
  spanFacts,
  toolCalls,
  turns,
} from './sql.js';

type PanelKind = 'stat' | 'timeseries' | 'table';

interface PanelSpec {
  title: string;
  kind: PanelKind;
  sql: string;
  description?: string;
  unit?: string;
  /** Grid width out of 24. */
  width?: number;
}

function panel(spec: PanelSpec) {
  const query = new ClickHouseQueryBuilder(spec.sql, spec.kind === 'timeseries' ? 'timeSeries' : 'table');
  const builder =
    spec.kind === 'stat'
      ? new StatBuilder().reduceOptions(new ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false))
      : spec.kind === 'timeseries'
        ? new TimeSeriesBuilder()
        : new TableBuilder();
  builder
    .title(spec.title)
    .datasource(DATASOURCE)
    .withTarget(query)
    .height(spec.kind === 'stat' ? 4 : 8)
    .span(spec.width ?? (spec.kind === 'stat' ? 4 : 12));
  if (spec.description) builder.description(spec.description);
  if (spec.unit) builder.unit(spec.unit);
  return builder;
}

function dashboard(uid: string, title: string, rows: Array<[string, PanelSpec[]]>, extra?: (d: DashboardBuilder) => void): Dashboard {
  const builder = new DashboardBuilder(title)
    .uid(uid)
    .tags(['ccotel', 'claude-code'])
    .refresh('1m')
    .time({ from: 'now-24h', to: 'now' })
    .timezone('browser')
    .withVariable(new DatasourceVariableBuilder('datasource').label('ClickHouse').type(CLICKHOUSE_PLUGIN));
  // A board whose figures read the facts can be narrowed to hosts, users, repositories, branches, teams, agents.
  if (rows.some(([, panels]) => panels.some((spec) => spec.sql.includes(DIMENSION_FILTER)))) {
    for (const dimension of DIMENSIONS) {
      builder.withVariable(new QueryVariableBuilder(dimension.variable).label(dimension.label).datasource(DATASOURCE).query(dimensionValuesSql(dimension))
        .multi(true).includeAll(true).allValue(ALL).current({ text: 'All', value: '$__all' }).refresh(VariableRefresh.OnTimeRangeChanged));
    }
  }
  extra?.(builder);
  for (const [rowTitle, panels] of rows) {
    builder.withRow(new RowBuilder(rowTitle));
    for (const spec of panels) builder.withPanel(panel(spec));
  }
  return builder.build();
}

const toolOutcome = "SpanAttributes['ccotel.tool.outcome']";

export function overview(): Dashboard {
  return dashboard('ccotel-overview', 'ccotel: overview', [
    ['Activity', [
      { title: 'Sessions', kind: 'stat', sql: `SELECT uniqExact(SessionId) AS sessions FROM ${spanFacts('turn')}` },
      { title: 'Turns', kind: 'stat', sql: `SELECT count() AS turns FROM ${spanFacts('turn')}` },
      { title: 'Active hosts', kind: 'stat', sql: `SELECT uniqExact(Host) AS hosts FROM ${spanFacts('turn')}` },
      { title: 'Active users', kind: 'stat', sql: `SELECT uniqExact(User) AS users FROM ${spanFacts('turn')}` },
      { title: 'Tool success rate', kind: 'stat', unit: 'percentunit',
        description: 'Tool calls with outcome success / all tool calls',
        sql: `SELECT countIf(Outcome = 'success') / count() AS success_rate FROM ${spanFacts('tool')}` },
      { title: 'Permission blocks', kind: 'stat', sql: `SELECT count() AS blocks FROM ${eventFacts('ccotel.permission.blocked')}` },
      { title: 'Resume frequency', kind: 'stat', unit: 'percentunit',
        description: 'Session starts with source resume / all session starts',
        sql: `SELECT countIf(Source = 'resume') / count() AS resume_rate FROM ${eventFacts('ccotel.session.started')}` },
    ]],
    ['Trends', [
      { title: 'Turns by outcome', kind: 'timeseries',
        sql: `SELECT $__timeInterval(Timestamp) AS time, Outcome AS outcome, count() AS turns
FROM ${spanFacts('turn')} GROUP BY time, outcome ORDER BY time` },
      { title: 'Tokens and cost by model', kind: 'table',
        description: 'From the summaries (all history, past the raw window too); cost from the price table shipped with ccotel (ccotel.cost.usd)',
        sql: `SELECT Name AS model, sum(InputTokens) AS input, sum(OutputTokens) AS output, sum(CacheReadTokens) AS cache_read,
  sum(CacheCreationTokens) AS cache_creation, round(sum(CostUsd), 6) AS cost_usd
FROM ${chatFacts()} GROUP BY model ORDER BY model` },
      { title: 'Cost by model', kind: 'timeseries', unit: 'currencyUSD',
        description: 'From the summaries: the price table\'s figure for each API response',
        sql: `SELECT $__timeInterval(Timestamp) AS time, Name AS model, sum(CostUsd) AS cost_usd
FROM ${chatFacts()} GROUP BY time, model ORDER BY time` },
    ]],
  ]);
}

const session = (attributes: 'SpanAttributes' | 'LogAttributes') => `${sessionIdOf(attributes)} = '\${session_id}'`;

export function sessionDrilldown(): Dashboard {
  return dashboard('ccotel-session', 'ccotel: session', [
    ['Session', [
      { title: 'Turn timeline', kind: 'table', width: 24, description: RAW_DETAIL,
        sql: `SELECT t.Timestamp AS time, t.SpanAttributes['ccotel.turn.outcome'] AS outcome,
  round(t.Duration / 1e9, 3) AS duration_s, ifNull(c.tool_calls, 0) AS tool_calls
FROM ${turns(session('SpanAttributes'))} AS t
LEFT JOIN (SELECT TraceId, count() AS tool_calls FROM ${toolCalls(session('SpanAttributes'))} GROUP BY TraceId) AS c
  ON t.TraceId = c.TraceId
ORDER BY time` },
      { title: 'Tool calls', kind: 'table', description: RAW_DETAIL,
        sql: `SELECT Timestamp AS time, SpanAttributes['gen_ai.tool.name'] AS tool, ${toolOutcome} AS outcome,
  round(Duration / 1e9, 3) AS duration_s
FROM ${toolCalls(session('SpanAttributes'))} ORDER BY time` },
      { title: 'Shell commands', kind: 'table', description: RAW_DETAIL,
        sql: `SELECT Timestamp AS time, SpanAttributes['process.command_line'] AS command,
  SpanAttributes['process.exit.code'] AS exit_code
FROM ${shellCommands(`TraceId IN (SELECT TraceId FROM ${turns(session('SpanAttributes'))})`)} ORDER BY time` },
      { title: 'Failure modes', kind: 'table', description: RAW_DETAIL,
        sql: `SELECT Timestamp AS time, LogAttributes['mode'] AS mode, Body AS detail
FROM ${events('ccotel.failure_mode.detected', session('LogAttributes'))} ORDER BY time` },
      { title: 'Tokens by model', kind: 'table',
        sql: `SELECT Name AS model, sum(InputTokens) AS input, sum(OutputTokens) AS output, sum(CacheReadTokens) AS cache_read,
  sum(CacheCreationTokens) AS cache_creation
FROM ${chatFacts("SessionId = '${session_id}'")} GROUP BY model ORDER BY model` },
    ]],
  ], (d) => d.withVariable(new TextBoxVariableBuilder('session_id').label('Session id')));
}

export function toolsAndPermissions(): Dashboard {
  return dashboard('ccotel-tools', 'ccotel: tools and permissions', [
    ['Tools', [
      { title: 'Calls by tool', kind: 'table',
        sql: `SELECT Name AS tool, count() AS calls,
  round(countIf(Outcome = 'success') / count(), 4) AS success_rate,
  countIf(Outcome = 'error') AS errors, countIf(Outcome = 'denied') AS denied,
  round(quantileExact(0.95)(toUnixTimestamp64Nano(EndTime) - toUnixTimestamp64Nano(Timestamp)) / 1e9, 3) AS p95_s
FROM ${spanFacts('tool')} GROUP BY tool ORDER BY calls DESC, tool` },
      { title: 'Tool calls by outcome', kind: 'timeseries',
        sql: `SELECT $__timeInterval(Timestamp) AS time, Outcome AS outcome, count() AS calls
FROM ${spanFacts('tool')} GROUP BY time, outcome ORDER BY time` },
    ]],
    ['Permissions', [
      { title: 'Permission blocks by tool and source', kind: 'table',
        sql: `SELECT Name AS tool, Source AS source, count() AS blocks
FROM ${eventFacts('ccotel.permission.blocked')} GROUP BY tool, source ORDER BY blocks DESC, tool, source` },
      { title: 'Permission blocks', kind: 'timeseries',
        sql: `SELECT $__timeInterval(Timestamp) AS time, count() AS blocks
FROM ${eventFacts('ccotel.permission.blocked')} GROUP BY time ORDER BY time` },
    ]],
  ]);
}

export function failureModes(): Dashboard {
  return dashboard('ccotel-failure-modes', 'ccotel: failure modes', [
    ['Failure modes', [
      { title: 'Detections by mode', kind: 'timeseries',
        sql: `SELECT $__timeInterval(Timestamp) AS time, Mode AS mode, count() AS detections
FROM ${eventFacts('ccotel.failure_mode.detected')} GROUP BY time, mode ORDER BY time` },
      { title: 'Detections by mode and host', kind: 'table',
        sql: `SELECT Mode AS mode, Host AS host, count() AS detections, uniqExact(SessionId) AS sessions
FROM ${eventFacts('ccotel.failure_mode.detected')} GROUP BY mode, host ORDER BY detections DESC, mode, host` },
      { title: 'Recent detections', kind: 'table', width: 24,
        sql: `SELECT Timestamp AS time, SessionId AS session, Host AS host, Mode AS mode
FROM ${eventFacts('ccotel.failure_mode.detected')} ORDER BY time DESC LIMIT 100` },
      { title: 'Telemetry gaps', kind: 'table', width: 24,
        description: `Sessions where Claude Code's own telemetry disagrees with the transcript (ccotel run: requests not exported and from when, exported twice, a model renamed, tokens). ${RAW_DETAIL}`,
        sql: `SELECT Timestamp AS time, LogAttributes['session.id'] AS session, ${HOST} AS host, LogAttributes['cause'] AS differs, Body AS detail
FROM ${events('ccotel.failure_mode.detected', "LogAttributes['mode'] = 'telemetry_gap'")} ORDER BY time DESC LIMIT 100` },
      { title: 'Abandoned sessions by host', kind: 'table',
        description: 'Sessions that went idle with no SessionEnd (terminal loss, kill -9, crash)',
        sql: `SELECT Host AS host, uniqExact(SessionId) AS abandoned_sessions
FROM ${eventFacts('ccotel.session.ended', "Reason = 'abandoned'")} GROUP BY host ORDER BY abandoned_sessions DESC, host` },
    ]],
  ]);
}

/** The insights board's thresholds as it opens: the configuration's defaults, by variable name. */
export const INSIGHT_VARIABLES: Record<string, string> = Object.fromEntries(
  Object.entries(INSIGHT_KEYS).map(([name, key]) => [key, String(DEFAULTS.insights[name as keyof typeof DEFAULTS.insights])]),
);

/**
 * `report insights` as a board (docs/REPORT.md "Insights"): the same SQL over the facts, its thresholds variables
 * that start at the configuration's defaults.
 */
export function insights(): Dashboard {
  // A session counts when its facts in the range meet the attribution variables; its slots, to the 15 minutes.
  const summary = insightsSummarySql(
    { slots: INSIGHT_TABLE, when: `$__timeFilter(Slot) AND SessionId IN (SELECT SessionId FROM ${FACTS_TABLES.spans} WHERE $__timeFilter(Timestamp) AND ${DIMENSION_FILTER})` },
    (name) => `\${${INSIGHT_KEYS[name]}}`,
  );
  return dashboard('ccotel-insights', 'ccotel: insights', [
    ['Where time and money go', [
      { title: 'Insights', kind: 'table', width: 24,
        description: 'Each pattern of `ccotel report insights` (docs/REPORT.md): what it counts, its sessions and turns, the tokens and cost of those turns, its time (ms)',
        sql: summary },
      { title: 'Tool errors by class and tool', kind: 'table',
        sql: `SELECT Name AS tool, ErrorClass AS class, count() AS errors
FROM ${spanFacts('tool', "Outcome = 'error'")} GROUP BY tool, class ORDER BY errors DESC, tool, class` },
      { title: 'Tool errors by class', kind: 'timeseries',
        sql: `SELECT $__timeInterval(Timestamp) AS time, ErrorClass AS class, count() AS errors
FROM ${spanFacts('tool', "Outcome = 'error'")} GROUP BY time, class ORDER BY time` },
      { title: 'Cache read share by project and model', kind: 'table',
        sql: `SELECT Project AS project, Name AS model, sum(InputTokens) AS input, sum(CacheReadTokens) AS cache_read, sum(CacheCreationTokens) AS cache_creation,
  round(sum(CacheReadTokens) / greatest(1, sum(InputTokens + CacheReadTokens + CacheCreationTokens)), 4) AS read_share
FROM ${chatFacts()} GROUP BY project, model ORDER BY project, model` },
    ]],
  ], (d) => {
    for (const [key, value] of Object.entries(INSIGHT_VARIABLES)) d.withVariable(new TextBoxVariableBuilder(key).label(key).defaultValue(value));
  });
}

/**
 * Sidecar metrics this board reads (DESIGN §4 `ccotel.sidecar.*`): ccotel.sidecar.records (sum; source,
 * result), ccotel.sidecar.lag (gauge, bytes; source), ccotel.sidecar.export.failures (sum; sink).
 */
export function sidecarHealth(): Dashboard {
  return dashboard('ccotel-sidecar-health', 'ccotel: sidecar health', [
    ['Sidecars', [
      { title: 'Last record per host', kind: 'table', width: 24,
        description: `A host whose sidecar stopped sending shows a growing age. ${RAW_DETAIL}`,
        sql: `SELECT host, max(last) AS last_seen, dateDiff('second', max(last), now()) AS age_s FROM (
  SELECT ${HOST} AS host, max(Timestamp) AS last FROM otel_traces WHERE $__timeFilter(Timestamp) GROUP BY host
  UNION ALL
  SELECT ${HOST}, max(Timestamp) FROM otel_logs
  WHERE toStartOfFiveMinutes(Timestamp) >= toStartOfFiveMinutes($__fromTime) AND $__timeFilter(Timestamp) GROUP BY 1
  UNION ALL
  SELECT ${HOST}, max(TimeUnix) FROM otel_metrics_sum WHERE $__timeFilter(TimeUnix) GROUP BY 1
) GROUP BY host ORDER BY host` },
      { title: 'Unusable input records', kind: 'timeseries', description: RAW_DETAIL,
        sql: `SELECT $__timeInterval(TimeUnix) AS time, concat(Attributes['source'], ': ', Attributes['result']) AS reason,
  sum(Value) AS records
FROM ${metricPoints('otel_metrics_sum', 'ccotel.sidecar.records')} GROUP BY time, reason ORDER BY time` },
      { title: 'Ingest lag', kind: 'timeseries', unit: 'bytes', description: RAW_DETAIL,
        sql: `SELECT $__timeInterval(TimeUnix) AS time, ${HOST} AS host, max(Value) AS lag_bytes
FROM ${metricPoints('otel_metrics_gauge', 'ccotel.sidecar.lag')} GROUP BY time, host ORDER BY time` },
      { title: 'Export failures', kind: 'timeseries', description: RAW_DETAIL,
        sql: `SELECT $__timeInterval(TimeUnix) AS time, Attributes['sink'] AS sink, sum(Value) AS failures
FROM ${metricPoints('otel_metrics_sum', 'ccotel.sidecar.export.failures')} GROUP BY time, sink ORDER BY time` },
    ]],
  ]);
}

/** File name (without .json) → dashboard. */
export const DASHBOARDS: Record<string, () => Dashboard> = {
  overview,
  'session-drilldown': sessionDrilldown,
  'tools-and-permissions': toolsAndPermissions,
  'failure-modes': failureModes,
  insights,
  'sidecar-health': sidecarHealth,
};

export function renderDashboardFiles(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(DASHBOARDS).map(([name, build]) => [`${name}.json`, `${JSON.stringify(build(), null, 2)}\n`]),
  );
}
