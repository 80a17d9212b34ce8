/**
 * Summaries maintained at insert (DESIGN §9): materialized views copy the facts of every turn, tool call and
 * API response (`ccotel_span_facts`), and of the log records the session summaries count
 * (`ccotel_event_facts`), out of each block inserted into otel_traces / otel_logs. A view sees the block as it
 * is inserted, before the raw table's TTL drops old rows, so a first backfill of a year of history lands here
 * even though its detail rows expire at once. The same DDL works wherever the rows come from: the sidecar's
 * embedded store, or a ClickHouse server the Collector's exporter writes to.
 *
 * Facts only (ids, names, numbers, times), never content; kept as long as the session summaries. Both tables
 * are ReplacingMergeTree keyed by the span or record id: a repeat (at-least-once delivery, a re-read) replaces
 * itself. Read them with FINAL.
 */
import { distributedDdl, ident, OTEL_TABLES, renderContext, ttlClause, validateTtlDays, type RenderContext } from './clickhouse.js';
import { AGENTS, DEFAULT_AGENT, turnSpanName } from '../sidecar/src/semconv.js';
import { DEFAULT_SUMMARY_TTL_DAYS, SUMMARY_TEXT_CAP } from './summaries.js';

export const USAGE_TABLES = {
  spans: 'ccotel_span_facts',
  spansMv: 'ccotel_span_facts_mv',
  /**
   * Spans a gateway sends before its tail sampler (collector-config/gateway.yaml, `clickhouse/facts`): a Null table
   * (it keeps nothing) whose view makes the facts of every span, kept or not, of a trace the gateway still held
   * undecided when it was killed, too. The facts then never depend on sampling; otel_traces keeps the detail of the
   * traces kept.
   */
  spanFeed: 'ccotel_span_feed',
  spanFeedMv: 'ccotel_span_feed_facts_mv',
  events: 'ccotel_event_facts',
  eventsMv: 'ccotel_event_facts_mv',
  /**
   * Spans and log records an embedded store's sink writes past its raw window (a backfill of old history): Null tables
   * whose views make their facts, so that rows the raw TTL would drop at once are never written, merged and dropped.
   */
  eventFeed: 'ccotel_event_feed',
  eventFeedMv: 'ccotel_event_feed_facts_mv',
} as const;

/** The root span of a turn of each agent observed: a turn fact's Name is its agent. */
export const TURN_SPANS = Object.keys(AGENTS).map((agent) => turnSpanName(agent as keyof typeof AGENTS));
const TURN_SPAN_LIST = TURN_SPANS.map((name) => `'${name}'`).join(', ');
/**
 * A session's agent, as an aggregate over its span facts: its latest turn's. A session whose turns name none (facts
 * before version 3, or no turn at all) is Claude Code's, the only agent then.
 */
/** The agent of a turn fact: its Name (empty in facts before version 4: Claude Code's). */
export const TURN_AGENT = `if(Name = '', '${DEFAULT_AGENT}', Name)`;
export const SESSION_AGENT = `if(argMaxIf(Name, Timestamp, Kind = 'turn') = '', '${DEFAULT_AGENT}', argMaxIf(Name, Timestamp, Kind = 'turn'))`;
export const TOOL_SPAN_PREFIX = 'execute_tool ';
export const CHAT_SPAN_PREFIX = 'chat ';

/** Log records the summaries count. */
export const SUMMARY_EVENTS = [
  'ccotel.permission.blocked',
  'ccotel.session.started',
  'ccotel.session.ended',
  'ccotel.session.state_changed',
  'ccotel.failure_mode.detected',
  'ccotel.cost.reported',
  'ccotel.record.skipped',
  'ccotel.compaction.occurred',
] as const;

/** Skipped input is a figure too, and is often of no session (a line that did not parse). */
const SKIPPED = 'ccotel.record.skipped';

/**
 * The version of the views (their comment): a store whose views carry another is upgraded when it is opened
 * (retention/facts.ts): new columns added, the views made again, the facts of the raw rows still there rebuilt.
 */
export const FACTS_VERSION = 'ccotel facts 5';

