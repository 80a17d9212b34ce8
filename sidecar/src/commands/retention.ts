// `ccotel retention`: apply and verify TTLs, build the masked per-session summaries, delete what has
// expired, and print what it did. Safe to run again and from cron (examples in deploy/retention/).
import type { Command } from 'commander';
import { DEFAULTS, loadConfig } from '../config.js';
import { formatRetentionReport, runRetention, type RetentionReport } from '../retention/run-retention.js';
import { openStore } from '../store/open-store.js';
import { storeOption, type GlobalOptions } from './options.js';

interface RetentionFlags extends GlobalOptions {
  rawTtlDays?: string;
  summaryTtlDays?: string;
  database?: string;
  cluster?: string;
  check?: boolean;
  json?: boolean;
}

function days(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim())) throw new Error(`${flag} must be a whole number of days, got "${value}"`);
  return Number(value);
}

export async function retentionCommand(flags: RetentionFlags, out: NodeJS.WritableStream = process.stdout): Promise<RetentionReport> {
  const config = loadConfig({ store: flags.store });
  const rawTtlDays = days(flags.rawTtlDays, '--raw-ttl-days') ?? config.rawTtlDays;
  const summaryTtlDays = days(flags.summaryTtlDays, '--summary-ttl-days') ?? config.summaryTtlDays;
  const store = await openStore(config.store, { command: 'retention', access: 'write', create: false, database: flags.database, rawTtlDays });
  try {
    const report = await runRetention(store.client, {
      database: store.database,
      cluster: flags.cluster,
      rawTtlDays,
      summaryTtlDays,
      checkOnly: flags.check,
    });
    out.write(flags.json ? `${JSON.stringify(report)}\n` : `${formatRetentionReport(report)}\n`);
    return report;
  } finally {
    await store.close();
  }
}

export function registerRetentionCommand(program: Command): void {
  storeOption(
    program
      .command('retention')
      .description('Apply and verify TTLs, build the per-session summaries, delete expired data (safe to re-run)')
      .option('--raw-ttl-days <days>', `days raw otel_* rows are kept (default: config raw_ttl_days, ${DEFAULTS.rawTtlDays})`)
      .option('--summary-ttl-days <days>', `days session summaries are kept after their last activity (default: config summary_ttl_days, env CCOTEL_SUMMARY_TTL_DAYS; ${DEFAULTS.summaryTtlDays}, no TTL: all history)`)
      .option('--database <name>', 'database holding the tables (default: default)')
      .option('--cluster <name>', 'ClickHouse cluster the tables were created on (ON CLUSTER, *_local tables)')
      .option('--check', 'only report TTL drift, change no TTL; exits with status 2 on drift')
      .option('--json', 'print the report as JSON'),
  ).action(async (flags: RetentionFlags) => {
    const report = await retentionCommand(flags);
    if (report.drift) process.exitCode = 2;
  });
}
