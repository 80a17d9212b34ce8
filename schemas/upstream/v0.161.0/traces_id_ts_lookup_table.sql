-- Upstream: open-telemetry/opentelemetry-collector-contrib, exporter/clickhouseexporter/internal/sqltemplates/traces_id_ts_lookup_table.sql
-- Commit 1b08503058e58c68b9175b4d0663d0aaf16b5398 (text/template).
-- Copied verbatim below this header. Used only by schemas/upstream.test.ts to detect drift.
CREATE TABLE IF NOT EXISTS {{ident .Database}}.{{ident .TableName}} {{.ClusterString}} (
    TraceId String CODEC(ZSTD(1)),
    Start SimpleAggregateFunction(min, DateTime) CODEC(ZSTD(1)),
    End SimpleAggregateFunction(max, DateTime) CODEC(ZSTD(1))
) ENGINE = {{.Engine}}
PARTITION BY toStartOfWeek(Start)
ORDER BY (TraceId)
{{.TTL}}
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1
