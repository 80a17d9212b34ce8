/**
 * The facts tables and the views that fill them at insert (schemas/usage.ts), at this FACTS_VERSION. Views of an
 * older version are made again, after the columns added since; the facts of the raw rows still there are then
 * rebuilt (a repeat replaces its older copy), so figures new to this version cover at least the raw window.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { OTEL_TABLES, renderContext } from '../../../schemas/clickhouse.js';
import { eventFactsSelect, FACTS_COLUMNS, FACTS_VERSION, FACTS_VIEWS, spanFactsSelect, USAGE_TABLES, usageTablesDdl, usageUpgradeDdl, type UsageSchemaOptions } from '../../../schemas/usage.js';

/** The version each view carries (its comment), by view name; a view that does not exist is absent. */
async function viewVersions(client: ClickHouseClient, database: string, names: string[]): Promise<Map<string, string>> {
  const result = await client.query({
    query: `SELECT name, comment FROM system.tables WHERE database = {database:String} AND name IN {names:Array(String)}`,
    query_params: { database, names },
    format: 'JSONEachRow',
  });
  return new Map((await result.json<{ name: string; comment: string }>()).map((row) => [row.name, row.comment]));
}

/** Idempotent: a store at this version is left as it is. */
export async function ensureFacts(client: ClickHouseClient, opts: UsageSchemaOptions = {}): Promise<void> {
  const ctx = renderContext(opts);
  const views = FACTS_VIEWS.map((name) => (ctx.cluster ? `${name}_local` : name));
  const versions = await viewVersions(client, ctx.database, views);
  if (views.every((view) => versions.get(view) === FACTS_VERSION)) return;
  const upgrade = versions.size > 0;
  if (upgrade) for (const query of usageUpgradeDdl(opts)) await client.command({ query });
  for (const query of usageTablesDdl(opts)) await client.command({ query });
  if (!upgrade) return;
  await client.command({ query: `INSERT INTO ${ctx.storage(USAGE_TABLES.spans)} (${FACTS_COLUMNS.spans}) ${spanFactsSelect(ctx.storage(OTEL_TABLES.traces))}` });
  await client.command({ query: `INSERT INTO ${ctx.storage(USAGE_TABLES.events)} (${FACTS_COLUMNS.events}) ${eventFactsSelect(ctx.storage(OTEL_TABLES.logs))}` });
}
