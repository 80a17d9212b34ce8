// The page: a hash router (#/overview, #/sessions, #/session/<id>, #/failures, #/insights), the time range picker, the
// live refresh, and one place that turns a failed query into a message instead of a blank page.
import 'uplot/dist/uPlot.min.css';
import './style.css';
import type { Meta, TimeRange } from '../types.js';
import { api, exported } from './api.js';
import { h } from './dom.js';
import { FailuresPage } from './failures.js';
import { InsightsPage } from './insights.js';
import { OverviewPage } from './overview.js';
import type { Page } from './page.js';
import { SessionPage } from './session.js';
import { SessionsPage } from './sessions.js';

const PRESETS: Record<string, number | undefined> = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000, all: undefined };

interface Route {
  name: 'overview' | 'sessions' | 'session' | 'failures' | 'insights';
  id: string;
  params: URLSearchParams;
}

function currentRoute(): Route {
  const [path, query] = location.hash.replace(/^#\/?/, '').split('?');
  const [name, ...rest] = path.split('/');
  const known = ['overview', 'sessions', 'session', 'failures', 'insights'] as const;
  const route = (known as readonly string[]).includes(name) ? (name as Route['name']) : 'overview';
  return { name: exported && (route === 'session' || route === 'failures' || route === 'insights') ? 'overview' : route, id: decodeURIComponent(rest.join('/')), params: new URLSearchParams(query ?? '') };
}

/** The range in the hash: a preset (`range=7d`) or custom bounds (`from`, `to` in ms). */
function rangeOf(params: URLSearchParams, nowMs = Date.now()): TimeRange {
  const from = params.get('from');
  const to = params.get('to');
  if (from || to) return { fromMs: from ? Number(from) : undefined, toMs: to ? Number(to) : undefined };
  const span = PRESETS[params.get('range') ?? 'all'];
  // To the minute: refreshes within a minute ask the same question, which the server may answer from its cache.
  return span === undefined ? {} : { fromMs: Math.floor((nowMs - span) / 60_000) * 60_000 };
}

function setHashParams(change: Record<string, string | undefined>): void {
  const route = currentRoute();
  for (const [key, value] of Object.entries(change)) {
    if (value === undefined) route.params.delete(key);
    else route.params.set(key, value);
  }
  const path = route.name === 'session' ? `session/${encodeURIComponent(route.id)}` : route.name;
  location.hash = `#/${path}?${route.params}`;
}

function rangePicker(params: URLSearchParams): HTMLElement {
  const active = params.get('from') || params.get('to') ? 'custom' : (params.get('range') ?? 'all');
  const buttons = Object.keys(PRESETS).map((preset) => {
    const button = h('button', { type: 'button', class: preset === active ? 'active' : undefined, 'data-range': preset }, preset);
    button.addEventListener('click', () => setHashParams({ range: preset, from: undefined, to: undefined }));
    return button;
  });
  const local = (ms: string | null) => (ms ? new Date(Number(ms) - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16) : '');
  const from = h('input', { type: 'datetime-local', 'aria-label': 'from', value: local(params.get('from')) });
  const to = h('input', { type: 'datetime-local', 'aria-label': 'to', value: local(params.get('to')) });
  const apply = h('button', { type: 'button', class: active === 'custom' ? 'active' : undefined }, 'apply');
  const toMs = (input: HTMLInputElement) => (input.value ? String(new Date(input.value).getTime()) : undefined);
  apply.addEventListener('click', () => setHashParams({ range: undefined, from: toMs(from), to: toMs(to) }));
  return h('div', { class: 'range' }, ...buttons, h('span', { class: 'custom' }, from, '–', to, apply));
}

function header(route: Route, meta: Meta): HTMLElement {
  const query = route.params.toString();
  const link = (name: string, label: string) => h('a', { href: `#/${name}?${query}`, class: route.name === name ? 'active' : undefined }, label);
  const status = exported
    ? h('span', { class: 'status' }, `exported ${new Date(exported.generatedMs).toISOString().slice(0, 16).replace('T', ' ')} UTC`)
    : h('span', { class: meta.live ? 'status live' : 'status' }, meta.live ? '● live' : 'store (not live)');
  return h(
    'header',
    {},
    h('strong', {}, 'ccotel'),
    h('nav', {}, link('overview', 'Overview'), link('sessions', 'Sessions'), exported ? null : link('failures', 'Failure modes'), exported ? null : link('insights', 'Insights')),
    exported ? null : rangePicker(route.params),
    status,
  );
}

function pageFor(route: Route, main: HTMLElement): Page {
  switch (route.name) {
    case 'sessions':
      return new SessionsPage(main, route.params);
    case 'session':
      return new SessionPage(main, route.id, route.params.get('turn') ?? '');
    case 'failures':
      return new FailuresPage(main);
    case 'insights':
      return new InsightsPage(main);
    default:
      return new OverviewPage(main);
  }
}

async function start(): Promise<void> {
  const root = document.getElementById('app')!;
  const errorBox = h('div', { class: 'error', role: 'alert', hidden: true });
  let meta: Meta = { live: false, store: '', refreshMs: 0 };
  try {
    meta = await api.meta();
  } catch (error) {
    errorBox.hidden = false;
    errorBox.textContent = `Could not reach ccotel: ${(error as Error).message}`;
  }
  let page: Page | undefined;
  let timer: number | undefined;
  // data-page / data-state / data-loads tell a test (and a user's own script) what is on screen.
  const load = async () => {
    const route = currentRoute();
    try {
      await page?.load(rangeOf(route.params));
      errorBox.hidden = true;
      document.body.dataset.state = 'ready';
    } catch (error) {
      errorBox.hidden = false;
      errorBox.textContent = `Query failed: ${(error as Error).message}`;
      document.body.dataset.state = 'error';
    }
    document.body.dataset.loads = String(Number(document.body.dataset.loads ?? 0) + 1);
  };
  const show = async () => {
    page?.destroy?.();
    window.clearTimeout(timer);
    const route = currentRoute();
    document.body.dataset.page = route.name;
    document.body.dataset.state = 'loading';
    const main = h('main', {});
    root.replaceChildren(header(route, meta), errorBox, main);
    page = pageFor(route, main);
    await load();
    if (meta.live) {
      const tick = async () => {
        await load();
        timer = window.setTimeout(tick, meta.refreshMs);
      };
      timer = window.setTimeout(tick, meta.refreshMs);
    }
  };
  window.addEventListener('hashchange', () => void show());
  await show();
}

void start();
