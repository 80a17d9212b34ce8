/**
 * What `report insights` reads (docs/REPORT.md "Insights"): per session and 15-minute slot, the patterns' hits and
 * the figures their breakdowns sum, computed from the facts (schemas/usage.ts) over each session's whole history by
 * the refresh (sidecar/src/retention/insight-slots.ts). The thresholds are applied when the slots are read, so a
 * changed threshold needs no refresh. A slot of 15 minutes lies within one local day in every time zone (every
 * zone's offset is a multiple of 15 minutes): `--since`/`--until` stay exact.
 *
 * ReplacingMergeTree(UpdatedAt): a refresh writes a session's slots again, whole (a pattern such as a retry loop
 * spans the session); a slot once written always has facts, so it is never left behind. Read with FINAL. Facts only
 * (ids, names, numbers, times, the rules and tools the facts hold), never content.
 */
import { distributedDdl, ident, renderContext, ttlClause, validateTtlDays } from './clickhouse.js';
import { DEFAULT_SUMMARY_TTL_DAYS, type SummarySchemaOptions } from './summaries.js';

export const INSIGHT_TABLE = 'ccotel_insight_slots';


export const INSIGHT_COLUMNS = [
  'SessionId String CODEC(ZSTD(1))',
  "Slot DateTime COMMENT 'start of the 15 minutes (UTC)'",
  "Project String COMMENT 'the session''s first project' CODEC(ZSTD(1))",
  "Repo String COMMENT 'the session''s last repository' CODEC(ZSTD(1))",
  "User String COMMENT 'the session''s last OS user' CODEC(ZSTD(1))",
  // Each hit of a pattern in the slot, found over the session's whole history (docs/REPORT.md). Repeats: retry_loop's
  // failing calls of its input in the session, compaction_churn's compactions of the session. Tokens and Cost: of its
  // turn, every response.
  `Hits Nested(
    Pattern LowCardinality(String),
    TraceId String,
    Time DateTime64(3),
    Ms UInt64,
    Key String,
    Detail String,
    Amount UInt64,
    After UInt64,
    Repeats UInt32,
    Tokens UInt64,
    Cost Float64
  )`,
  // Tool calls by tool: not_found's and slow_tools' breakdowns (Durations: every call's, ms).
  `Tools Nested(
    Name LowCardinality(String),
    Calls UInt32,
    Errors UInt32,
    NotFound UInt32,
    WaitedMs UInt64,
    Durations Array(UInt64)
  )`,
  // API responses by model: cache_efficiency's figures, what its cache reads saved and what caching its uncached input
  // would save (each response's tokens at its day's prices), its turns and (Examples) the five with the most uncached input.
  `Models Nested(
    Name LowCardinality(String),
    Chats UInt32,
    InputTokens UInt64,
    CacheReadTokens UInt64,
    CacheCreationTokens UInt64,
    SavedUsd Float64,
    WouldSaveUsd Float64,
    Turns Array(Tuple(TraceId String, Tokens UInt64, Cost Float64)),
    Examples Array(Tuple(TraceId String, Time DateTime64(3), InputTokens UInt64))
  )`,
  // Permission refusals by source and tool: permission_friction's breakdown.
  `Refusals Nested(
    Source LowCardinality(String),
    Tool LowCardinality(String),
    Count UInt32
  )`,
  "ContentHash UInt64 COMMENT 'hash of the row: a refresh that finds the same writes nothing'",
  'UpdatedAt DateTime64(3)',
];

/** CREATE … IF NOT EXISTS for the slots table (and its Distributed table on a cluster). */
export function insightTableDdl(opts: SummarySchemaOptions = {}): string[] {
  const ctx = renderContext(opts);
  const ttlDays = validateTtlDays(opts.summaryTtlDays ?? DEFAULT_SUMMARY_TTL_DAYS, 'summaryTtlDays');
  return [
    `CREATE TABLE IF NOT EXISTS ${ctx.storage(INSIGHT_TABLE)}${ctx.onCluster} (\n${INSIGHT_COLUMNS.map((c) => `    ${c}`).join(',\n')}\n) ` +
      `ENGINE = ${ctx.engine('ReplacingMergeTree', 'UpdatedAt')}\n` +
      // The key is immutable per row, so a newer version always lands in the same partition as the old.
      ['PARTITION BY toYYYYMM(Slot)', 'ORDER BY (SessionId, Slot)', ttlClause(ttlDays, 'Slot'), 'SETTINGS index_granularity = 8192'].filter(Boolean).join('\n'),
    ...distributedDdl(ctx, INSIGHT_TABLE, 'cityHash64(SessionId)'),
  ];
}

/** The name readers use (the Distributed table on a cluster). */
export const insightTableName = (database: string): string => `${ident(database)}.${ident(INSIGHT_TABLE)}`;
