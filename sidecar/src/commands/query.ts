// `ccotel query "<SQL>"`: run SQL on the store (embedded, server, or a running sidecar's endpoint). On an
// embedded store, only read-only SQL runs; a server applies its own grants to the user of the URL.
import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { join } from 'node:path';
import { openStore } from '../store/open-store.js';
import { DEFAULT_READER_LIMITS, openReader } from '../store/reader.js';
import { storeOption, type GlobalOptions } from './options.js';

const FORMATS = ['JSONEachRow', 'TSV', 'TSVWithNames', 'CSV', 'CSVWithNames', 'Pretty', 'PrettyCompact', 'JSON'];

export async function runQuery(sql: string, format: string, options: GlobalOptions, out: NodeJS.WritableStream = process.stdout): Promise<void> {
  if (!FORMATS.includes(format)) throw new Error(`--format must be one of ${FORMATS.join(', ')}`);
  const config = loadConfig({ store: options.store });
  const store = await openStore(config.store, { command: 'query', access: 'read', rawTtlDays: config.rawTtlDays });
  try {
    const statement = `${sql.trim().replace(/;+\s*$/, '')}\nFORMAT ${format}`;
    if (store.kind === 'embedded') {
      // The same read-only rules as the endpoint a running sidecar serves (reader.ts).
      const reader = await openReader(join(store.target, 'chdb'), { ...DEFAULT_READER_LIMITS, maxConcurrentQueries: 1 });
      try {
        out.write(await reader.query({ sql: statement, format }));
      } finally {
        reader.close();
      }
      return;
    }
    const result = await store.client.exec({ query: statement });
    for await (const chunk of result.stream) out.write(chunk as Buffer);
  } finally {
    await store.close();
  }
}

export function registerQueryCommand(program: Command): void {
  storeOption(
    program
      .command('query')
      .description('Run SQL on the store; tables have the OpenTelemetry Collector ClickHouse exporter layout (otel_traces, otel_logs, otel_metrics_*)')
      .argument('<sql>', 'the SQL statement')
      .option('-f, --format <format>', `output format: ${FORMATS.join(', ')}`, 'PrettyCompact'),
  ).action(async (sql: string, opts: GlobalOptions & { format: string }) => {
    await runQuery(sql, opts.format, opts);
  });
}
