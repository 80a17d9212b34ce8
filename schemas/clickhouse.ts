/**
 * ClickHouse DDL for the tables the OpenTelemetry Collector contrib `clickhouseexporter` (pinned v0.161.0)
 * creates, rendered the way the exporter renders its templates
 * (exporter/clickhouseexporter/internal/sqltemplates/*.sql; copies in schemas/upstream/v0.161.0/).
 *
 * The sidecar's embedded store and a Collector with `create_schema: false` both use this DDL, so the two
 * paths write the same rows into the same tables and every dashboard and alert works on both.
 * schemas/upstream.test.ts fails when our columns drift from the exporter's.
 */

export const EXPORTER_VERSION = 'v0.161.0';

export const OTEL_TABLES = {
  logs: 'otel_logs',
  traces: 'otel_traces',
  traceIdTs: 'otel_traces_trace_id_ts',
  traceIdTsMv: 'otel_traces_trace_id_ts_mv',
  gauge: 'otel_metrics_gauge',
  sum: 'otel_metrics_sum',
  histogram: 'otel_metrics_histogram',
  expHistogram: 'otel_metrics_exp_histogram',
  summary: 'otel_metrics_summary',
} as const;

export const DEFAULT_DATABASE = 'default';
/** DESIGN §9: raw, content-bearing rows are kept for days to weeks. */
export const DEFAULT_RAW_TTL_DAYS = 30;

/** When the raw window begins (epoch ms): a row older is past the raw TTL. A TTL of 0 keeps all history: -Infinity. */
export function rawWindowStartMs(rawTtlDays: number, nowMs: number): number {
  return rawTtlDays > 0 ? nowMs - rawTtlDays * 86_400_000 : -Infinity;
}

export interface SchemaOptions {
  /** Database for every table; the exporter's default is `default`. */
  database?: string;
  /** TTL of the raw otel_* tables in days; 0 disables it (the exporter's `ttl: 0`). Default 30. */
  rawTtlDays?: number;
  /**
   * Cluster name. When set, every statement gets `ON CLUSTER`, the data lives in `<table>_local`
   * (ReplicatedMergeTree) and `<table>` becomes a Distributed table over it, so writers and readers
   * keep using the plain names.
   */
  cluster?: string;
  /**
   * Use ClickHouse text (full-text) skip indexes, as the exporter does on servers that have them
   * (26.2+, see `hasFullTextSearch`). Default true: the embedded chdb and the supported server are 26.x.
   */
  fullTextSearch?: boolean;
}

/** What the exporter checks before choosing text indexes: server version 26.2 or later. */
export function hasFullTextSearch(serverVersion: string): boolean {
  const [major, minor] = serverVersion.split('.').map(Number);
  if (!Number.isInteger(major) || !Number.isInteger(minor)) {
    throw new Error(`unrecognised ClickHouse version: ${JSON.stringify(serverVersion)}`);
  }
  return major > 26 || (major === 26 && minor >= 2);
}

/** Backtick-quotes an identifier the way the exporter's `ident` template function does. */
export function ident(name: string): string {
  return '`' + name.replaceAll('`', '\\`') + '`';
}

