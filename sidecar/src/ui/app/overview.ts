// Overview: the report's figures for the chosen range (tiles and one table per report section), the per-day
// charts, and sessions, tokens and cost by project.
import type uPlot from 'uplot';
import type { Overview, ReportJson, TimeRange } from '../types.js';
import { api } from './api.js';
import { color, timeChart } from './charts.js';
import { dollars, figure, h, integer, percent } from './dom.js';
import type { Page } from './page.js';

const SECTION_TITLES: Record<string, string> = {
  turns: 'Turns by outcome',
  tools: 'Tool calls by tool',
  tokens: 'Tokens by model',
  cost: 'Cost by model (USD)',
  permissionBlocks: 'Permission blocks',
  sessionStarts: 'Session starts and resume frequency',
  failureModes: 'Failure modes',
  sessionStates: 'Sessions by latest state',
  skipped: 'Input lines skipped',
};

/** The sections of one row of totals, all zero for a range without data. */
const TOTALS = ['overview', 'sessionStarts'];

/** Any report section as a table: its columns are the JSON fields, every cell a figure. */
export function reportTable(section: string, rows: Record<string, unknown>[]): HTMLElement {
  const title = h('h2', {}, SECTION_TITLES[section] ?? section);
  if (rows.length === 0) return h('section', { class: 'report', 'data-section': section }, title, h('p', { class: 'empty' }, 'none'));
  const columns = Object.keys(rows[0]);
  const head = h('tr', {}, ...columns.map((column) => h('th', {}, column)));
  const body = rows.map((row, index) => h('tr', {}, ...columns.map((column) => h('td', { class: typeof row[column] === 'number' ? 'number' : undefined }, figure(`${section}.${index}.${column}`, row[column])))));
  return h('section', { class: 'report', 'data-section': section }, title, h('table', {}, h('thead', {}, head), h('tbody', {}, ...body)));
}

const sum = (rows: Record<string, unknown>[], key: string) => rows.reduce((total, row) => total + Number(row[key] ?? 0), 0);

function tiles(report: ReportJson): HTMLElement {
  const overview = report.overview[0] ?? {};
  const starts = report.sessionStarts[0] ?? {};
  const calls = sum(report.tools, 'calls');
  const tile = (label: string, value: HTMLElement | string) => h('div', { class: 'tile' }, h('div', { class: 'value' }, value), h('div', { class: 'label' }, label));
  const cost = Number(overview.cost_usd ?? 0);
  return h(
    'div',
    { class: 'tiles' },
    tile('cost', figure('overview.0.cost_usd', cost, dollars(cost))),
    tile('sessions', figure('overview.0.sessions', overview.sessions)),
    tile('turns', figure('overview.0.turns', overview.turns)),
    tile('tool calls', figure('overview.0.tool_calls', overview.tool_calls)),
    tile('API responses', figure('overview.0.api_responses', overview.api_responses)),
    tile('tool success', calls === 0 ? '–' : percent(sum(report.tools, 'success') / calls)),
    tile('permission blocks', integer(sum(report.permissionBlocks, 'blocks'))),
    tile('resume frequency', figure('sessionStarts.0.resume_frequency', starts.resume_frequency)),
  );
}

function charts(data: Overview): { element: HTMLElement; plots: uPlot[] } {
  const d = data.days;
  const rate = d.toolCalls.map((calls, index) => (calls === 0 ? null : (100 * d.toolSuccess[index]) / calls));
  const modes = Object.entries(d.failureModes);
  const drawn = [
    timeChart('Sessions and turns per day', d.days, [
      { label: 'active sessions', values: d.sessions, color: color(0) },
      { label: 'turns', values: d.turns, color: color(1) },
    ]),
    timeChart('Cost per day (USD)', d.days, [{ label: 'cost', values: d.costUsd, color: color(4) }]),
    timeChart('Tokens per day', d.days, [
      { label: 'input', values: d.inputTokens, color: color(0) },
      { label: 'output', values: d.outputTokens, color: color(1) },
      { label: 'cache read', values: d.cacheReadTokens, color: color(2) },
      { label: 'cache creation', values: d.cacheCreationTokens, color: color(3) },
    ]),
    timeChart('Tool success rate and permission blocks per day', d.days, [
      { label: 'tool success', values: rate, color: color(2), percent: true },
      { label: 'permission blocks', values: d.permissionBlocks, color: color(4) },
    ]),
    timeChart('Session starts and resumes per day', d.days, [
      { label: 'starts', values: d.starts, color: color(0) },
      { label: 'resumes', values: d.resumes, color: color(1) },
    ]),
    timeChart('Failure modes per day', d.days, modes.map(([mode, values], index) => ({ label: mode, values, color: color(index + 4) }))),
  ];
  return { element: h('div', { class: 'charts' }, ...drawn.map((chart) => chart.element)), plots: drawn.flatMap((chart) => (chart.plot ? [chart.plot] : [])) };
}