/** A chat's input tokens without cache reads and writes (the provider's `input_tokens`; `gen_ai.usage.input_tokens` includes them). */
export const UNCACHED_INPUT_ATTRIBUTE = 'ccotel.usage.uncached.input_tokens';
/**
 * Span attribute naming the session a chat's rows carried when the chat was stored in no session (a warmup under a
 * fresh id, before every chat got the session its rows name): still read, for the rows stored then.
 */
export const TRANSCRIPT_SESSION_ATTRIBUTE = 'ccotel.transcript.session_id';

/**
 * Attribution (DESIGN §11) a span carries: where its session was at the row that made it, and the resource
 * attributes given beyond the ones with columns of their own (OTEL_RESOURCE_ATTRIBUTES: team, cost_center, …).
 */
export const ATTRIBUTION_COLUMNS = [
  "Repository String COMMENT 'vcs.repository.url.full (normalised, no credentials), capped' CODEC(ZSTD(1))",
  "Branch String COMMENT 'vcs.ref.head.name, capped' CODEC(ZSTD(1))",
  "Ticket String COMMENT 'ccotel.ticket, capped' CODEC(ZSTD(1))",
  "Resource Map(LowCardinality(String), String) COMMENT 'resource attributes but service.*, host.*, user.*, telemetry.*, process.* and ccotel.*, values capped' CODEC(ZSTD(1))",
];

/** Resource attributes the facts leave out of `Resource`: they have columns (Host, User) or name the sender, not the work. */
const OWN_RESOURCE_KEYS = "match(k, '^(service|host|user|telemetry|process|os|ccotel)\\\\.')";

const SPAN_COLUMNS = [
  'SpanId String CODEC(ZSTD(1))',
  'Timestamp DateTime64(9) CODEC(Delta, ZSTD(1))',
  "EndTime DateTime64(9) CODEC(Delta, ZSTD(1))",
  'SessionId String CODEC(ZSTD(1))',
  'Host LowCardinality(String) CODEC(ZSTD(1))',
  'User LowCardinality(String) CODEC(ZSTD(1))',
  "Project String COMMENT 'ccotel.cwd of the span (masked by the sidecar), capped' CODEC(ZSTD(1))",
  ...ATTRIBUTION_COLUMNS,
  "Kind LowCardinality(String) COMMENT 'turn | tool | chat'",
  "Name LowCardinality(String) COMMENT 'the model of a chat, the tool of a tool call, the agent of a turn (empty before facts 4: claude-code)'",
  "Outcome LowCardinality(String) COMMENT 'ccotel.turn.outcome / ccotel.tool.outcome'",
  'InputTokens UInt64',
  'OutputTokens UInt64',
  'CacheReadTokens UInt64',
  "CacheCreationTokens UInt64 COMMENT 'all cache writes, 5-minute and 1-hour'",
  "CacheCreation1hTokens UInt64 COMMENT 'of those, 1-hour cache writes'",
  "CostUsd Float64 COMMENT 'ccotel.cost.usd'",
  "UnknownModel UInt8 COMMENT 'ccotel.cost.unknown_model: no price known, CostUsd is 0'",
  "ReportedCostUsd Float64 COMMENT 'costUSD Claude Code wrote on the row (older releases), 0 if none'",
  // Facts 5: what `report insights` (docs/REPORT.md) finds patterns in. Keys and classes, never the input itself.
  "TraceId String COMMENT 'the turn (one trace per turn)' CODEC(ZSTD(1))",
  "InputKey UInt64 COMMENT 'tool: cityHash64 of its tool and normalised input (Bash: the command, blanks collapsed; others: the input without description); 0 when the input is not stored'",
  "Rule String COMMENT 'tool: the permissions.allow rule that would let it run unasked (Bash(program word:*), WebFetch(domain:host), else the tool), capped' CODEC(ZSTD(1))",
  "FileHash UInt64 COMMENT 'file tools (Read, Edit, MultiEdit, Write, NotebookEdit): cityHash64 of the path; 0 otherwise'",
  "ErrorClass LowCardinality(String) COMMENT 'tool with outcome error: not_found | permission | timeout | other | unknown (no error text stored)'",
  "Asked UInt8 COMMENT 'tool: the user was asked to allow it (a PermissionRequest hook on the span, or Claude Code''s decision source user_*)'",
  "WaitedMs UInt64 COMMENT 'tool: time blocked on the user (ccotel.native.blocked_on_user_ms), 0 when unknown'",
  "ResultLength UInt64 COMMENT 'tool: characters of its result (ccotel.tool.output.length)'",
];

