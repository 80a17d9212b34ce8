/**
 * The retention job (`ccotel retention`): make sure the summary tables and their views exist, verify and
 * apply TTLs, repair the facts and refresh the per-session summaries, then delete what has expired — in that order, so data
 * is summarised before it goes. Safe to run again: a second run finds nothing to do.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { DEFAULT_RAW_TTL_DAYS, renderContext, validateTtlDays } from '../../../schemas/clickhouse.js';
import { DEFAULT_SUMMARY_TTL_DAYS, summaryTablesDdl, summaryUpgradeDdl } from '../../../schemas/summaries.js';
import { deleteExpired, type Expiry } from './expire.js';
import { ensureFacts } from './facts.js';
import { ensureInsightSlots, refreshInsightSlots } from './insight-slots.js';
import { refreshSummaries, type SummaryRefresh } from './summaries.js';
import { checkTtls, type TtlCheck } from './ttl.js';

export interface RetentionOptions {
  database?: string;
  cluster?: string;
  rawTtlDays?: number;
  summaryTtlDays?: number;
  /** Only report TTL drift; change no TTL. Summaries are still refreshed and expired data deleted. */
  checkOnly?: boolean;
  /** The job's clock (tests); default Date.now(). */
  nowMs?: number;
}

export interface RetentionReport {
  ttl: TtlCheck[];
  summaries: SummaryRefresh & { insightSlots: number };
  expired: Expiry[];
  /** True when any TTL differs from the settings and was not applied (checkOnly). */
  drift: boolean;
}

/** The summary tables, the columns added to them since, and the views that fill the facts (idempotent). */
export async function ensureSummaryTables(client: ClickHouseClient, opts: { database?: string; cluster?: string; summaryTtlDays?: number }): Promise<void> {
  for (const query of [...summaryTablesDdl(opts), ...summaryUpgradeDdl(opts)]) await client.command({ query });
  await ensureFacts(client, opts);
  await ensureInsightSlots(client, opts);
}

export async function runRetention(client: ClickHouseClient, opts: RetentionOptions = {}): Promise<RetentionReport> {
  const ctx = renderContext(opts);
  const ttlDays = {
    raw: validateTtlDays(opts.rawTtlDays ?? DEFAULT_RAW_TTL_DAYS, 'rawTtlDays'),
    summary: validateTtlDays(opts.summaryTtlDays ?? DEFAULT_SUMMARY_TTL_DAYS, 'summaryTtlDays'),
  };
  const nowMs = opts.nowMs ?? Date.now();
  await ensureSummaryTables(client, { ...opts, summaryTtlDays: ttlDays.summary });

  const ttl = await checkTtls(client, ctx, ttlDays, !opts.checkOnly);
  const summaries = await refreshSummaries(client, ctx, nowMs);
  const insightSlots = await refreshInsightSlots(client, ctx, nowMs);
  const expired = await deleteExpired(client, ctx, ttlDays, nowMs);
  return { ttl, summaries: { ...summaries, insightSlots }, expired, drift: ttl.some((t) => t.status === 'drift') };
}

/** Human-readable report, one line per action. */
export function formatRetentionReport(report: RetentionReport): string {
  const lines: string[] = [];
  for (const t of report.ttl) {
    const describe = (ttl: string | undefined) => (ttl === undefined ? '(no table)' : ttl || 'no TTL');
    lines.push(
      t.status === 'ok'
        ? `ttl ok       ${t.table}: ${describe(t.found)}`
        : `ttl ${t.status.padEnd(8)} ${t.table}: ${describe(t.found)} -> ${describe(t.expected)}`,
    );
  }
  if (report.summaries.factsRepaired > 0) lines.push(`repaired     facts of ${report.summaries.factsRepaired} raw rows that had none`);
  lines.push(`summaries    ${report.summaries.sessionDays} session-days, ${report.summaries.sessions} sessions, ${report.summaries.insightSlots} insight slots written`);
  for (const e of report.expired) {
    const withRows = e.partitions - e.emptyPartitions;
    if (e.rows > 0) lines.push(`expired      ${e.table}: ${e.rows} rows${withRows ? ` in ${withRows} partitions` : ''}`);
    if (e.emptyPartitions > 0) lines.push(`removed      ${e.table}: ${e.emptyPartitions} partitions of expired days left empty by merges`);
  }
  if (!report.expired.some((e) => e.partitions > 0 || e.rows > 0)) lines.push('expired      nothing');
  return lines.join('\n');
}
