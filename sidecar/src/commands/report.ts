// `ccotel report`: terminal tables (or JSON) answering the everyday questions from the store; `ccotel report
// daily|weekly|monthly|session|blocks`: usage and cost by period (sidecar/src/report/usage.ts).
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { catchUpRunning, describeCatchUp } from '../catch-up.js';
import { loadConfig } from '../config.js';
import { INSIGHT_DIMENSIONS, type InsightDimension, type InsightsReport } from '../report/insight-types.js';
import { keptOutput, printOutput } from '../report/kept-output.js';
import type { Report } from '../report/overview.js';
import type { REPORT_QUERIES, ReportSection } from '../report/queries.js';
import type { SettingsReport } from '../report/settings.js';
import type { TelemetryReport } from '../report/telemetry.js';
import type { UsageFilter, UsageReport } from '../report/usage.js';
import { isUsageDimension, USAGE_DIMENSIONS, USAGE_PERIODS, type UsageDimension, type UsagePeriod } from '../report/usage-options.js';
import type { TokenFigures, UsageRow } from '../report/tokens.js';
import { openStoreForAnswers } from '../store/open-for-answers.js';
import { isRealDay, parseCommandArgs, STORE_OPTION, timezoneOption, type GlobalOptions, type OptionSpec } from './options.js';
import { rulesText } from '../ui/rules-text.js';
import { plainTable } from './table.js';


