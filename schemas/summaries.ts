/**
 * ccotel's own long-lived tables: masked per-session summaries kept for audit (DESIGN §9) after the raw
 * otel_* rows have expired. They hold only facts — ids, names, counts, times, outcomes — never content.
 *
 * - `ccotel_session_days`: one row per session and day, recomputed from the raw tables while that day's raw
 *   rows are all still there, then kept as it was. It is what lets a summary survive raw-data expiry.
 * - `ccotel_session_summaries`: one row per session, the sum of its days.
 *
 * Both are ReplacingMergeTree(UpdatedAt): a refresh inserts a newer version; read them with FINAL.
 * sidecar/src/retention/ fills them.
 */
import { distributedDdl, ident, renderContext, ttlClause, validateTtlDays, type RenderContext } from './clickhouse.js';

export const SUMMARY_TABLES = {
  days: 'ccotel_session_days',
  summaries: 'ccotel_session_summaries',
} as const;

/** No TTL: the summaries keep all history unless the user sets one (DESIGN §9). */
export const DEFAULT_SUMMARY_TTL_DAYS = 0;

export interface SummarySchemaOptions {
  database?: string;
  cluster?: string;
  /** How long summaries are kept after a session's last activity; 0 (the default) keeps them forever. */
  summaryTtlDays?: number;
}

/** Longest host, user or project value kept (characters). */
export const SUMMARY_TEXT_CAP = 256;

/** Facts both tables hold, in column order (the days table adds `Day`, summaries add `State`). */
const FACT_COLUMNS = [
  'SessionId String CODEC(ZSTD(1))',
  'Host LowCardinality(String) CODEC(ZSTD(1))',
  'User LowCardinality(String) CODEC(ZSTD(1))',
  "Project String COMMENT 'working directory of the session (as masked by the sidecar), capped' CODEC(ZSTD(1))",
  "Repository String COMMENT 'vcs.repository.url.full of its last span (of the day) that names one' CODEC(ZSTD(1))",
  "Branch String COMMENT 'vcs.ref.head.name of its last span (of the day) that names one' CODEC(ZSTD(1))",
  "Branches Array(String) COMMENT 'every branch its spans (of the day) name, sorted' CODEC(ZSTD(1))",
  "Ticket String COMMENT 'ccotel.ticket of its last span (of the day) that names one' CODEC(ZSTD(1))",
  "Resource Map(LowCardinality(String), String) COMMENT 'resource attributes of its last span (of the day), as in ccotel_span_facts' CODEC(ZSTD(1))",
  'FirstSeen DateTime64(3) CODEC(Delta, ZSTD(1))',
  'LastSeen DateTime64(3) CODEC(Delta, ZSTD(1))',
  'Turns UInt32',
  "TurnOutcomes Map(LowCardinality(String), UInt32) COMMENT 'turns by ccotel.turn.outcome'",
  'ToolCalls UInt32',
  "ToolOutcomes Map(LowCardinality(String), UInt32) COMMENT 'tool calls by ccotel.tool.outcome'",
  'PermissionBlocks UInt32',
  "Starts UInt32 COMMENT 'ccotel.session.started records, every source'",
  "Resumes UInt32 COMMENT 'ccotel.session.started records with source resume'",
  "InputTokens Map(LowCardinality(String), UInt64) COMMENT 'by gen_ai.request.model'",
  'OutputTokens Map(LowCardinality(String), UInt64)',
  'CacheReadTokens Map(LowCardinality(String), UInt64)',
  'CacheCreationTokens Map(LowCardinality(String), UInt64)',
  "CostUsd Map(LowCardinality(String), Float64) COMMENT 'ccotel.cost.usd by model'",
  "ReportedCostUsd Float64 COMMENT 'Claude Code''s own stated cost of the session (running total), 0 if none'",
  'LinesAdded UInt64',
  'LinesRemoved UInt64',
  "FailureModes Map(LowCardinality(String), UInt32) COMMENT 'ccotel.failure_mode.detected records by mode'",
  "EndReason LowCardinality(String) COMMENT 'reason of the last ccotel.session.ended record, empty if none'",
  "EndedAt DateTime64(3) COMMENT 'time of that record, 0 if none'",
];

const VERSION_COLUMNS = [
  "ContentHash UInt64 COMMENT 'hash of the facts: a refresh that finds the same hash writes nothing'",
  'UpdatedAt DateTime64(3)',
];

function replacingTable(ctx: RenderContext, name: string, columns: string[], tail: string[]): string {
  const body = columns.map((c) => `    ${c}`).join(',\n');
  return (
    `CREATE TABLE IF NOT EXISTS ${ctx.storage(name)}${ctx.onCluster} (\n${body}\n) ` +
    `ENGINE = ${ctx.engine('ReplacingMergeTree', 'UpdatedAt')}\n${tail.filter(Boolean).join('\n')}`
  );
}

/** CREATE … IF NOT EXISTS for the summary tables (after the database exists; see otelTablesDdl). */
export function summaryTablesDdl(opts: SummarySchemaOptions = {}): string[] {
  const ctx = renderContext(opts);
  const ttlDays = validateTtlDays(opts.summaryTtlDays ?? DEFAULT_SUMMARY_TTL_DAYS, 'summaryTtlDays');
  const [sessionId, ...facts] = FACT_COLUMNS;
  const bySession = 'cityHash64(SessionId)';
  return [
    replacingTable(ctx, SUMMARY_TABLES.days, [sessionId, 'Day Date', ...facts, ...VERSION_COLUMNS], [
      // The key is immutable per row, so a newer version always lands in the same partition as the old.
      'PARTITION BY toYYYYMM(Day)',
      'ORDER BY (SessionId, Day)',
      ttlClause(ttlDays, 'Day'),
      'SETTINGS index_granularity = 8192',
    ]),
    ...distributedDdl(ctx, SUMMARY_TABLES.days, bySession),
    replacingTable(
      ctx,
      SUMMARY_TABLES.summaries,
      [...FACT_COLUMNS, "State LowCardinality(String) COMMENT 'open | ended | abandoned'", ...VERSION_COLUMNS],
      [
        // Not partitioned: LastSeen moves, and ReplacingMergeTree replaces only within a partition.
        'ORDER BY (SessionId)',
        ttlClause(ttlDays, 'toDateTime(LastSeen)'),
        'SETTINGS index_granularity = 8192',
      ],
    ),
    ...distributedDdl(ctx, SUMMARY_TABLES.summaries, bySession),
  ];
}

/** Columns added after the first release of these tables: a store made then gets them (idempotent). */
const ADDED_COLUMNS = FACT_COLUMNS.filter((c) => /^(CostUsd|ReportedCostUsd|LinesAdded|LinesRemoved|Repository|Branch|Branches|Ticket|Resource) /.test(c));

export function summaryUpgradeDdl(opts: SummarySchemaOptions = {}): string[] {
  const ctx = renderContext(opts);
  const tables = [SUMMARY_TABLES.days, SUMMARY_TABLES.summaries];
  const targets = tables.flatMap((name) => [ctx.storage(name), ...(ctx.cluster ? [`${ident(ctx.database)}.${ident(name)}`] : [])]);
  return targets.map((table) =>
    `ALTER TABLE ${table}${ctx.onCluster} ${ADDED_COLUMNS.map((c) => `ADD COLUMN IF NOT EXISTS ${c.replace(/ CODEC\(.*\)$/, '')}`).join(', ')}`);
}
