// Failure modes: every detection in the range with its session, tool call and process, linked to its turn, and what
// was found in words (telemetry_gap: what differs and from when).
import type { TimeRange } from '../types.js';
import { api } from './api.js';
import { h, utc } from './dom.js';
import type { Page } from './page.js';

export class FailuresPage implements Page {
  constructor(private readonly main: HTMLElement) {}

  async load(range: TimeRange): Promise<void> {
    const rows = await api.failures(range);
    const head = ['time (UTC)', 'mode', 'cause', 'session', 'tool call', 'pid', 'port', 'command', 'turn', 'detail'];
    // Each cell names its column: on a phone a row is a card of labelled lines (style.css).
    const cell = (column: number, content: Node | string, className?: string) => h('td', { class: className, 'data-label': head[column] }, content || null);
    const body = rows.map((row) => {
      const session = encodeURIComponent(row.session);
      return h('tr', { 'data-mode': row.mode },
        cell(0, utc(row.time_ms)), cell(1, row.mode, 'failure'), cell(2, row.cause),
        cell(3, h('a', { href: `#/session/${session}` }, row.session)), cell(4, row.tool_use_id), cell(5, row.pid, 'number'),
        cell(6, row.port, 'number'), cell(7, row.command_line ? h('code', {}, row.command_line) : ''),
        cell(8, row.trace_id ? h('a', { href: `#/session/${session}?turn=${row.trace_id}` }, 'turn') : ''), cell(9, row.detail));
    });
    this.main.replaceChildren(
      h('h1', {}, 'Failure modes'),
      rows.length === 0 ? h('p', { class: 'empty' }, 'no failure mode detected in this range') : h('table', { class: 'failures' }, h('thead', {}, h('tr', {}, ...head.map((name) => h('th', {}, name)))), h('tbody', {}, ...body)),
    );
  }
}