/** `sections`: REPORT_QUERIES (loaded with the overview's queries, only when it is made). */
export function renderReport(report: Report, sections: typeof REPORT_QUERIES): string {
  const parts: string[] = [];
  for (const [section, rows] of Object.entries(report) as [ReportSection, Record<string, unknown>[]][]) {
    parts.push(sections[section].title);
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

let enUs: Intl.NumberFormat | undefined;
/** `n.toLocaleString('en-US')`, with one formatter: toLocaleString builds one per call (~0.1 ms; 10 s for `report session --breakdown` at 1 GB). */
const grouped = (n: number): string => (enUs ??= new Intl.NumberFormat('en-US')).format(n);

const figures = (f: TokenFigures): string[] =>
  [f.input_tokens, f.output_tokens, f.cache_creation_tokens, f.cache_read_tokens, f.total_tokens].map(grouped)
    .concat(`$${f.cost_usd.toFixed(2)}`);

/** Claude Code's own figure for a session, and how far ccotel's differs from it when more than 1%. */
function stated(row: UsageRow): string {
  if (row.reported_cost_usd === null || row.reported_cost_usd === undefined) return '';
  const difference = row.cost_usd - row.reported_cost_usd;
  const relative = row.reported_cost_usd > 0 ? difference / row.reported_cost_usd : difference === 0 ? 0 : 1;
  const note = Math.abs(relative) > 0.01 ? ` (ccotel ${difference > 0 ? '+' : '-'}$${Math.abs(difference).toFixed(2)})` : '';
  return `$${row.reported_cost_usd.toFixed(2)}${note}`;
}

export function renderUsage(report: UsageReport, breakdown: boolean, by?: UsageDimension): string {
  const sessions = report.period === 'session';
  const label = { daily: 'day', weekly: 'week (from Monday)', monthly: 'month', session: 'session', blocks: 'block (5 h, UTC start)', all: 'all history' }[report.period];
  // All history broken down: the value is the row's name, there is one period.
  const periodColumn = report.period === 'all' && by !== undefined ? [] : [label];
  const byColumn = by === undefined ? [] : [by];
  const table = plainTable([...periodColumn, ...byColumn, 'models', 'input', 'output', 'cache write', 'cache read', 'total tokens', 'cost', ...(sessions ? ['stated by Claude Code'] : [])]);
  const blank = [...(sessions ? [''] : [])];
  const lead = [...periodColumn, ...byColumn].slice(1).map(() => '');
  for (const row of report.rows) {
    const name = sessions ? `${row.period}\n${row.project ?? ''}` : row.is_active ? `${row.period} (active)` : row.period;
    const value = by === undefined ? [] : [row[by] || '(none)'];
    table.push([...(periodColumn.length > 0 ? [name] : []), ...value, row.models.join(', '), ...figures(row), ...(sessions ? [stated(row)] : [])]);
    if (breakdown) for (const model of row.breakdown) table.push([`  └ ${model.model}`, ...lead, '', ...figures(model), ...blank]);
  }
  const sessionCount = report.totals.sessions;
  table.push([`total (${sessionCount} ${sessionCount === 1 ? 'session' : 'sessions'})`, ...lead, '', ...figures(report.totals), ...blank]);
  const notes = [`days counted in ${report.timezone}`];
  if (report.unknown_models.length > 0) {
    notes.push(`no list price for ${report.unknown_models.join(', ')}: costed at Claude Code's own figure where it stated one, else 0`);
  }
  return `${table.toString()}\n${notes.join('\n')}`;
}

function usageDimension(text: string | undefined): UsageDimension | undefined {
  if (text === undefined) return undefined;
  if (!isUsageDimension(text)) throw new Error(`--by ${text}: use one of ${USAGE_DIMENSIONS.join(', ')}, or resource.KEY`);
  return text;
}

/** YYYY-MM-DD from YYYY-MM-DD or YYYYMMDD (ccusage takes both); a day the calendar lacks (02-30) is an error. */
export function parseDay(text: string): string {
  const match = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(text);
  const day = match ? `${match[1]}-${match[2]}-${match[3]}` : '';
  if (match === null || !isRealDay(day)) throw new Error(`not a date (YYYY-MM-DD): ${text}`);
  return day;
}

/** The note a report without rows prints instead of an empty table. */
/** Per session: ccotel's figure / Claude Code's own, then what differs (telemetry_gap). */
export function renderTelemetry(report: TelemetryReport): string {
  if (report.sessions.length === 0) return "No session with Claude Code's own telemetry in the store (ccotel install-telemetry turns it on).";
  const table = plainTable(['session', 'requests', 'input', 'output', 'cache read', 'cache creation', 'cost USD', 'telemetry_gap']);
  const pair = (ours: number, theirs: number | undefined) => `${grouped(ours)} / ${theirs === undefined ? '–' : grouped(theirs)}`;
  for (const { session, ccotel, native, gaps } of report.sessions) {
    table.push([session, pair(ccotel.requests, native.requests), pair(ccotel.tokens.input, native.tokens?.input), pair(ccotel.tokens.output, native.tokens?.output),
      pair(ccotel.tokens.cacheRead, native.tokens?.cacheRead), pair(ccotel.tokens.cacheCreation, native.tokens?.cacheCreation), pair(ccotel.cost_usd, native.cost_usd), gaps.length > 0 ? 'yes' : 'no']);
  }
  const details = report.sessions.flatMap(({ session, gaps, missing_from }) =>
    gaps.length === 0 ? [] : [`${session}: ${gaps.join('; ')}${missing_from ? ` (from ${missing_from})` : ''}`]);
  return [`ccotel (from the transcripts, what is counted) / Claude Code's own telemetry`, table.toString(), ...details].join('\n');
}

export function noUsage(filter: UsageFilter): string {
  const range = filter.since && filter.until ? ` from ${filter.since} to ${filter.until}` : filter.since ? ` from ${filter.since} on` : filter.until ? ` up to ${filter.until}` : '';
  const only = [filter.project && `project ${filter.project}`, filter.model && `model ${filter.model}`, filter.agent && `agent ${filter.agent}`, filter.repo && `repository ${filter.repo}`,
    filter.branch && `branch ${filter.branch}`, filter.host && `host ${filter.host}`, filter.user && `user ${filter.user}`].filter(Boolean).join(', ');
  return `no usage${range}${only ? ` (${only})` : ''} in the store`;
}

const money = (usd: number) => `$${usd.toFixed(2)}`;
const duration = (ms: number) => (ms >= 60_000 ? `${(ms / 60_000).toFixed(1)} min` : `${(ms / 1000).toFixed(1)} s`);

/** A row per insight (and value, with --by), then each found pattern's suggestion and examples. */
export function renderInsights(report: InsightsReport): string {
  const by = report.by === undefined ? [] : [report.by];
  const table = plainTable(['pattern', ...by, 'count', 'sessions', 'turns', 'tokens in its turns', 'cost of its turns', 'time']);
  for (const insight of report.insights) {
    table.push([insight.pattern, ...(report.by === undefined ? [] : [insight.value || '(none)']), insight.count, insight.sessions, insight.turns,
      grouped(insight.tokens), money(insight.cost_usd), duration(insight.time_ms)].map(String));
  }
  const found = report.insights.filter((insight) => insight.count > 0).flatMap((insight) => [
    `${insight.pattern}${insight.value ? ` (${insight.value})` : ''}: ${insight.suggestion}`,
    ...insight.examples.map((example) => `  ${example.time} session ${example.session} turn ${example.trace || '(between turns)'}${example.detail ? ` ${example.detail}` : ''}${example.ms > 0 ? ` ${duration(example.ms)}` : ''}`),
  ]);
  return [table.toString(), ...found].join('\n');
}

/** The changes as a table; with a session, the rules in force at its turns first. */
export function renderSettings(report: SettingsReport): string {
  const parts: string[] = [];
  if (report.session !== undefined) {
    parts.push(`rules in force at the turns of session ${report.session}`);
    const rules = plainTable(['from', 'fingerprint', 'files', 'rules']);
    for (const row of report.rules) rules.push([new Date(row.time_ms).toISOString(), row.fingerprint, row.files, rulesText(row.rules)]);
    parts.push(report.rules.length === 0 ? '  (none known: no settings file, or none looked at before the session ran)' : rules.toString());
  }
  parts.push(report.session === undefined ? 'settings changes (raw records, kept raw_ttl_days)' : 'settings changes while it ran');
  const changes = plainTable(['time', 'scope', 'file', 'changes', 'sessions']);
  for (const row of report.changes) {
    const label = `${row.scope}${row.first_seen ? ' (first seen)' : row.loosens ? ' (loosens)' : ''}`;
    changes.push([new Date(row.time_ms).toISOString(), label, row.commit ? `${row.file}\n@ ${row.commit.slice(0, 12)}` : row.file, row.changes, row.sessions.join('\n')]);
  }
  parts.push(report.changes.length === 0 ? '  (none)' : changes.toString());
  return parts.join('\n');
}


interface ReportOptions extends GlobalOptions {
  session?: string;
  json?: boolean;
  since?: string;
  until?: string;
  project?: string;
  model?: string;
  agent?: string;
  timezone?: string;
  breakdown?: boolean;
  by?: string;
  repo?: string;
  branch?: string;
  host?: string;
  user?: string;
}

const REPORT_DESCRIPTION = `Overview (sessions, turns, tools, permission blocks, resumes, tokens, cost, skipped input); usage and cost by period: ${USAGE_PERIODS.join(' | ')}; insights: where time and money go to waste (retry loops, repeated reads, not-found errors, permission friction, interrupted work, compaction churn, slow tools, cache efficiency), each with its cost, examples and what to change (--since, --until, --by project|repo|user; thresholds: the insight_* settings); settings: the changes of Claude Code's settings files; or telemetry: Claude Code's own figures beside ccotel's per session, and where they disagree (telemetry_gap)`;

const REPORT_OPTIONS: OptionSpec[] = [
  { flags: '--json', description: 'print JSON instead of tables' },
  { flags: '--since <day>', description: 'periods: from this day (YYYY-MM-DD)' },
  { flags: '--until <day>', description: 'periods: up to this day, inclusive' },
  { flags: '--project <text>', description: 'periods: only sessions whose working directory contains this' },
  { flags: '--model <model>', description: 'periods: only this model' },
  { flags: '--agent <agent>', description: 'periods: only the sessions of this agent (claude-code, codex)' },
  { flags: '--timezone <zone>', description: 'periods: count days in this IANA time zone (default: the machine\'s)', parse: timezoneOption },
  { flags: '--breakdown', description: 'periods: figures by model under each row' },
  { flags: '--session <id>', description: 'settings: the rules in force at this session\'s turns, and the changes while it ran' },
  { flags: '--by <dimension>', description: `figures by ${USAGE_DIMENSIONS.join(' | ')} | resource.KEY too (a row per period and value; without a period: over all history)` },
  { flags: '--repo <text>', description: 'only usage in a repository whose URL contains this' },
  { flags: '--branch <name>', description: 'only usage on this branch' },
  { flags: '--host <name>', description: 'only usage on this host (host.name)' },
  { flags: '--user <name>', description: 'only usage of this OS user (user.name)' },
  STORE_OPTION,
];

export function registerReportCommand(program: Command): void {
  const command = program.command('report [period]').description(REPORT_DESCRIPTION);
  for (const { flags, description, parse } of REPORT_OPTIONS) command.option(flags, description, parse as never);
  command.action(report);
}

/**
 * `ccotel report …` read without commander when its arguments are plain (cli.ts tries this first): false when they
 * are not (help, an unknown option), and commander reads them.
 */
export async function reportFromArgs(args: string[]): Promise<boolean> {
  const parsed = parseCommandArgs(args, REPORT_OPTIONS, 1);
  if (parsed === undefined) return false;
  await report(parsed.positionals[0], parsed.options as ReportOptions);
  return true;
}

/** A report's output as `console.log` prints it: its line end added. */
const line = (text: string) => `${text}\n`;

async function report(period: string | undefined, opts: ReportOptions): Promise<void> {
  if (period !== undefined && !['settings', 'telemetry', 'insights'].includes(period) && !(USAGE_PERIODS as readonly string[]).includes(period)) {
    throw new Error(`unknown report "${period}": use one of ${USAGE_PERIODS.join(', ')}, insights, settings, telemetry, or none for the overview`);
  }
  const filter: UsageFilter = {
    since: opts.since ? parseDay(opts.since) : undefined,
    until: opts.until ? parseDay(opts.until) : undefined,
    project: opts.project,
    model: opts.model,
    agent: opts.agent,
    timezone: opts.timezone,
    repo: opts.repo,
    branch: opts.branch,
    host: opts.host,
    user: opts.user,
    by: usageDimension(opts.by),
  };
  if (period === 'insights') {
    if (filter.by !== undefined && !(INSIGHT_DIMENSIONS as readonly string[]).includes(filter.by)) throw new Error(`report insights --by ${filter.by}: use one of ${INSIGHT_DIMENSIONS.join(', ')}`);
    // A filter it would not apply is refused, not ignored: figures that look filtered and are not.
    const ignored = (['project', 'model', 'agent', 'repo', 'branch', 'host', 'user', 'session', 'breakdown'] as const).filter((option) => opts[option] !== undefined);
    if (ignored.length > 0) throw new Error(`report insights takes --since, --until, --timezone, --by and --json, not ${ignored.map((option) => `--${option}`).join(', ')}`);
  }
  if (period === 'blocks' && filter.by !== undefined) throw new Error('--by breaks down days, weeks, months and sessions, not billing blocks');
  // A break-down or a filter of attribution without a period: usage over all history (the overview has neither).
  const usagePeriod = period ?? (filter.by ?? filter.repo ?? filter.branch ?? filter.host ?? filter.user ? 'all' : undefined);
  if (filter.since && filter.until && filter.until < filter.since) throw new Error(`--until ${filter.until} is before --since ${filter.since}`);
  const timezone = filter.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  const config = loadConfig({ store: opts.store });
  const store = await openStoreForAnswers(config.store, { command: 'report', access: 'read', rawTtlDays: config.rawTtlDays });
  // A running sidecar serves this store (its endpoint): its figures grow until its catch-up is done.
  const catchUp = store.kind === 'endpoint' ? catchUpRunning(config.paths.checkpointDir, resolve(config.store)) : undefined;
  if (catchUp) console.error(`ccotel report: ccotel run is catching up (${describeCatchUp(catchUp)}): these figures still grow`);
  try {
    if (usagePeriod === undefined) {
      printOutput(await keptOutput(store.client, store.target, ['overview', opts.json === true, store.database], async (client) => {
        // The overview's queries and the usage report's are loaded only to make an output not kept.
        const [{ buildReport }, { REPORT_QUERIES: sections }] = await Promise.all([import('../report/overview.js'), import('../report/queries.js')]);
        const report = await buildReport(client);
        return line(opts.json ? JSON.stringify(report, null, 2) : renderReport(report, sections));
      }));
    } else if (period === 'insights') {
      // The embedded engine is asked with settings of its own (one thread), which an endpoint's read-only session refuses:
      // the output kept of one question is not the other's.
      const embedded = store.kind === 'embedded';
      printOutput(await keptOutput(store.client, store.target, ['insights', opts.json === true, { ...filter, timezone }, config.insights, store.database, embedded], async (client) => {
        const { insightsReport, missingSlots } = await import('../report/insights.js');
        const report = await insightsReport(client, { ...filter, timezone, by: filter.by as InsightDimension | undefined, database: store.database, embedded }, config.insights)
          .catch((error: unknown) => {
            throw missingSlots(error) ? new Error(`the store has no insight slots yet: run \`ccotel retention --insights-only\` against it as its writer, which makes and fills them`) : error;
          });
        return line(opts.json ? JSON.stringify(report, null, 2) : renderInsights(report));
      }));
    } else if (period === 'telemetry') {
      const { telemetryReport } = await import('../report/telemetry.js');
      const report = await telemetryReport(store.client);
      console.log(opts.json ? JSON.stringify(report, null, 2) : renderTelemetry(report));
    } else if (period === 'settings') {
      const { settingsReport } = await import('../report/settings.js');
      const report = await settingsReport(store.client, { ...filter, session: opts.session, timezone });
      console.log(opts.json ? JSON.stringify(report, null, 2) : renderSettings(report));
    } else {
      printOutput(await keptOutput(store.client, store.target, [usagePeriod, opts.json === true, opts.breakdown === true, { ...filter, timezone }, store.database], async (client) => {
        const { usageReport } = await import('../report/usage.js');
        const report = await usageReport(client, usagePeriod as UsagePeriod, { ...filter, timezone, database: store.database });
        const text = line(opts.json ? JSON.stringify(report, null, 2) : report.rows.length === 0 ? noUsage(filter) : renderUsage(report, opts.breakdown === true, filter.by));
        // Blocks say by the clock which one is still running (until its end): the output holds until the first ends.
        return usagePeriod === 'blocks' ? { text, until: Math.min(...report.rows.filter((row) => row.is_active).map((row) => Date.parse(row.end!))) } : text;
      }));
    }
  } finally {
    await store.close();
  }
}
