/**
 * Our DDL against the exporter's own templates (schemas/upstream/v0.161.0/, copied from
 * opentelemetry-collector-contrib): both are created in a real ClickHouse (chdb) and compared as the
 * server sees them, so a renamed column, a changed type, codec, index or key is caught.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORTER_VERSION, OTEL_TABLES, otelTablesDdl } from './clickhouse.js';
import { openTempChdb, rows, runAll, type TempChdb } from './chdb-testing.js';

const UPSTREAM_DIR = join(dirname(fileURLToPath(import.meta.url)), 'upstream', EXPORTER_VERSION);

/** Template file → the table it creates (the MV is checked through its SELECT). */
const TEMPLATES: Record<string, string> = {
  'logs_table.sql': OTEL_TABLES.logs,
  'traces_table.sql': OTEL_TABLES.traces,
  'traces_id_ts_lookup_table.sql': OTEL_TABLES.traceIdTs,
  'metrics_gauge_table.sql': OTEL_TABLES.gauge,
  'metrics_sum_table.sql': OTEL_TABLES.sum,
  'metrics_histogram_table.sql': OTEL_TABLES.histogram,
  'metrics_exp_histogram_table.sql': OTEL_TABLES.expHistogram,
  'metrics_summary_table.sql': OTEL_TABLES.summary,
};

/**
 * Renders an upstream template as the exporter does with create_schema on, no cluster, no TTL:
 * Go text/template (`{{ident .Database}}`, `{{if .HasFullTextSearch}}`) or the older printf form.
 */
function renderUpstream(file: string, database: string, table: string, fullTextSearch: boolean): string {
  const text = readFileSync(join(UPSTREAM_DIR, file), 'utf8')
    .split('\n')
    .filter((line) => !line.startsWith('--'))
    .join('\n');
  if (text.includes('{{')) {
    return text
      .replace(
        /\s*\{\{-\s*if \.HasFullTextSearch\}\}([\s\S]*?)\s*\{\{-\s*else\}\}([\s\S]*?)\s*\{\{-\s*end\}\}/g,
        (_m, withText: string, withBloom: string) => (fullTextSearch ? withText : withBloom),
      )
      .replaceAll('{{ident .Database}}', `\`${database}\``)
      .replaceAll('{{ident .TableName}}', `\`${table}\``)
      .replaceAll('{{.ClusterString}}', '')
      .replaceAll('{{.Engine}}', 'MergeTree()')
      .replaceAll('{{.TTL}}', '');
  }
  const args =
    file === 'traces_id_ts_lookup_mv.sql'
      ? [database, OTEL_TABLES.traces, '', database, OTEL_TABLES.traces, database, OTEL_TABLES.traces]
      : [database, table, '', 'MergeTree()', ''];
  return text.replace(/%[sq]/g, () => {
    const next = args.shift();
    if (next === undefined) throw new Error(`${file}: more placeholders than arguments`);
    return next;
  });
}

interface Column {
  table: string;
  name: string;
  type: string;
  default_kind: string;
  default_expression: string;
  compression_codec: string;
  comment: string;
}

let store: TempChdb;

beforeAll(async () => {
  store = openTempChdb();
  for (const fullTextSearch of [true, false]) {
    const suffix = fullTextSearch ? 'text' : 'bloom';
    await store.client.command({ query: `CREATE DATABASE upstream_${suffix}` });
    for (const file of [...Object.keys(TEMPLATES), 'traces_id_ts_lookup_mv.sql']) {
      const table = TEMPLATES[file] ?? OTEL_TABLES.traceIdTs;
      await store.client.command({ query: renderUpstream(file, `upstream_${suffix}`, table, fullTextSearch) });
    }
    await runAll(store.client, otelTablesDdl({ database: `ours_${suffix}`, rawTtlDays: 0, fullTextSearch }));
  }
});

afterAll(async () => {
  await store?.close();
});

const columnsOf = (database: string): Promise<Column[]> =>
  rows<Column>(
    store.client,
    `SELECT table, name, type, default_kind, default_expression, compression_codec, comment
     FROM system.columns WHERE database = '${database}' AND table != '${OTEL_TABLES.traceIdTsMv}'
     ORDER BY table, position`,
  );

describe(`schema matches clickhouseexporter ${EXPORTER_VERSION}`, () => {
  for (const variant of ['text', 'bloom']) {
    describe(`${variant} indexes`, () => {
      it('has the same tables, column names and types in the same order', async () => {
        const pick = (c: Column) => `${c.table}.${c.name} ${c.type}`;
        const upstream = (await columnsOf(`upstream_${variant}`)).map(pick);
        expect(upstream.length).toBeGreaterThan(100);
        expect((await columnsOf(`ours_${variant}`)).map(pick)).toEqual(upstream);
      });

      it('has the same codecs, defaults and materialized expressions', async () => {
        const pick = ({ table, name, default_kind, default_expression, compression_codec }: Column) =>
          `${table}.${name} ${default_kind} ${default_expression} ${compression_codec}`;
        expect((await columnsOf(`ours_${variant}`)).map(pick)).toEqual(
          (await columnsOf(`upstream_${variant}`)).map(pick),
        );
      });

      it('has the same skip indexes, keys, partitioning, settings and view query', async () => {
        const describeTables = async (database: string) => ({
          indexes: await rows(
            store.client,
            `SELECT table, name, type_full, expr, granularity FROM system.data_skipping_indices
             WHERE database = '${database}' ORDER BY table, name`,
          ),
          tables: (
            await rows<{ name: string; engine_full: string; as_select: string }>(
              store.client,
              `SELECT name, engine_full, as_select FROM system.tables WHERE database = '${database}' ORDER BY name`,
            )
          ).map((t) => ({ ...t, as_select: t.as_select.replaceAll(database, 'DB') })),
        });
        const ours = await describeTables(`ours_${variant}`);
        expect(ours.indexes.length).toBeGreaterThan(20);
        expect(ours).toEqual(await describeTables(`upstream_${variant}`));
      });
    });
  }

  it('uses text indexes only in the full-text variant', async () => {
    const types = async (database: string) =>
      (
        await rows<{ type: string }>(
          store.client,
          `SELECT DISTINCT type FROM system.data_skipping_indices WHERE database = '${database}' AND table = 'otel_logs'`,
        )
      ).map((r) => r.type);
    expect(await types('ours_text')).toEqual(['text']);
    expect(await types('ours_bloom')).not.toContain('text');
  });
});