const EVENT_COLUMNS = [
  'RecordId String CODEC(ZSTD(1))',
  'Timestamp DateTime64(9) CODEC(Delta, ZSTD(1))',
  'SessionId String CODEC(ZSTD(1))',
  'Host LowCardinality(String) CODEC(ZSTD(1))',
  'User LowCardinality(String) CODEC(ZSTD(1))',
  ...ATTRIBUTION_COLUMNS,
  'EventName LowCardinality(String)',
  "Source LowCardinality(String) COMMENT 'source attribute (session starts, permission blocks)'",
  "Mode LowCardinality(String) COMMENT 'failure mode'",
  "Reason LowCardinality(String) COMMENT 'session end reason'",
  "ReportedCostUsd Float64 COMMENT 'ccotel.cost.reported: Claude Code''s own session total so far'",
  "ReportedCostByModel Map(LowCardinality(String), Float64) COMMENT 'ccotel.cost.reported: the same by model'",
  "LinesAdded UInt64 COMMENT 'ccotel.cost.reported: lines added so far'",
  'LinesRemoved UInt64',
  "Name LowCardinality(String) COMMENT 'the tool of a permission block, the source of skipped input'",
  "State LowCardinality(String) COMMENT 'the new state of a session state change'",
  "Count UInt64 COMMENT 'input lines a skipped-input record stands for'",
  "FileHash UInt64 COMMENT 'cityHash64 of the file skipped input came from (files are counted, never named)'",
  "PreTokens UInt64 COMMENT 'ccotel.compaction.occurred: the context size Claude Code compacted'",
  "TraceId String COMMENT 'the turn the record belongs to, empty if none' CODEC(ZSTD(1))",
];

const names = (columns: string[]) => columns.map((column) => column.split(' ')[0]).join(', ');
/** The column lists an INSERT … SELECT of the facts names (a store upgraded in place may hold them in another order). */
export const FACTS_COLUMNS = { spans: names(SPAN_COLUMNS), events: names(EVENT_COLUMNS) };

const num = (map: string, key: string, type = 'UInt64'): string => `to${type}OrZero(${map}['${key}'])`;
const capped = (expression: string): string => `leftUTF8(${expression}, ${SUMMARY_TEXT_CAP})`;

/** The ATTRIBUTION_COLUMNS out of a span's or record's attributes (`attributes`) and its resource. */
function attributionSelect(attributes: string): string {
  return `${capped(`${attributes}['vcs.repository.url.full']`)} AS Repository, ${capped(`${attributes}['vcs.ref.head.name']`)} AS Branch,
  ${capped(`${attributes}['ccotel.ticket']`)} AS Ticket,
  mapApply((k, v) -> (k, ${capped('v')}), mapFilter((k, v) -> NOT (${OWN_RESOURCE_KEYS}), ResourceAttributes)) AS Resource`;
}

/** Inside an SQL string literal: a JSON string value, its (escaped) content the first group. */
const JSON_STRING = String.raw`"((?:[^"\\\\]|\\\\.)*)"`;
/** Tools whose input names a file (`file_path`, NotebookEdit's `notebook_path`). */
export const FILE_TOOLS = ['Read', 'Edit', 'MultiEdit', 'Write', 'NotebookEdit'];
/** A tool error's class, by the first pattern its text matches (case-insensitive); none: `other`. */
export const ERROR_CLASSES: [string, string][] = [
  ['not_found', 'no such file|not found|does not exist|ENOENT|cannot find|could not find|cannot access'],
  ['permission', 'permission denied|EACCES|EPERM|operation not permitted|read-only file system'],
  ['timeout', 'timed out|timeout'],
];

/**
 * The facts of a tool call `report insights` reads (facts 5), out of its masked input and error text: a key of its
 * normalised input, the allow rule that covers it, the file it names, its error class, whether the user was asked.
 * Extracted by pattern rather than parsed: an input cut to the configured length is no JSON any more, but its first
 * fields (command, file_path, url come first) are still there. Empty when the content level stores no input.
 */
