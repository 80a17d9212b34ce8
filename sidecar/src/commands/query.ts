// `ccotel query "<SQL>"`: run SQL on the store (embedded, server, or a running sidecar's endpoint).
import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { openStore } from '../store/open-store.js';
import { storeOption, type GlobalOptions } from './options.js';

const FORMATS = ['JSONEachRow', 'TSV', 'TSVWithNames', 'CSV', 'CSVWithNames', 'Pretty', 'PrettyCompact', 'JSON'];

export async function runQuery(sql: string, format: string, options: GlobalOptions, out: NodeJS.WritableStream = process.stdout): Promise<void> {
  if (!FORMATS.includes(format)) throw new Error(`--format must be one of ${FORMATS.join(', ')}`);
  const config = loadConfig({ store: options.store });
  const store = await openStore(config.store, { command: 'query', access: 'read', rawTtlDays: config.rawTtlDays });
  try {
    const statement = sql.trim().replace(/;+\s*$/, '');
    const result = await store.client.exec({ query: `${statement}\nFORMAT ${format}` });
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
