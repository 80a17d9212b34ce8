// What went where in the store: rows in the raw tables (detail, kept raw_ttl_days) and sessions in the
// summaries (kept long), among them those whose whole history is older than the raw window, which exist
// as summaries only. `backfill` compares a count before and after, so it never claims rows the raw TTL dropped:
// raw rows are counted inside the window only (an expired part may linger until the next merge drops it).
import type { ClickHouseClient } from '@clickhouse/client';
import { ident, OTEL_TABLES, rawWindowStartMs } from '../../../schemas/clickhouse.js';
import { usageTableNames } from '../../../schemas/usage.js';

export interface Placement {
  raw: { spans: number; logs: number; metrics: number };
  /** Sessions in the summaries. */
  sessions: number;
  /** Of those, sessions with no activity inside the raw window: no detail rows are left for them. */
  summaryOnlySessions: number;
}

export async function placement(client: ClickHouseClient, database: string, rawTtlDays: number, nowMs = Date.now()): Promise<Placement> {
  const table = (name: string) => `${ident(database)}.${ident(name)}`;
  const { spans, events } = usageTableNames(database);
  // A metric row holds its points as exemplars (clickhouse-rows.ts); a row written without any is one point.
  const points = 'sum(greatest(length(Exemplars.TimeUnix), 1))';
  // No row is stored before the epoch: a window of all history starts there.
  const windowStart = `fromUnixTimestamp64Milli(toInt64(${Math.max(0, rawWindowStartMs(rawTtlDays, nowMs))}))`;
  const result = await client.query({
    query: `SELECT
      (SELECT count() FROM ${table(OTEL_TABLES.traces)} WHERE Timestamp >= ${windowStart}) AS spans,
      (SELECT count() FROM ${table(OTEL_TABLES.logs)} WHERE Timestamp >= ${windowStart}) AS logs,
      (SELECT ${points} FROM ${table(OTEL_TABLES.sum)} WHERE TimeUnix >= ${windowStart})
        + (SELECT ${points} FROM ${table(OTEL_TABLES.histogram)} WHERE TimeUnix >= ${windowStart}) AS metrics,
      uniqExact(SessionId) AS sessions,
      countIf(last < ${windowStart}) AS summary_only
    FROM (SELECT SessionId, max(last) AS last FROM (
      SELECT SessionId, EndTime AS last FROM ${spans} UNION ALL SELECT SessionId, Timestamp FROM ${events} WHERE SessionId != '') GROUP BY SessionId)`,
    format: 'JSONEachRow',
    clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
  });
  const [row] = await result.json<{ spans: number; logs: number; metrics: number; sessions: number; summary_only: number }>();
  return { raw: { spans: row.spans, logs: row.logs, metrics: row.metrics }, sessions: row.sessions, summaryOnlySessions: row.summary_only };
}