/** Set through the CSSOM: the page's Content-Security-Policy refuses inline style attributes. */
function bar(widthPercent: number): HTMLElement {
  const element = h('div', { class: 'bar' });
  element.style.width = `${widthPercent}%`;
  return element;
}

/** Sessions, tokens and cost by project or repository, the most costly first, each with a bar of its cost. */
function usageBy(title: string, label: string, data: { name: string; sessions: number; tokens: number; cost_usd: number }[], unknown: string): HTMLElement {
  const max = Math.max(Number.MIN_VALUE, ...data.map((row) => row.cost_usd));
  const rows = data.map((row) =>
    h('tr', {}, h('td', { class: 'path' }, row.name || unknown), h('td', { class: 'number' }, integer(row.sessions)),
      h('td', { class: 'number' }, integer(row.tokens)), h('td', { class: 'number' }, dollars(row.cost_usd)), h('td', {}, bar((100 * row.cost_usd) / max))),
  );
  return h('section', { class: 'report wide', 'data-usage-by': label }, h('h2', {}, title),
    h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, label), h('th', {}, 'sessions'), h('th', {}, 'tokens'), h('th', {}, 'cost'), h('th', {}, ''))), h('tbody', {}, ...rows)));
}

/** By project; by repository too once any session was in one. */
function places(data: Overview): HTMLElement[] {
  const byProject = usageBy('By project', 'project', data.projects.map(({ project, ...row }) => ({ name: project, ...row })), '(unknown)');
  if (!data.repositories.some((row) => row.repository !== '')) return [byProject];
  return [byProject, usageBy('By repository', 'repository', data.repositories.map(({ repository, ...row }) => ({ name: repository, ...row })), '(none)')];
}

export class OverviewPage implements Page {
  private plots: uPlot[] = [];
  constructor(private readonly main: HTMLElement) {}

  async load(range: TimeRange): Promise<void> {
    const data = await api.overview(range);
    this.destroy();
    if (data.days.days.length === 0) {
      // The tiles' zeros, not empty charts and tables with 1970-01-01 as first event: what the range does hold (skipped lines, states) alone.
      const held = Object.entries(data.report).filter(([section, rows]) => !TOTALS.includes(section) && rows.length > 0);
      this.main.replaceChildren(tiles(data.report), h('p', { class: 'empty' }, 'no data in this range: choose a longer one, or all'), h('div', { class: 'reports' }, ...held.map(([section, rows]) => reportTable(section, rows))));
      return;
    }
    const drawn = charts(data);
    this.plots = drawn.plots;
    const sections = Object.entries(data.report).filter(([section]) => section !== 'overview');
    // A range without a turn, tool call or API response says so (its times are null, never 1970).
    const empty = data.report.overview[0]?.first_event === null ? h('p', { class: 'empty', 'data-empty': 'range' }, 'No activity in this range.') : null;
    this.main.replaceChildren(...(empty ? [empty] : []), tiles(data.report), drawn.element, ...places(data), h('div', { class: 'reports' }, reportTable('overview', data.report.overview), ...sections.map(([section, rows]) => reportTable(section, rows))));
  }

  destroy(): void {
    for (const plot of this.plots) plot.destroy();
    this.plots = [];
  }
}