function toolFactsSelect(a: string): string {
  const input = `${a}['ccotel.tool.input']`;
  const field = (name: string) => `extract(${input}, '"${name}":${JSON_STRING}')`;
  const command = `trim(replaceRegexpAll(${field('command')}, '[[:space:]]+', ' '))`;
  const path = `if(${field('file_path')} != '', ${field('file_path')}, ${field('notebook_path')})`;
  const errorText = `concat(StatusMessage, '\\n', leftUTF8(${a}['ccotel.tool.output'], 2000))`;
  const tool = (expression: string, otherwise: string) => `if(Kind = 'tool', ${expression}, ${otherwise})`;
  return `${tool(`if(${input} = '', 0, cityHash64(Name, if(Name = 'Bash', ${command}, replaceRegexpAll(${input}, ',?"description":${JSON_STRING}', ''))))`, '0')} AS InputKey,
  ${tool(capped(`multiIf(Name = 'Bash' AND ${command} != '', concat('Bash(', extract(${command}, '^([^ ]+(?: [a-zA-Z][a-zA-Z0-9_-]*)?)(?: |$)'), ':*)'),
    Name = 'WebFetch' AND domain(${field('url')}) != '', concat('WebFetch(domain:', domain(${field('url')}), ')'), Name)`), "''")} AS Rule,
  ${tool(`if(Name IN (${FILE_TOOLS.map((t) => `'${t}'`).join(', ')}) AND ${path} != '', cityHash64(${path}), 0)`, '0')} AS FileHash,
  if(Kind = 'tool' AND Outcome = 'error', multiIf(StatusMessage = '' AND ${a}['ccotel.tool.output'] = '', 'unknown',
    ${ERROR_CLASSES.map(([name, pattern]) => `match(${errorText}, '(?i)${pattern}'), '${name}'`).join(',\n    ')}, 'other'), '') AS ErrorClass,
  toUInt8(Kind = 'tool' AND (has(Events.Name, 'PermissionRequest') OR startsWith(${a}['ccotel.native.decision_source'], 'user'))) AS Asked,
  ${tool(`toUInt64(greatest(0, toFloat64OrZero(${a}['ccotel.native.blocked_on_user_ms'])))`, '0')} AS WaitedMs,
  ${tool(num(a, 'ccotel.tool.output.length'), '0')} AS ResultLength`;
}

/** SELECT turning otel_traces rows into span facts (the view's query, and the repair's). */
export function spanFactsSelect(source: string): string {
  const a = 'SpanAttributes';
  return `SELECT
  SpanId, Timestamp,
  fromUnixTimestamp64Nano(toUnixTimestamp64Nano(Timestamp) + toInt64(Duration)) AS EndTime,
  -- A chat in no session keeps the usage of the session its rows name (ccusage counts it there too).
  if(${a}['session.id'] != '', ${a}['session.id'], ${a}['${TRANSCRIPT_SESSION_ATTRIBUTE}']) AS SessionId,
  ${capped("ResourceAttributes['host.name']")} AS Host, ${capped("ResourceAttributes['user.name']")} AS User,
  ${capped(`${a}['ccotel.cwd']`)} AS Project,
  ${attributionSelect(a)},
  multiIf(SpanName IN (${TURN_SPAN_LIST}), 'turn', startsWith(SpanName, '${TOOL_SPAN_PREFIX}'), 'tool', 'chat') AS Kind,
  multiIf(Kind = 'chat', if(${a}['gen_ai.request.model'] != '', ${a}['gen_ai.request.model'], substring(SpanName, ${CHAT_SPAN_PREFIX.length + 1})),
          Kind = 'tool', ${a}['gen_ai.tool.name'], ${a}['gen_ai.agent.name']) AS Name,
  multiIf(Kind = 'turn', ${a}['ccotel.turn.outcome'], Kind = 'tool', ${a}['ccotel.tool.outcome'], '') AS Outcome,
  -- The provider's uncached input (rows written before that attribute existed had it as gen_ai.usage.input_tokens).
  if(mapContains(${a}, '${UNCACHED_INPUT_ATTRIBUTE}'), ${num(a, UNCACHED_INPUT_ATTRIBUTE)}, ${num(a, 'gen_ai.usage.input_tokens')}) AS InputTokens,
  ${num(a, 'gen_ai.usage.output_tokens')} AS OutputTokens,
  ${num(a, 'gen_ai.usage.cache_read.input_tokens')} AS CacheReadTokens,
  ${num(a, 'gen_ai.usage.cache_creation.input_tokens')} AS CacheCreationTokens,
  ${num(a, 'ccotel.usage.cache_creation_1h.input_tokens')} AS CacheCreation1hTokens,
  ${num(a, 'ccotel.cost.usd', 'Float64')} AS CostUsd,
  toUInt8(${a}['ccotel.cost.unknown_model'] = 'true') AS UnknownModel,
  ${num(a, 'ccotel.cost.reported_usd', 'Float64')} AS ReportedCostUsd,
  TraceId,
  ${toolFactsSelect(a)}
FROM ${source}
WHERE SessionId != ''
  AND (SpanName IN (${TURN_SPAN_LIST}) OR startsWith(SpanName, '${TOOL_SPAN_PREFIX}') OR startsWith(SpanName, '${CHAT_SPAN_PREFIX}'))`;
}

