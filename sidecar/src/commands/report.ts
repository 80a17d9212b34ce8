// `ccotel report`: terminal tables (or JSON) answering the everyday questions from the store.
import Table from 'cli-table3';
import type { Command } from 'commander';
import type { ClickHouseClient } from '@clickhouse/client';
import { loadConfig } from '../config.js';
import { REPORT_QUERIES, type ReportSection } from '../report/queries.js';
import { openStore } from '../store/open-store.js';
import { storeOption, type GlobalOptions } from './options.js';

export type Report = Record<ReportSection, Record<string, unknown>[]>;

export async function buildReport(client: ClickHouseClient): Promise<Report> {
  const report = {} as Report;
  for (const [section, query] of Object.entries(REPORT_QUERIES) as [ReportSection, { sql: string }][]) {
    const result = await client.query({ query: query.sql, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 } });
    report[section] = await result.json<Record<string, unknown>>();
  }
  return report;
}

export function renderReport(report: Report): string {
  const parts: string[] = [];
  for (const [section, rows] of Object.entries(report) as [ReportSection, Record<string, unknown>[]][]) {
    parts.push(REPORT_QUERIES[section].title);
    if (rows.length === 0) {
      parts.push('  (none)\n');
      continue;
    }
    const table = new Table({ head: Object.keys(rows[0]), style: { head: [], border: [] } });
    for (const row of rows) table.push(Object.values(row).map((value) => String(value)));
    parts.push(table.toString() + '\n');
  }
  return parts.join('\n');
}

export function registerReportCommand(program: Command): void {
  storeOption(
    program
      .command('report')
      .description('Sessions, turns, tool success by tool, permission blocks, resume frequency, tokens by model, skipped input')
      .option('--json', 'print JSON instead of tables'),
  ).action(async (opts: GlobalOptions & { json?: boolean }) => {
    const config = loadConfig({ store: opts.store });
    const store = await openStore(config.store, { command: 'report', access: 'read', rawTtlDays: config.rawTtlDays });
    try {
      const report = await buildReport(store.client);
      console.log(opts.json ? JSON.stringify(report, null, 2) : renderReport(report));
    } finally {
      await store.close();
    }
  });
}
