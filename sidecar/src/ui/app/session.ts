// One session: each turn as a trace waterfall (turn → chat → tool → shell, subagents nested under their call,
// hook events as marks on their span, denials and errors coloured), the masked prompt and tool inputs as
// stored, and the session's failure modes, starts and state changes.
import type { LogRow, SessionDetail, SpanRow, TimeRange } from '../types.js';
import { rulesText } from '../rules-text.js';
import { api } from './api.js';
import { duration, h, utc } from './dom.js';
import type { Page } from './page.js';

/** A turn's root span, whichever agent's: the one that tells the turn's outcome. */
const isTurn = (span: SpanRow): boolean => span.attributes['ccotel.turn.outcome'] !== undefined;
/** Attributes shown under a span when it is opened, in this order; the rest follow. */
const CONTENT = ['ccotel.prompt', 'ccotel.tool.input', 'ccotel.tool.output', 'process.command_line', 'error'];

/** The colour class of a span: what went wrong with it, if anything. */
export function spanState(span: SpanRow): string {
  const a = span.attributes;
  const outcome = a['ccotel.tool.outcome'] ?? a['ccotel.turn.outcome'] ?? '';
  if (['denied', 'error', 'interrupted', 'abandoned', 'unanswered'].includes(outcome)) return outcome;
  if (span.status === 'Error' || (a['process.exit.code'] !== undefined && a['process.exit.code'] !== '0')) return 'error';
  return 'ok';
}