/** A log record's id; one without `ccotel.record.id` is identified by its content. */
export const LOG_RECORD_ID =
  "if(LogAttributes['ccotel.record.id'] != '', LogAttributes['ccotel.record.id'], toString(cityHash64(Timestamp, EventName, Body, LogAttributes)))";

/** SELECT turning otel_logs rows into event facts. */
export function eventFactsSelect(source: string): string {
  const a = 'LogAttributes';
  return `SELECT
  ${LOG_RECORD_ID} AS RecordId, Timestamp, ${a}['session.id'] AS SessionId,
  ${capped("ResourceAttributes['host.name']")} AS Host, ${capped("ResourceAttributes['user.name']")} AS User,
  ${attributionSelect(a)},
  EventName, ${a}['source'] AS Source, ${a}['mode'] AS Mode, ${a}['reason'] AS Reason,
  ${num(a, 'ccotel.cost.reported_usd', 'Float64')} AS ReportedCostUsd,
  JSONExtract(${a}['ccotel.cost.reported_by_model'], 'Map(String, Float64)') AS ReportedCostByModel,
  ${num(a, 'ccotel.lines.added')} AS LinesAdded,
  ${num(a, 'ccotel.lines.removed')} AS LinesRemoved,
  ${capped(`if(EventName = '${SKIPPED}', ${a}['ccotel.source'], ${a}['gen_ai.tool.name'])`)} AS Name,
  ${a}['state'] AS State,
  toUInt64OrDefault(${a}['ccotel.record.count'], toUInt64(1)) AS Count,
  if(EventName = '${SKIPPED}', cityHash64(${a}['ccotel.source.file']), 0) AS FileHash,
  if(EventName = 'ccotel.compaction.occurred', ${num(a, 'ccotel.compaction.pre_tokens')}, 0) AS PreTokens,
  TraceId
FROM ${source}
WHERE (${a}['session.id'] != '' OR EventName = '${SKIPPED}') AND EventName IN (${SUMMARY_EVENTS.map((e) => `'${e}'`).join(', ')})`;
}

export interface UsageSchemaOptions {
  database?: string;
  cluster?: string;
  /** Days the facts are kept (the summaries' TTL); 0 (the default) keeps them forever. */
  summaryTtlDays?: number;
}

function factsTable(ctx: RenderContext, name: string, columns: string[], order: string, ttlDays: number): string {
  return (
    `CREATE TABLE IF NOT EXISTS ${ctx.storage(name)}${ctx.onCluster} (\n${columns.map((c) => `    ${c}`).join(',\n')}\n) ` +
    `ENGINE = ${ctx.engine('ReplacingMergeTree')}\n` +
    // A repeat has the same time as the original, so it lands in the same partition and replaces it.
    [`PARTITION BY toYYYYMM(Timestamp)`, `ORDER BY (${order})`, ttlClause(ttlDays, 'toDateTime(Timestamp)'), 'SETTINGS index_granularity = 8192']
      .filter(Boolean)
      .join('\n')
  );
}

/**
 * The facts tables and their views (after otel_tables: the views read otel_traces / otel_logs). On a cluster
 * the views sit on each shard's local tables and write its local facts.
 */
