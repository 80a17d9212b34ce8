-- Upstream: open-telemetry/opentelemetry-collector-contrib, exporter/clickhouseexporter/internal/sqltemplates/traces_id_ts_lookup_mv.sql
-- Commit 57b29d74154d72320747c8dd2a0b4a1629a39187 (printf: database, table, cluster, database, table, database, table).
-- Copied verbatim below this header. Used only by schemas/upstream.test.ts to detect drift.
CREATE MATERIALIZED VIEW IF NOT EXISTS "%s"."%s_trace_id_ts_mv" %s
TO "%s"."%s_trace_id_ts"
AS SELECT
              TraceId,
              min(Timestamp) as Start,
              max(Timestamp) as End
   FROM "%s"."%s"
   WHERE TraceId != ''
   GROUP BY TraceId
