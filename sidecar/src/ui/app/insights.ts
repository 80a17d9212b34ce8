// Insights: where time and money go to waste (docs/REPORT.md "Insights"), the JSON `report insights --json` prints
// for the range: a row per pattern with its figures, then each found pattern's suggestion, own figures and examples
// linked to their turns.
import type { Insight } from '../../report/insight-types.js';
import type { TimeRange } from '../types.js';
import { api } from './api.js';
import { dollars, duration, figure, h, integer } from './dom.js';
import type { Page } from './page.js';

const FIGURES = ['count', 'sessions', 'turns', 'tokens', 'cost_usd', 'time_ms'] as const;
const HEAD = ['pattern', 'count', 'sessions', 'turns', 'tokens in its turns', 'cost of its turns', 'time'];

function shown(name: (typeof FIGURES)[number], value: number): string {
  if (name === 'cost_usd') return dollars(value);
  return name === 'time_ms' ? duration(value) : integer(value);
}

/** A table of rows of one shape (a pattern's `by_tool`, `rules`, …), its columns the rows' keys. */
function detailTable(rows: Record<string, unknown>[]): HTMLElement {
  const columns = Object.keys(rows[0]);
  return h('table', { class: 'detail' }, h('thead', {}, h('tr', {}, ...columns.map((column) => h('th', {}, column)))),
    h('tbody', {}, ...rows.map((row) => h('tr', {}, ...columns.map((column) => h('td', { 'data-label': column }, String(row[column])))))));
}

function explained(insight: Insight): HTMLElement {
  const examples = insight.examples.map((example) => h('li', {},
    h('a', { href: `#/session/${encodeURIComponent(example.session)}${example.trace ? `?turn=${example.trace}` : ''}`, class: 'example' }, `${example.time.slice(0, 16).replace('T', ' ')} ${example.session}`),
    example.detail ? ` ${example.detail}` : '', example.ms > 0 ? ` ${duration(example.ms)}` : ''));
  const tables = Object.entries(insight.details).filter(([, value]) => Array.isArray(value) && value.length > 0 && typeof value[0] === 'object')
    .map(([name, rows]) => h('div', {}, h('h3', {}, name), detailTable(rows as Record<string, unknown>[])));
  return h('section', { class: 'insight', 'data-pattern': insight.pattern },
    h('h2', {}, insight.pattern), h('p', { class: 'suggestion' }, insight.suggestion), ...tables, examples.length > 0 ? h('ul', { class: 'examples' }, ...examples) : null);
}

export class InsightsPage implements Page {
  constructor(private readonly main: HTMLElement) {}

  async load(range: TimeRange): Promise<void> {
    const report = await api.insights(range);
    const rows = report.insights.map((insight, index) => h('tr', { 'data-pattern': insight.pattern },
      h('td', { 'data-label': HEAD[0] }, insight.count > 0 ? h('a', { href: `#insight-${insight.pattern}` }, insight.pattern) : insight.pattern),
      ...FIGURES.map((name, column) => h('td', { class: 'number', 'data-label': HEAD[column + 1] }, figure(`insights.${index}.${name}`, insight[name], shown(name, insight[name]))))));
    const found = report.insights.filter((insight) => insight.count > 0).map((insight) => {
      const section = explained(insight);
      section.id = `insight-${insight.pattern}`;
      return section;
    });
    this.main.replaceChildren(
      h('h1', {}, 'Insights'),
      h('p', { class: 'note' }, 'Where time and money go: the tokens, cost and time of the turns each pattern was found in (days in UTC).'),
      h('table', { class: 'insights' }, h('thead', {}, h('tr', {}, ...HEAD.map((name) => h('th', {}, name)))), h('tbody', {}, ...rows)),
      ...found,
    );
  }
}