/** A single-quoted SQL string literal. */
export function sqlString(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/** The exporter's GenerateTTLExpr for a whole number of days; '' means no TTL. */
export function ttlClause(days: number, timeExpression: string): string {
  return days > 0 ? `TTL ${timeExpression} + toIntervalDay(${days})` : '';
}

export function validateTtlDays(days: number, what: string): number {
  if (!Number.isInteger(days) || days < 0) {
    throw new Error(`${what} must be a whole number of days >= 0, got ${days}`);
  }
  return days;
}

/** Everything a table template needs, resolved once from the options. */
export interface RenderContext {
  database: string;
  cluster: string | undefined;
  fullTextSearch: boolean;
  /** Fully qualified name of the table that physically holds the rows (`<name>_local` on a cluster). */
  storage(name: string): string;
  /** `ON CLUSTER x` or ''. */
  onCluster: string;
  /** MergeTree-family engine, replicated on a cluster. */
  engine(family?: string, params?: string): string;
}

export function renderContext(opts: { database?: string; cluster?: string; fullTextSearch?: boolean }): RenderContext {
  const database = opts.database ?? DEFAULT_DATABASE;
  const cluster = opts.cluster;
  if (cluster !== undefined && cluster.trim() === '') throw new Error('cluster name must not be empty');
  return {
    database,
    cluster,
    fullTextSearch: opts.fullTextSearch ?? true,
    storage: (name) => `${ident(database)}.${ident(cluster ? `${name}_local` : name)}`,
    onCluster: cluster ? ` ON CLUSTER ${ident(cluster)}` : '',
    engine: (family = 'MergeTree', params = '') => {
      if (!cluster) return `${family}(${params})`;
      const replication = `'/clickhouse/tables/{shard}/{database}/{table}', '{replica}'`;
      return `Replicated${family}(${params ? `${replication}, ${params}` : replication})`;
    },
  };
}

/** On a cluster: the Distributed table that fronts `<name>_local` under the plain name. */
export function distributedDdl(ctx: RenderContext, name: string, shardingKey = 'rand()'): string[] {
  if (!ctx.cluster) return [];
  return [
    `CREATE TABLE IF NOT EXISTS ${ident(ctx.database)}.${ident(name)}${ctx.onCluster} AS ${ctx.storage(name)}\n` +
      `ENGINE = Distributed(${sqlString(ctx.cluster)}, ${sqlString(ctx.database)}, ${sqlString(`${name}_local`)}, ${shardingKey})`,
  ];
}

export function createDatabaseDdl(ctx: RenderContext): string {
  return `CREATE DATABASE IF NOT EXISTS ${ident(ctx.database)}${ctx.onCluster}`;
}

function createTable(ctx: RenderContext, name: string, body: string, tail: string): string {
  const lines = tail.split('\n').filter((line) => line.trim() !== '');
  return `CREATE TABLE IF NOT EXISTS ${ctx.storage(name)}${ctx.onCluster} (\n${body}\n) ENGINE = ${ctx.engine()}\n${lines.join('\n')}`;
}

const SETTINGS = 'SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1';

/** Skip indexes on Map keys and values: text indexes when the server has them, bloom filters otherwise. */
function mapIndexes(ctx: RenderContext, entries: Array<[string, string]>): string[] {
  return entries.flatMap(([prefix, column]) => [
    ctx.fullTextSearch
      ? `INDEX idx_${prefix}_key mapKeys(${column}) TYPE text(tokenizer = 'array')`
      : `INDEX idx_${prefix}_key mapKeys(${column}) TYPE bloom_filter(0.01) GRANULARITY 1`,
    ctx.fullTextSearch
      ? `INDEX idx_${prefix}_value mapValues(${column}) TYPE text(tokenizer = 'array')`
      : `INDEX idx_${prefix}_value mapValues(${column}) TYPE bloom_filter(0.01) GRANULARITY 1`,
  ]);
}

function traceIdIndex(ctx: RenderContext): string {
  return ctx.fullTextSearch
    ? `INDEX idx_trace_id TraceId TYPE text(tokenizer = 'array')`
    : `INDEX idx_trace_id TraceId TYPE bloom_filter(0.001) GRANULARITY 1`;
}

const indent = (lines: string[]): string => lines.map((line) => `    ${line}`).join(',\n');

/** Resource attributes the exporter materialises into their own columns (logs_table.sql). */
const MATERIALIZED_RESOURCE_KEYS = [
  'k8s.cluster.name',
  'k8s.container.name',
  'k8s.deployment.name',
  'k8s.namespace.name',
  'k8s.node.name',
  'k8s.pod.name',
  'k8s.pod.uid',
  'deployment.environment.name',
];

function logsDdl(ctx: RenderContext, ttlDays: number): string {
  const columns = [
    "`Timestamp` DateTime64(9) COMMENT 'Event timestamp with nanosecond precision' CODEC(Delta(8), ZSTD(1))",
    "`TraceId` String COMMENT 'W3C trace identifier' CODEC(ZSTD(1))",
    "`SpanId` String COMMENT 'W3C span identifier' CODEC(ZSTD(1))",
    "`TraceFlags` UInt8 COMMENT 'W3C trace flags'",
    "`SeverityText` LowCardinality(String) COMMENT 'Log severity as text' CODEC(ZSTD(1))",
    "`SeverityNumber` UInt8 COMMENT 'Log severity as number (1-24)'",
    "`ServiceName` LowCardinality(String) COMMENT 'Service that emitted the log' CODEC(ZSTD(1))",
    "`Body` String COMMENT 'Log message body' CODEC(ZSTD(1))",
    "`ResourceSchemaUrl` LowCardinality(String) COMMENT 'Schema URL for the resource' CODEC(ZSTD(1))",
    "`ResourceAttributes` Map(LowCardinality(String), String) COMMENT 'Resource attributes as key-value pairs' CODEC(ZSTD(1))",
    "`ScopeSchemaUrl` LowCardinality(String) COMMENT 'Schema URL for the instrumentation scope' CODEC(ZSTD(1))",
    "`ScopeName` String COMMENT 'Instrumentation scope name' CODEC(ZSTD(1))",
    "`ScopeVersion` LowCardinality(String) COMMENT 'Instrumentation scope version' CODEC(ZSTD(1))",
    "`ScopeAttributes` Map(LowCardinality(String), String) COMMENT 'Instrumentation scope attributes' CODEC(ZSTD(1))",
    "`LogAttributes` Map(LowCardinality(String), String) COMMENT 'Log record attributes' CODEC(ZSTD(1))",
    "`EventName` String COMMENT 'Event name for log records representing events' CODEC(ZSTD(1))",
    ...MATERIALIZED_RESOURCE_KEYS.map(
      (key) => `\`__otel_materialized_${key}\` LowCardinality(String) MATERIALIZED ResourceAttributes['${key}'] CODEC(ZSTD(1))`,
    ),
  ];
  const indexes = [
    traceIdIndex(ctx),
    ...mapIndexes(ctx, [
      ['res_attr', 'ResourceAttributes'],
      ['scope_attr', 'ScopeAttributes'],
      ['log_attr', 'LogAttributes'],
    ]),
    ctx.fullTextSearch
      ? `INDEX idx_lower_body lower(Body) TYPE text(tokenizer = 'splitByNonAlpha')`
      : `INDEX idx_lower_body lower(Body) TYPE tokenbf_v1(32768, 3, 0) GRANULARITY 8`,
  ];
  return createTable(
    ctx,
    OTEL_TABLES.logs,
    indent([...columns, ...indexes]),
    [
      'PARTITION BY toDate(Timestamp)',
      'ORDER BY (toStartOfFiveMinutes(Timestamp), ServiceName, Timestamp)',
      ttlClause(ttlDays, 'toDateTime(Timestamp)'),
      SETTINGS,
    ].join('\n'),
  );
}

function tracesDdl(ctx: RenderContext, ttlDays: number): string {
  const columns = [
    'Timestamp DateTime64(9) CODEC(Delta(8), ZSTD(1))',
    'TraceId String CODEC(ZSTD(1))',
    'SpanId String CODEC(ZSTD(1))',
    'ParentSpanId String CODEC(ZSTD(1))',
    'TraceState String CODEC(ZSTD(1))',
    'SpanName LowCardinality(String) CODEC(ZSTD(1))',
    'SpanKind LowCardinality(String) CODEC(ZSTD(1))',
    'ServiceName LowCardinality(String) CODEC(ZSTD(1))',
    'ResourceAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1))',
    'ScopeName String CODEC(ZSTD(1))',
    'ScopeVersion String CODEC(ZSTD(1))',
    'SpanAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1))',
    'Duration UInt64 CODEC(T64, ZSTD(1))',
    'StatusCode LowCardinality(String) CODEC(ZSTD(1))',
    'StatusMessage String CODEC(ZSTD(1))',
    'Events Nested (\n        Timestamp DateTime64(9),\n        Name LowCardinality(String),\n        Attributes Map(LowCardinality(String), String)\n    ) CODEC(ZSTD(1))',
    'Links Nested (\n        TraceId String,\n        SpanId String,\n        TraceState String,\n        Attributes Map(LowCardinality(String), String)\n    ) CODEC(ZSTD(1))',
    "ResourceAttributeItems Array(String) ALIAS arrayMap(kv -> concat(kv.1, '=', kv.2), CAST(ResourceAttributes, 'Array(Tuple(String, String))'))",
    "SpanAttributeItems Array(String) ALIAS arrayMap(kv -> concat(kv.1, '=', kv.2), CAST(SpanAttributes, 'Array(Tuple(String, String))'))",
  ];
  // The traces template indexes key=value items (not map values) when it has text indexes.
  const attributeIndexes = ctx.fullTextSearch
    ? [
        `INDEX idx_res_attr_key mapKeys(ResourceAttributes) TYPE text(tokenizer = 'array')`,
        `INDEX idx_res_attr_items ResourceAttributeItems TYPE text(tokenizer = 'array')`,
        `INDEX idx_span_attr_key mapKeys(SpanAttributes) TYPE text(tokenizer = 'array')`,
        `INDEX idx_span_attr_items SpanAttributeItems TYPE text(tokenizer = 'array')`,
      ]
    : mapIndexes(ctx, [
        ['res_attr', 'ResourceAttributes'],
        ['span_attr', 'SpanAttributes'],
      ]);
  const indexes = [
    traceIdIndex(ctx),
    ...attributeIndexes,
    'INDEX idx_duration Duration TYPE minmax GRANULARITY 1',
    'INDEX idx_lower_span_name lower(SpanName) TYPE tokenbf_v1(32768, 3, 0) GRANULARITY 8',
  ];
  return createTable(
    ctx,
    OTEL_TABLES.traces,
    indent([...columns, ...indexes]),
    [
      'PARTITION BY toDate(Timestamp)',
      'PRIMARY KEY (ServiceName, SpanName, toDateTime(Timestamp))',
      'ORDER BY (ServiceName, SpanName, toDateTime(Timestamp), Timestamp)',
      ttlClause(ttlDays, 'toDateTime(Timestamp)'),
      SETTINGS,
    ].join('\n'),
  );
}

function traceIdTsDdl(ctx: RenderContext, ttlDays: number): string {
  return createTable(
    ctx,
    OTEL_TABLES.traceIdTs,
    indent([
      'TraceId String CODEC(ZSTD(1))',
      'Start SimpleAggregateFunction(min, DateTime) CODEC(ZSTD(1))',
      'End SimpleAggregateFunction(max, DateTime) CODEC(ZSTD(1))',
    ]),
    [
      'PARTITION BY toStartOfWeek(Start)',
      'ORDER BY (TraceId)',
      ttlClause(ttlDays, 'toDateTime(Start)'),
      SETTINGS,
    ].join('\n'),
  );
}

function traceIdTsMvDdl(ctx: RenderContext): string {
  // On a cluster the view lives beside each local traces table and feeds the local lookup table.
  const mv = ctx.cluster ? `${OTEL_TABLES.traceIdTsMv}_local` : OTEL_TABLES.traceIdTsMv;
  return (
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${ident(ctx.database)}.${ident(mv)}${ctx.onCluster}\n` +
    `TO ${ctx.storage(OTEL_TABLES.traceIdTs)}\n` +
    'AS SELECT\n    TraceId,\n    min(Timestamp) as Start,\n    max(Timestamp) as End\n' +
    `FROM ${ctx.storage(OTEL_TABLES.traces)}\nWHERE TraceId != ''\nGROUP BY TraceId`
  );
}

const EXEMPLARS =
  'Exemplars Nested (\n        FilteredAttributes Map(LowCardinality(String), String),\n        TimeUnix DateTime,\n' +
  '        Value Float64,\n        SpanId String,\n        TraceId String\n    ) CODEC(ZSTD(1))';

/** Columns every metrics table starts with, then the point type's own, then the shared indexes and keys. */
function metricsDdl(ctx: RenderContext, ttlDays: number, name: string, pointColumns: string[]): string {
  const columns = [
    'ResourceAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1))',
    'ResourceSchemaUrl String CODEC(ZSTD(1))',
    'ScopeName String CODEC(ZSTD(1))',
    'ScopeVersion String CODEC(ZSTD(1))',
    'ScopeAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1))',
    'ScopeDroppedAttrCount UInt32 CODEC(ZSTD(1))',
    'ScopeSchemaUrl String CODEC(ZSTD(1))',
    'ServiceName LowCardinality(String) CODEC(ZSTD(1))',
    'MetricName LowCardinality(String) CODEC(ZSTD(1))',
    'MetricDescription String CODEC(ZSTD(1))',
    'MetricUnit String CODEC(ZSTD(1))',
    'Attributes Map(LowCardinality(String), String) CODEC(ZSTD(1))',
    'StartTimeUnix DateTime CODEC(Delta, ZSTD(1))',
    'TimeUnix DateTime CODEC(Delta, ZSTD(1))',
    ...pointColumns,
  ];
  // The metrics templates keep bloom filters whatever the server version.
  const indexes = [
    ...mapIndexes({ ...ctx, fullTextSearch: false }, [
      ['res_attr', 'ResourceAttributes'],
      ['scope_attr', 'ScopeAttributes'],
      ['attr', 'Attributes'],
    ]),
    'INDEX idx_time_minmax TimeUnix TYPE minmax GRANULARITY 1',
  ];
  return createTable(
    ctx,
    name,
    indent([...columns, ...indexes]),
    [
      ttlClause(ttlDays, 'toDateTime(TimeUnix)'),
      'PARTITION BY toDate(TimeUnix)',
      'ORDER BY (ServiceName, MetricName, toStartOfHour(TimeUnix), cityHash64(Attributes), TimeUnix)',
      SETTINGS,
    ].join('\n'),
  );
}

const HISTOGRAM_TAIL = [
  'Flags UInt32 CODEC(ZSTD(1))',
  'Min Float64 CODEC(ZSTD(1))',
  'Max Float64 CODEC(ZSTD(1))',
  'AggregationTemporality Int32 CODEC(ZSTD(1))',
];

const METRICS_POINT_COLUMNS: Record<string, string[]> = {
  [OTEL_TABLES.gauge]: ['Value Float64 CODEC(ZSTD(1))', 'Flags UInt32 CODEC(ZSTD(1))', EXEMPLARS],
  [OTEL_TABLES.sum]: [
    'Value Float64 CODEC(ZSTD(1))',
    'Flags UInt32 CODEC(ZSTD(1))',
    EXEMPLARS,
    'AggregationTemporality Int32 CODEC(ZSTD(1))',
    'IsMonotonic Boolean CODEC(Delta, ZSTD(1))',
  ],
  [OTEL_TABLES.histogram]: [
    'Count UInt64 CODEC(Delta, ZSTD(1))',
    'Sum Float64 CODEC(ZSTD(1))',
    'BucketCounts Array(UInt64) CODEC(ZSTD(1))',
    'ExplicitBounds Array(Float64) CODEC(ZSTD(1))',
    EXEMPLARS,
    ...HISTOGRAM_TAIL,
  ],
  [OTEL_TABLES.expHistogram]: [
    'Count UInt64 CODEC(Delta, ZSTD(1))',
    'Sum Float64 CODEC(ZSTD(1))',
    'Scale Int32 CODEC(ZSTD(1))',
    'ZeroCount UInt64 CODEC(ZSTD(1))',
    'PositiveOffset Int32 CODEC(ZSTD(1))',
    'PositiveBucketCounts Array(UInt64) CODEC(ZSTD(1))',
    'NegativeOffset Int32 CODEC(ZSTD(1))',
    'NegativeBucketCounts Array(UInt64) CODEC(ZSTD(1))',
    EXEMPLARS,
    ...HISTOGRAM_TAIL,
  ],
  [OTEL_TABLES.summary]: [
    'Count UInt64 CODEC(Delta, ZSTD(1))',
    'Sum Float64 CODEC(ZSTD(1))',
    'ValueAtQuantiles Nested(\n        Quantile Float64,\n        Value Float64\n    ) CODEC(ZSTD(1))',
    'Flags UInt32 CODEC(ZSTD(1))',
  ],
};

/**
 * CREATE DATABASE / TABLE / MATERIALIZED VIEW … IF NOT EXISTS for every exporter table, in the order they
 * must run (the lookup table before the view that fills it). Safe to run again: nothing exists twice.
 */
export function otelTablesDdl(opts: SchemaOptions = {}): string[] {
  const ctx = renderContext(opts);
  const ttlDays = validateTtlDays(opts.rawTtlDays ?? DEFAULT_RAW_TTL_DAYS, 'rawTtlDays');
  // Spans and the trace-id lookup shard by TraceId so one trace, and its lookup row, stay on one shard.
  const byTrace = 'cityHash64(TraceId)';
  return [
    createDatabaseDdl(ctx),
    logsDdl(ctx, ttlDays),
    ...distributedDdl(ctx, OTEL_TABLES.logs),
    tracesDdl(ctx, ttlDays),
    ...distributedDdl(ctx, OTEL_TABLES.traces, byTrace),
    traceIdTsDdl(ctx, ttlDays),
    ...distributedDdl(ctx, OTEL_TABLES.traceIdTs, byTrace),
    traceIdTsMvDdl(ctx),
    ...Object.entries(METRICS_POINT_COLUMNS).flatMap(([name, pointColumns]) => [
      metricsDdl(ctx, ttlDays, name, pointColumns),
      ...distributedDdl(ctx, name),
    ]),
  ];
}