/** A trace's spans depth-first: each span followed by its children in start order. */
export function treeOrder(spans: SpanRow[]): { span: SpanRow; depth: number }[] {
  const ids = new Set(spans.map((span) => span.span_id));
  const children = new Map<string, SpanRow[]>();
  for (const span of spans) {
    const parent = ids.has(span.parent_span_id) ? span.parent_span_id : '';
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  const out: { span: SpanRow; depth: number }[] = [];
  const visit = (parent: string, depth: number) => {
    const list = (children.get(parent) ?? []).sort((a, b) => a.start_ms - b.start_ms || a.name.localeCompare(b.name));
    for (const span of list) {
      out.push({ span, depth });
      visit(span.span_id, depth + 1);
    }
  };
  visit('', 0);
  return out;
}

function attributesTable(span: SpanRow): HTMLElement {
  const keys = Object.keys(span.attributes).sort((a, b) => {
    const rank = (key: string) => (CONTENT.includes(key) ? CONTENT.indexOf(key) : CONTENT.length);
    return rank(a) - rank(b) || a.localeCompare(b);
  });
  return h('table', { class: 'attributes' }, ...keys.map((key) => h('tr', {}, h('th', {}, key), h('td', {}, h('pre', {}, span.attributes[key])))),
    ...span.events.map((event) => h('tr', {}, h('th', {}, `event ${event.name}`), h('td', {}, `${utc(event.time_ms)} ${JSON.stringify(event.attributes)}`))));
}

function waterfall(spans: SpanRow[], turnStart: number, turnEnd: number): HTMLElement {
  const span = Math.max(1, turnEnd - turnStart);
  const position = (ms: number) => `${Math.min(100, Math.max(0, (100 * (ms - turnStart)) / span))}%`;
  const rows = treeOrder(spans).map(({ span: item, depth }) => {
    const label = h('div', { class: 'label', title: item.name }, item.name);
    label.style.paddingLeft = `${depth * 16 + 4}px`;
    const bar = h('div', { class: `bar state-${spanState(item)}`, title: `${item.name}: ${duration(item.duration_ms)}` });
    bar.style.left = position(item.start_ms);
    bar.style.width = `max(2px, calc(${position(item.start_ms + item.duration_ms)} - ${position(item.start_ms)}))`;
    const marks = item.events.map((event) => {
      const mark = h('div', { class: `mark ${event.name}`, title: `${event.name} at ${utc(event.time_ms)}`, 'data-event': event.name });
      mark.style.left = position(event.time_ms);
      return mark;
    });
    const details = h('div', { class: 'details', hidden: true }, attributesTable(item));
    const row = h('div', { class: 'span-row', 'data-span-id': item.span_id, 'data-name': item.name, 'data-depth': depth }, label, h('div', { class: 'track' }, bar, ...marks), h('div', { class: 'took' }, duration(item.duration_ms)));
    row.addEventListener('click', () => (details.hidden = !details.hidden));
    return [row, details];
  });
  return h('div', { class: 'waterfall' }, ...rows.flat());
}

function turnSection(trace: SpanRow[], index: number): HTMLElement {
  const root = trace.find(isTurn) ?? trace[0];
  const start = Math.min(...trace.map((span) => span.start_ms));
  const end = Math.max(...trace.map((span) => span.start_ms + span.duration_ms));
  const outcome = root.attributes['ccotel.turn.outcome'] ?? '';
  return h(
    'section',
    { class: 'turn', id: `turn-${root.trace_id}`, 'data-trace': root.trace_id },
    h('h3', {}, `Turn ${index + 1} · ${utc(start)} · ${duration(end - start)} · `, h('span', { class: `outcome ${outcome}` }, outcome)),
    h('pre', { class: 'prompt' }, root.attributes['ccotel.prompt'] ?? ''),
    waterfall(trace, start, end),
  );
}

const FACT_EVENTS: Record<string, string> = {
  'ccotel.failure_mode.detected': 'failure mode',
  'ccotel.session.started': 'start',
  'ccotel.session.ended': 'end',
  'ccotel.session.state_changed': 'state',
  'ccotel.permission.blocked': 'permission block',
  'ccotel.settings.effective': 'rules in force',
  'ccotel.settings.changed': 'settings changed',
};


function factRow(log: LogRow, session: string): HTMLElement {
  const a = log.attributes;
  const what =
    log.event === 'ccotel.failure_mode.detected'
      ? [a.mode, a.cause && `(${a.cause})`, a['process.pid'] && `pid ${a['process.pid']}`, a['network.local.port'] && `port ${a['network.local.port']}`, a.tool_use_id && `call ${a.tool_use_id}`, a['process.command_line'], a.detail]
      : log.event === 'ccotel.session.state_changed'
        ? [a.previous_state && `${a.previous_state} →`, a.state, a.reason && `(${a.reason})`]
        : log.event === 'ccotel.settings.effective'
          ? [a['ccotel.settings.fingerprint'], rulesText(a['ccotel.settings.rules'])]
          : log.event === 'ccotel.settings.changed'
            ? [a['ccotel.settings.scope'], a['ccotel.settings.file'], a.changes]
            : [a.source, a.reason, a['gen_ai.tool.name']];
  const turn = log.trace_id ? h('a', { href: `#/session/${encodeURIComponent(session)}?turn=${log.trace_id}` }, 'turn') : '';
  return h('tr', { class: log.event === 'ccotel.failure_mode.detected' ? 'failure' : undefined, 'data-event': log.event }, h('td', {}, utc(log.time_ms)), h('td', {}, FACT_EVENTS[log.event] ?? log.event), h('td', {}, what.filter(Boolean).join(' ')), h('td', {}, turn));
}

export class SessionPage implements Page {
  constructor(private readonly main: HTMLElement, private readonly id: string, private readonly turn: string) {}

  async load(_range: TimeRange): Promise<void> {
    const detail: SessionDetail = await api.session(this.id);
    const traces = new Map<string, SpanRow[]>();
    for (const span of detail.spans) traces.set(span.trace_id, [...(traces.get(span.trace_id) ?? []), span]);
    const turns = [...traces.values()].filter((trace) => trace.some(isTurn));
    const project = turns[0]?.find(isTurn)?.attributes['ccotel.cwd'] ?? '';
    const scrollY = window.scrollY;
    this.main.replaceChildren(
      h('h1', {}, `Session ${this.id}`),
      h('p', { class: 'path' }, project),
      detail.spans.length === 0 ? h('p', { class: 'empty' }, 'no spans for this session in the store') : '',
      detail.fromFacts
        ? h('p', { class: 'expired' }, 'The detail of this session expired (it is older than the raw window): its turns, tool calls and API responses come from the summaries, without prompts, inputs, shell spans or hook marks.')
        : '',
      detail.truncated ? h('p', { class: 'error' }, 'this session has more spans than a page shows; the latest are left out') : '',
      h('section', { class: 'facts' }, h('h2', {}, 'Failure modes, starts and states'),
        detail.logs.length === 0 ? h('p', { class: 'empty' }, 'none') : h('table', {}, h('tbody', {}, ...detail.logs.map((log) => factRow(log, this.id))))),
      ...turns.map((trace, index) => turnSection(trace, index)),
    );
    if (this.turn) document.getElementById(`turn-${this.turn}`)?.scrollIntoView();
    else window.scrollTo(0, scrollY);
  }
}
