// Sessions: one row per session, sortable by any column and filtered by text, drawn virtually (only the rows
// in view are in the DOM), so 10 000 sessions scroll like 10.
import type { SessionRow, TimeRange } from '../types.js';
import { api, exported } from './api.js';
import { dollars, duration, figure, h, integer, plural, utc } from './dom.js';
import type { Page } from './page.js';

const ROW_HEIGHT = 28;
/** Sums of float prices, to a nano-dollar (as the report module rounds them). */
const roundCost = (usd: number) => Math.round(usd * 1e9) / 1e9;
const OVERSCAN = 10;

interface Column {
  key: string;
  label: string;
  value(row: SessionRow): string | number;
  cell(row: SessionRow): Node | string;
  numeric?: boolean;
}

/** The columns a phone shows first (the rest scroll sideways inside the table's card): style.css `.row`. */
const COLUMNS: Column[] = [
  { key: 'project', label: 'project', value: (row) => row.project, cell: (row) => sessionLink(row) },
  { key: 'agent', label: 'agent', value: (row) => row.agent, cell: (row) => row.agent },
  { key: 'start', label: 'start (UTC)', value: (row) => row.start_ms, cell: (row) => utc(row.start_ms) },
  { key: 'cost', label: 'cost', value: (row) => row.cost_usd, cell: (row) => costOf(row), numeric: true },
  { key: 'turns', label: 'turns', value: (row) => row.turns, cell: (row) => figure('turns', row.turns), numeric: true },
  { key: 'duration', label: 'duration', value: (row) => row.end_ms - row.start_ms, cell: (row) => duration(row.end_ms - row.start_ms), numeric: true },
  { key: 'tokens', label: 'tokens', value: (row) => row.total_tokens, cell: (row) => figure('total_tokens', row.total_tokens), numeric: true },
  { key: 'outcome', label: 'outcome', value: (row) => row.outcome, cell: (row) => h('span', { class: `outcome ${row.outcome}` }, row.outcome) },
  { key: 'state', label: 'state', value: (row) => row.state, cell: (row) => row.state || '–' },
  { key: 'failures', label: 'failure modes', value: (row) => row.failure_modes.join(' '), cell: (row) => h('span', { class: row.failure_modes.length ? 'failure' : undefined, title: row.failure_modes.join(', ') || undefined }, row.failure_modes.join(', ')) },
  { key: 'repo', label: 'repository · branch', value: (row) => `${row.repo} ${row.branch}`, cell: (row) => placeOf(row) },
];

