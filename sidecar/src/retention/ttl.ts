/**
 * Verifies (and, unless told only to check, applies) the TTL of every table the retention job manages.
 * An existing table keeps the TTL it was created with — the exporter never alters it — so a changed
 * setting shows up here as drift until it is applied with ALTER TABLE … MODIFY TTL.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { OTEL_TABLES, ttlClause, type RenderContext } from '../../../schemas/clickhouse.js';
import { INSIGHT_TABLE } from '../../../schemas/insights.js';
import { SUMMARY_TABLES } from '../../../schemas/summaries.js';
import { USAGE_TABLES } from '../../../schemas/usage.js';

export interface ManagedTable {
  name: string;
  /** The time expression the TTL counts from. */
  timeExpression: string;
  kind: 'raw' | 'summary';
}

export const MANAGED_TABLES: ManagedTable[] = [
  { name: OTEL_TABLES.logs, timeExpression: 'toDateTime(Timestamp)', kind: 'raw' },
  { name: OTEL_TABLES.traces, timeExpression: 'toDateTime(Timestamp)', kind: 'raw' },
  { name: OTEL_TABLES.traceIdTs, timeExpression: 'toDateTime(Start)', kind: 'raw' },
  ...[OTEL_TABLES.gauge, OTEL_TABLES.sum, OTEL_TABLES.histogram, OTEL_TABLES.expHistogram, OTEL_TABLES.summary].map(
    (name): ManagedTable => ({ name, timeExpression: 'toDateTime(TimeUnix)', kind: 'raw' }),
  ),
  { name: SUMMARY_TABLES.days, timeExpression: 'Day', kind: 'summary' },
  { name: SUMMARY_TABLES.summaries, timeExpression: 'toDateTime(LastSeen)', kind: 'summary' },
  { name: USAGE_TABLES.spans, timeExpression: 'toDateTime(Timestamp)', kind: 'summary' },
  { name: USAGE_TABLES.events, timeExpression: 'toDateTime(Timestamp)', kind: 'summary' },
  { name: INSIGHT_TABLE, timeExpression: 'Slot', kind: 'summary' },
];

export interface TtlCheck {
  table: string;
  /** The TTL clause wanted, '' for none. */
  expected: string;
  /** The TTL clause found, '' for none; undefined when the table does not exist. */
  found: string | undefined;
  status: 'ok' | 'drift' | 'applied' | 'missing';
}

/** The TTL clause of a table as the server reports it (engine_full), '' when it has none. */
export function ttlOf(engineFull: string): string {
  const match = / (TTL .*?)(?: SETTINGS |$)/.exec(engineFull);
  return match ? match[1] : '';
}

const normalise = (ttl: string): string => ttl.replace(/\s+/g, ' ').trim();

export async function checkTtls(
  client: ClickHouseClient,
  ctx: RenderContext,
  ttlDays: { raw: number; summary: number },
  apply: boolean,
  kinds: ManagedTable['kind'][] = ['raw', 'summary'],
): Promise<TtlCheck[]> {
  const checks: TtlCheck[] = [];
  for (const table of MANAGED_TABLES.filter((t) => kinds.includes(t.kind))) {
    const storage = ctx.cluster ? `${table.name}_local` : table.name;
    const expected = ttlClause(table.kind === 'raw' ? ttlDays.raw : ttlDays.summary, table.timeExpression);
    const result = await client.query({
      query: `SELECT engine_full FROM system.tables WHERE database = {database:String} AND name = {name:String}`,
      query_params: { database: ctx.database, name: storage },
      format: 'JSONEachRow',
    });
    const [row] = await result.json<{ engine_full: string }>();
    if (!row) {
      checks.push({ table: table.name, expected, found: undefined, status: 'missing' });
      continue;
    }
    const found = ttlOf(row.engine_full);
    if (normalise(found) === normalise(expected)) {
      checks.push({ table: table.name, expected, found, status: 'ok' });
      continue;
    }
    if (apply) {
      const target = `${ctx.storage(table.name)}${ctx.onCluster}`;
      await client.command({
        query: expected ? `ALTER TABLE ${target} MODIFY ${expected}` : `ALTER TABLE ${target} REMOVE TTL`,
        // Rewriting every part for a new TTL is what the explicit expiry step does cheaply instead.
        clickhouse_settings: { materialize_ttl_after_modify: 0 },
      });
    }
    checks.push({ table: table.name, expected, found, status: apply ? 'applied' : 'drift' });
  }
  return checks;
}