export function usageTablesDdl(opts: UsageSchemaOptions = {}): string[] {
  const ctx = renderContext(opts);
  const ttlDays = validateTtlDays(opts.summaryTtlDays ?? DEFAULT_SUMMARY_TTL_DAYS, 'summaryTtlDays');
  const view = (name: string, target: string, select: string) =>
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${ctx.storage(name)}${ctx.onCluster} TO ${ctx.storage(target)}\nAS ${select}\nCOMMENT '${FACTS_VERSION}'`;
  return [
    factsTable(ctx, USAGE_TABLES.spans, SPAN_COLUMNS, 'SessionId, Kind, SpanId', ttlDays),
    ...distributedDdl(ctx, USAGE_TABLES.spans, 'cityHash64(SessionId)'),
    factsTable(ctx, USAGE_TABLES.events, EVENT_COLUMNS, 'SessionId, EventName, RecordId', ttlDays),
    ...distributedDdl(ctx, USAGE_TABLES.events, 'cityHash64(SessionId)'),
    view(USAGE_TABLES.spansMv, USAGE_TABLES.spans, spanFactsSelect(ctx.storage(OTEL_TABLES.traces))),
    // Sharded as otel_traces is: a span's facts from the feed land on the shard its stored copy's facts do, and replace them.
    `CREATE TABLE IF NOT EXISTS ${ctx.storage(USAGE_TABLES.spanFeed)}${ctx.onCluster} AS ${ctx.storage(OTEL_TABLES.traces)}\nENGINE = Null`,
    ...distributedDdl(ctx, USAGE_TABLES.spanFeed, 'cityHash64(TraceId)'),
    view(USAGE_TABLES.spanFeedMv, USAGE_TABLES.spans, spanFactsSelect(ctx.storage(USAGE_TABLES.spanFeed))),
    view(USAGE_TABLES.eventsMv, USAGE_TABLES.events, eventFactsSelect(ctx.storage(OTEL_TABLES.logs))),
    `CREATE TABLE IF NOT EXISTS ${ctx.storage(USAGE_TABLES.eventFeed)}${ctx.onCluster} AS ${ctx.storage(OTEL_TABLES.logs)}\nENGINE = Null`,
    ...distributedDdl(ctx, USAGE_TABLES.eventFeed),
    view(USAGE_TABLES.eventFeedMv, USAGE_TABLES.events, eventFactsSelect(ctx.storage(USAGE_TABLES.eventFeed))),
  ];
}

/**
 * Bringing facts tables and views of an older FACTS_VERSION to this one: the columns added since, then the views
 * dropped (made again by usageTablesDdl). Idempotent; the facts of the raw rows still there are rebuilt apart.
 */
export function usageUpgradeDdl(opts: UsageSchemaOptions = {}): string[] {
  const ctx = renderContext(opts);
  const tables = ([[USAGE_TABLES.spans, SPAN_COLUMNS], [USAGE_TABLES.events, EVENT_COLUMNS]] as const).flatMap(([name, columns]) =>
    [ctx.storage(name), ...(ctx.cluster ? [`${ident(ctx.database)}.${ident(name)}`] : [])].map((table) =>
      `ALTER TABLE ${table}${ctx.onCluster} ${columns.map((c) => `ADD COLUMN IF NOT EXISTS ${c.replace(/ CODEC\(.*\)$/, '')}`).join(', ')}`));
  const views = FACTS_VIEWS.map((name) => `DROP VIEW IF EXISTS ${ctx.storage(name)}${ctx.onCluster} SYNC`);
  return [...tables, ...views];
}

/** The views that fill the facts, each carrying FACTS_VERSION. */
export const FACTS_VIEWS = [USAGE_TABLES.spansMv, USAGE_TABLES.spanFeedMv, USAGE_TABLES.eventsMv, USAGE_TABLES.eventFeedMv];

/** Fully qualified names readers use (the Distributed ones on a cluster). */
export function usageTableNames(database: string): { spans: string; events: string } {
  return { spans: `${ident(database)}.${ident(USAGE_TABLES.spans)}`, events: `${ident(database)}.${ident(USAGE_TABLES.events)}` };
}