/** The repository without its scheme and host (the title has it whole), and the branch it was on last. */
function placeOf(row: SessionRow): Node | string {
  if (!row.repo && !row.branch) return '–';
  const repo = row.repo.replace(/^[a-z+]+:\/\/[^/]+\//, '');
  return h('span', { class: 'place', title: [row.repo, row.branch].filter(Boolean).join('\n') }, [repo, row.branch].filter(Boolean).join(' · '));
}

/** ccotel's cost, and Claude Code's own statement of it when that differs by more than 1 %. */
function costOf(row: SessionRow): Node {
  const cell = h('span', {}, figure('cost_usd', row.cost_usd, dollars(row.cost_usd)));
  const stated = row.reported_cost_usd;
  if (stated !== null && Math.abs(row.cost_usd - stated) > 0.01 * Math.max(stated, 0.01)) cell.title = `Claude Code stated ${dollars(stated)}`;
  return cell;
}

function sessionLink(row: SessionRow): Node {
  const label = row.project || '(unknown)';
  const title = `${row.session}\n${row.project}`;
  if (exported) return h('span', { class: 'path', title }, label);
  return h('a', { class: 'path', href: `#/session/${encodeURIComponent(row.session)}`, title }, label);
}

export class SessionsPage implements Page {
  private rows: SessionRow[] = [];
  private shown: SessionRow[] = [];
  private sortKey: string;
  private descending: boolean;
  private readonly viewport = h('div', { class: 'viewport', 'data-testid': 'sessions-viewport' });
  private readonly spacer = h('div', { class: 'spacer' });
  private readonly body = h('div', { class: 'rows' });
  private readonly filter = h('input', { type: 'search', placeholder: 'filter: project, agent, repo, branch, session, outcome, state…', 'aria-label': 'filter' });
  private readonly totals = h('div', { class: 'totals' });
  private readonly headRow = h('div', { class: 'row head' });
  private readonly empty = h('p', { class: 'empty', hidden: true });
  private drawnFrom = -1;

  constructor(private readonly main: HTMLElement, params: URLSearchParams) {
    this.sortKey = params.get('sort') ?? 'start';
    this.descending = params.get('order') !== 'asc';
    this.filter.value = params.get('q') ?? '';
    this.filter.addEventListener('input', () => this.apply());
    this.viewport.addEventListener('scroll', () => this.draw());
    this.spacer.append(this.body);
    this.viewport.append(this.spacer);
    main.append(h('div', { class: 'toolbar' }, this.filter, this.totals), h('div', { class: 'table' }, this.headRow, this.empty, this.viewport));
    this.drawHead();
  }

  async load(range: TimeRange): Promise<void> {
    this.rows = await api.sessions(range);
    this.apply();
  }

  private drawHead(): void {
    this.headRow.replaceChildren(
      ...COLUMNS.map((column) => {
        const mark = column.key === this.sortKey ? (this.descending ? ' ▼' : ' ▲') : '';
        const cell = h('button', { type: 'button', class: `cell ${column.key}${column.numeric ? ' number' : ''}`, 'data-sort': column.key }, column.label + mark);
        cell.addEventListener('click', () => {
          this.descending = column.key === this.sortKey ? !this.descending : column.numeric === true;
          this.sortKey = column.key;
          this.drawHead();
          this.apply();
        });
        return cell;
      }),
    );
  }

  /** Filter, sort, total, then draw the rows in view. */
  private apply(): void {
    const needle = this.filter.value.trim().toLowerCase();
    const column = COLUMNS.find((candidate) => candidate.key === this.sortKey) ?? COLUMNS[1];
    const matches = needle === '' ? this.rows : this.rows.filter((row) => [row.project, row.agent, row.repo, row.branch, row.session, row.outcome, row.state, ...row.failure_modes].some((text) => text.toLowerCase().includes(needle)));
    const sign = this.descending ? -1 : 1;
    this.shown = [...matches].sort((a, b) => {
      const left = column.value(a);
      const right = column.value(b);
      return sign * (typeof left === 'number' && typeof right === 'number' ? left - right : String(left).localeCompare(String(right))) || a.session.localeCompare(b.session);
    });
    const total = (of: (row: SessionRow) => number) => this.shown.reduce((sum, row) => sum + of(row), 0);
    const turns = total((row) => row.turns);
    const tokens = total((row) => row.total_tokens);
    this.totals.replaceChildren(
      figure('sessions.count', this.shown.length), ` ${plural(this.shown.length, 'session')} · `, figure('sessions.turns', turns), ` ${plural(turns, 'turn')} · `,
      figure('sessions.tokens', tokens), ` ${plural(tokens, 'token')} · `, figure('sessions.cost_usd', roundCost(total((row) => row.cost_usd)), dollars(total((row) => row.cost_usd))),
      needle ? ` (filtered from ${integer(this.rows.length)})` : '',
    );
    this.empty.hidden = this.shown.length > 0;
    this.empty.textContent = needle ? 'no session matches the filter' : 'no sessions in this range';
    this.spacer.style.height = `${this.shown.length * ROW_HEIGHT}px`;
    this.drawnFrom = -1;
    this.draw();
  }

  private draw(): void {
    const first = Math.max(0, Math.floor(this.viewport.scrollTop / ROW_HEIGHT) - OVERSCAN);
    if (first === this.drawnFrom && this.body.childElementCount > 0) return;
    this.drawnFrom = first;
    const count = Math.ceil(this.viewport.clientHeight / ROW_HEIGHT) + 2 * OVERSCAN;
    const rows = this.shown.slice(first, first + count).map((row) =>
      h('div', { class: 'row', 'data-session': row.session }, ...COLUMNS.map((column) => h('div', { class: `cell ${column.key}${column.numeric ? ' number' : ''}` }, column.cell(row)))),
    );
    this.body.style.transform = `translateY(${first * ROW_HEIGHT}px)`;
    this.body.replaceChildren(...rows);
  }
}
