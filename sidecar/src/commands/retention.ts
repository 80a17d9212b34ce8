// `ccotel retention`: apply and verify TTLs, build the masked per-session summaries, delete what has
// expired, and print what it did. Safe to run again and from cron (examples in deploy/retention/).
import type { ClickHouseClient } from '@clickhouse/client';
import type { Command } from 'commander';
import { renderContext } from '../../../schemas/clickhouse.js';
import { DEFAULTS, loadConfig } from '../config.js';
import { ensureInsightSlots, refreshInsightSlots, sessionsSince } from '../retention/insight-slots.js';
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
  insightsOnly?: boolean;
  recent?: string;
}

function days(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim())) throw new Error(`${flag} must be a whole number of days, got "${value}"`);
  return Number(value);
}

function minutes(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value.trim()) || Number(value) === 0) throw new Error(`--recent must be a whole number of minutes > 0, got "${value}"`);
  return Number(value);
}

/** The insight slots of every session, or of those with facts from the last `recentMinutes`. */
async function refreshInsights(client: ClickHouseClient, opts: { database: string; cluster?: string; summaryTtlDays: number }, recentMinutes?: number): Promise<number> {
  await ensureInsightSlots(client, opts);
  const ctx = renderContext(opts);
  const nowMs = Date.now();
  const sessions = recentMinutes === undefined ? undefined : await sessionsSince(client, ctx, nowMs - recentMinutes * 60_000);
  return refreshInsightSlots(client, ctx, nowMs, sessions);
}

export async function retentionCommand(flags: RetentionFlags, out: NodeJS.WritableStream = process.stdout): Promise<RetentionReport> {
  const config = loadConfig({ store: flags.store });
  const rawTtlDays = days(flags.rawTtlDays, '--raw-ttl-days') ?? config.rawTtlDays;
  const summaryTtlDays = days(flags.summaryTtlDays, '--summary-ttl-days') ?? config.summaryTtlDays;
  const store = await openStore(config.store, { command: 'retention', access: 'write', create: false, database: flags.database, rawTtlDays });
  try {
    if (flags.insightsOnly) {
      const written = await refreshInsights(store.client, { database: store.database, cluster: flags.cluster, summaryTtlDays }, minutes(flags.recent));
      out.write(flags.json ? `${JSON.stringify({ insightSlots: written })}\n` : `insights     ${written} insight slots written\n`);
      return { ttl: [], summaries: { factsRepaired: 0, sessionDays: 0, sessions: 0, insightSlots: written }, expired: [], drift: false };
    }
    if (flags.recent !== undefined) throw new Error('--recent goes with --insights-only');
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
      .option('--json', 'print the report as JSON')
      .option('--insights-only', 'only refresh what `report insights` reads (the insight slots), of every session; nothing else')
      .option('--recent <minutes>', 'with --insights-only: only the sessions with facts from the last <minutes> (a frequent timer on a server a Collector gateway feeds)'),
  ).action(async (flags: RetentionFlags) => {
    const report = await retentionCommand(flags);
    if (report.drift) process.exitCode = 2;
  });
}
