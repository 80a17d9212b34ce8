/**
 * Deletes what has expired, now, instead of waiting for background merges to apply the TTL:
 * raw tables lose whole partitions (days) whose newest row is past the TTL — the same unit
 * `ttl_only_drop_parts` drops — and the small summary tables lose the expired rows.
 *
 * A TTL merge leaves an empty part where it dropped one, and only a server that runs on removes it (~30 s later): a
 * store opened by short commands (backfill, report) kept every expired day's empty parts, and loading them was half
 * of each command's start (~1 s of CPU at 1 GB of history). Partitions that hold only empty parts are dropped too.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { ident, sqlString, type RenderContext } from '../../../schemas/clickhouse.js';
import { MANAGED_TABLES } from './ttl.js';

export interface Expiry {
  table: string;
  /** Rows removed. */
  rows: number;
  /** Partitions dropped (raw tables). */
  partitions: number;
  /** Of those, partitions that held only empty parts. */
  emptyPartitions: number;
}

/**
 * Partitions of a raw table whose active parts hold no rows, by id. Only those wholly past the TTL with a week to spare
 * (a partition is a day or a week): a row that a writer puts in one while it is dropped would have expired anyway.
 */
async function emptyPartitions(client: ClickHouseClient, ctx: RenderContext, table: string, days: number, now: string): Promise<string[]> {
  const local = ctx.cluster ? `${table}_local` : table;
  const result = await client.query({
    query: `SELECT partition_id AS id FROM system.parts
            WHERE database = ${sqlString(ctx.database)} AND table = ${sqlString(local)} AND active
            GROUP BY id HAVING sum(rows) = 0 AND toDateOrNull(any(partition)) + toIntervalDay(${days + 7}) <= toDate(${now}) ORDER BY id`,
    format: 'JSONEachRow',
  });
  return (await result.json<{ id: string }>()).map(({ id }) => id);
}

export async function deleteExpired(
  client: ClickHouseClient,
  ctx: RenderContext,
  ttlDays: { raw: number; summary: number },
  nowMs: number,
): Promise<Expiry[]> {
  const now = `fromUnixTimestamp64Milli(toInt64(${nowMs}))`;
  const expiries: Expiry[] = [];
  for (const table of MANAGED_TABLES) {
    const days = table.kind === 'raw' ? ttlDays.raw : ttlDays.summary;
    if (days === 0) continue;
    const name = `${ident(ctx.database)}.${ident(table.name)}`;
    const expired = `${table.timeExpression} + toIntervalDay(${days}) <= ${now}`;
    if (table.kind === 'raw') {
      const partitions = await client.query({
        query: `SELECT _partition_id AS id, count() AS rows FROM ${name}
                GROUP BY id HAVING max(${table.timeExpression}) + toIntervalDay(${days}) <= ${now} ORDER BY id`,
        format: 'JSONEachRow',
      });
      const rows = await partitions.json<{ id: string; rows: number | string }>();
      const empty = await emptyPartitions(client, ctx, table.name, days, now);
      for (const id of [...rows.map((row) => row.id), ...empty]) {
        await client.command({ query: `ALTER TABLE ${ctx.storage(table.name)}${ctx.onCluster} DROP PARTITION ID ${sqlString(id)}` });
      }
      expiries.push({ table: table.name, rows: rows.reduce((n, r) => n + Number(r.rows), 0), partitions: rows.length + empty.length, emptyPartitions: empty.length });
    } else {
      const result = await client.query({ query: `SELECT count() AS n FROM ${name} WHERE ${expired}`, format: 'JSONEachRow' });
      const count = Number((await result.json<{ n: number | string }>())[0]?.n ?? 0);
      if (count > 0) {
        await client.command({
          query: `ALTER TABLE ${ctx.storage(table.name)}${ctx.onCluster} DELETE WHERE ${expired}`,
          clickhouse_settings: { mutations_sync: '2' },
        });
      }
      expiries.push({ table: table.name, rows: count, partitions: 0, emptyPartitions: 0 });
    }
  }
  return expiries;
}
