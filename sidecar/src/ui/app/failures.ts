// Failure modes: every detection in the range with its session, tool call and process, linked to its turn.
import type { TimeRange } from '../types.js';
import { api } from './api.js';
import { h, utc } from './dom.js';
import type { Page } from './page.js';

export class FailuresPage implements Page {
  constructor(private readonly main: HTMLElement) {}

  async load(range: TimeRange): Promise<void> {
    const rows = await api.failures(range);
    const head = ['time (UTC)', 'mode', 'cause', 'session', 'tool call', 'pid', 'port', 'command', 'turn'];
    const body = rows.map((row) => {
      const session = encodeURIComponent(row.session);
      return h('tr', { 'data-mode': row.mode },
        h('td', {}, utc(row.time_ms)), h('td', { class: 'failure' }, row.mode), h('td', {}, row.cause),
        h('td', {}, h('a', { href: `#/session/${session}` }, row.session)), h('td', {}, row.tool_use_id), h('td', { class: 'number' }, row.pid),
        h('td', { class: 'number' }, row.port), h('td', {}, h('code', {}, row.command_line)),
        h('td', {}, row.trace_id ? h('a', { href: `#/session/${session}?turn=${row.trace_id}` }, 'turn') : ''));
    });
    this.main.replaceChildren(
      h('h1', {}, 'Failure modes'),
      rows.length === 0 ? h('p', { class: 'empty' }, 'no failure mode detected in this range') : h('table', { class: 'failures' }, h('thead', {}, h('tr', {}, ...head.map((name) => h('th', {}, name)))), h('tbody', {}, ...body)),
    );
  }
}
