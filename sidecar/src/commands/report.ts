// `ccotel report`: terminal tables (or JSON) answering the everyday questions from the store; `ccotel report
// daily|weekly|monthly|session|blocks`: usage and cost by period (sidecar/src/report/usage.ts).
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { catchUpRunning, describeCatchUp } from '../catch-up.js';
import { loadConfig } from '../config.js';
import { buildReport, type Report } from '../report/overview.js';
import { REPORT_QUERIES, type ReportSection } from '../report/queries.js';
import { USAGE_PERIODS, usageReport, type UsageFilter, type UsagePeriod, type UsageReport } from '../report/usage.js';
import type { TokenFigures, UsageRow } from '../report/tokens.js';
import { openStore } from '../store/open-store.js';
import { isRealDay, storeOption, timezoneOption, type GlobalOptions } from './options.js';
import { plainTable } from './table.js';


export function renderReport(report: Report): string {
  const parts: string[] = [];
  for (const [section, rows] of Object.entries(report) as [ReportSection, Record<string, unknown>[]][]) {
    parts.push(REPORT_QUERIES[section].title);
    if (rows.length === 0) {
      parts.push('  (none)\n');
      continue;
    }
    const table = plainTable(Object.keys(rows[0]));
    for (const row of rows) table.push(Object.values(row).map((value) => (value === null ? '–' : String(value))));
    parts.push(table.toString() + '\n');
  }
  return parts.join('\n');
}

const figures = (f: TokenFigures): string[] =>
  [f.input_tokens, f.output_tokens, f.cache_creation_tokens, f.cache_read_tokens, f.total_tokens].map((n) => n.toLocaleString('en-US'))
    .concat(`$${f.cost_usd.toFixed(2)}`);

/** Claude Code's own figure for a session, and how far ccotel's differs from it when more than 1%. */
function stated(row: UsageRow): string {
  if (row.reported_cost_usd === null || row.reported_cost_usd === undefined) return '';
  const difference = row.cost_usd - row.reported_cost_usd;
  const relative = row.reported_cost_usd > 0 ? difference / row.reported_cost_usd : difference === 0 ? 0 : 1;
  const note = Math.abs(relative) > 0.01 ? ` (ccotel ${difference > 0 ? '+' : '-'}$${Math.abs(difference).toFixed(2)})` : '';
  return `$${row.reported_cost_usd.toFixed(2)}${note}`;
}

export function renderUsage(report: UsageReport, breakdown: boolean): string {
  const sessions = report.period === 'session';
  const label = { daily: 'day', weekly: 'week (from Monday)', monthly: 'month', session: 'session', blocks: 'block (5 h, UTC start)' }[report.period];
  const table = plainTable([label, 'models', 'input', 'output', 'cache write', 'cache read', 'total tokens', 'cost', ...(sessions ? ['stated by Claude Code'] : [])]);
  const blank = sessions ? [''] : [];
  for (const row of report.rows) {
    const name = sessions ? `${row.period}\n${row.project ?? ''}` : row.is_active ? `${row.period} (active)` : row.period;
    table.push([name, row.models.join(', '), ...figures(row), ...(sessions ? [stated(row)] : [])]);
    if (breakdown) for (const model of row.breakdown) table.push([`  └ ${model.model}`, '', ...figures(model), ...blank]);
  }
  const sessionCount = report.totals.sessions;
  table.push([`total (${sessionCount} ${sessionCount === 1 ? 'session' : 'sessions'})`, '', ...figures(report.totals), ...blank]);
  const notes = [`days counted in ${report.timezone}`];
  if (report.unknown_models.length > 0) {
    notes.push(`no list price for ${report.unknown_models.join(', ')}: costed at Claude Code's own figure where it stated one, else 0`);
  }
  return `${table.toString()}\n${notes.join('\n')}`;
}

/** YYYY-MM-DD from YYYY-MM-DD or YYYYMMDD (ccusage takes both); a day the calendar lacks (02-30) is an error. */
export function parseDay(text: string): string {
  const match = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(text);
  const day = match ? `${match[1]}-${match[2]}-${match[3]}` : '';
  if (match === null || !isRealDay(day)) throw new Error(`not a date (YYYY-MM-DD): ${text}`);
  return day;
}

/** The note a report without rows prints instead of an empty table. */
export function noUsage(filter: UsageFilter): string {
  const range = filter.since && filter.until ? ` from ${filter.since} to ${filter.until}` : filter.since ? ` from ${filter.since} on` : filter.until ? ` up to ${filter.until}` : '';
  const only = [filter.project && `project ${filter.project}`, filter.model && `model ${filter.model}`, filter.agent && `agent ${filter.agent}`].filter(Boolean).join(', ');
  return `no usage${range}${only ? ` (${only})` : ''} in the store`;
}

interface ReportOptions extends GlobalOptions {
  json?: boolean;
  since?: string;
  until?: string;
  project?: string;
  model?: string;
  agent?: string;
  timezone?: string;
  breakdown?: boolean;
}

export function registerReportCommand(program: Command): void {
  storeOption(
    program
      .command('report [period]')
      .description(`Overview (sessions, turns, tools, permission blocks, resumes, tokens, cost, skipped input); or usage and cost by period: ${USAGE_PERIODS.join(' | ')}`)
      .option('--json', 'print JSON instead of tables')
      .option('--since <day>', 'periods: from this day (YYYY-MM-DD)')
      .option('--until <day>', 'periods: up to this day, inclusive')
      .option('--project <text>', 'periods: only sessions whose working directory contains this')
      .option('--model <model>', 'periods: only this model')
      .option('--agent <agent>', 'periods: only the sessions of this agent (claude-code, codex)')
      .option('--timezone <zone>', 'periods: count days in this IANA time zone (default: the machine\'s)', timezoneOption)
      .option('--breakdown', 'periods: figures by model under each row'),
  ).action(async (period: string | undefined, opts: ReportOptions) => {
    if (period !== undefined && !(USAGE_PERIODS as readonly string[]).includes(period)) {
      throw new Error(`unknown report "${period}": use one of ${USAGE_PERIODS.join(', ')}, or none for the overview`);
    }
    const filter: UsageFilter = {
      since: opts.since ? parseDay(opts.since) : undefined,
      until: opts.until ? parseDay(opts.until) : undefined,
      project: opts.project,
      model: opts.model,
      agent: opts.agent,
      timezone: opts.timezone,
    };
    if (filter.since && filter.until && filter.until < filter.since) throw new Error(`--until ${filter.until} is before --since ${filter.since}`);
    const config = loadConfig({ store: opts.store });
    const store = await openStore(config.store, { command: 'report', access: 'read', rawTtlDays: config.rawTtlDays });
    // A running sidecar serves this store (its endpoint): its figures grow until its catch-up is done.
    const catchUp = store.kind === 'endpoint' ? catchUpRunning(config.paths.checkpointDir, resolve(config.store)) : undefined;
    if (catchUp) console.error(`ccotel report: ccotel run is catching up (${describeCatchUp(catchUp)}): these figures still grow`);
    try {
      if (period === undefined) {
        const report = await buildReport(store.client);
        console.log(opts.json ? JSON.stringify(report, null, 2) : renderReport(report));
      } else {
        const report = await usageReport(store.client, period as UsagePeriod, { ...filter, database: store.database });
        console.log(opts.json ? JSON.stringify(report, null, 2) : report.rows.length === 0 ? noUsage(filter) : renderUsage(report, opts.breakdown === true));
      }
    } finally {
      await store.close();
    }
  });
}
