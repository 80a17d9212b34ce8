// `ccotel ui` in a real headless browser on a generated corpus (transcripts, hooks, shell log) with known
// answers: every figure of the overview and sessions pages equals `report --json` (and the generator's
// per-session tokens), a turn's waterfall shows every span of the trace in tree order, the failure modes page
// lists every detection, the login URL works once, no request passes without the cookie, no console error.
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCorpus, type Expected } from '../generator/corpus.js';
import { generateHooksAndShell } from '../generator/hooks-shell.js';
import { storeCli } from '../e2e/store-cli.js';
import { figures, launchBrowser, newPage, screenshot, serve, shown, shownAs, stop, type Served } from './browser.js';

const PHONE = { width: 390, height: 844 };
const LAPTOP = { width: 1366, height: 768 };

/**
 * What does not fit the page's viewport, one line each: the document is wider, or some content is cut. Content wider
 * than its box may spill into a parent (judged in turn), scroll inside its card (on a phone only: on a laptop every
 * table fits), or end in an ellipsis with the whole text in a title.
 */
function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate((phoneWidth) => {
    const problems: string[] = [];
    const width = window.innerWidth;
    const scrollAllowed = width <= phoneWidth;
    const documentWidth = document.documentElement.scrollWidth;
    if (documentWidth > width) problems.push(`the document is ${documentWidth} px wide in a ${width} px viewport`);
    const name = (element: Element) => {
      const classes = [...element.classList].map((entry) => `.${entry}`).join('');
      const text = (element.textContent ?? '').trim().slice(0, 40);
      return `${element.tagName.toLowerCase()}${classes} "${text}"`;
    };
    for (const element of document.querySelectorAll('body *')) {
      if (element.scrollWidth <= element.clientWidth + 1) continue;
      const style = getComputedStyle(element);
      if (style.overflowX === 'visible') continue; // spills into its parent, which is judged too
      const scrolls = style.overflowX === 'auto' || style.overflowX === 'scroll';
      if (scrolls && scrollAllowed) continue;
      const titled = style.textOverflow === 'ellipsis' && (element.hasAttribute('title') || element.querySelector('[title]') !== null);
      if (!scrolls && titled) continue;
      problems.push(`${name(element)}: ${element.scrollWidth} px of content in ${element.clientWidth} px${scrolls ? ' (scrolls sideways)' : ' (cut)'}`);
    }
    // A table wider than the box it sits in overlaps its neighbours unless that box scrolls.
    for (const table of document.querySelectorAll('table')) {
      const box = table.parentElement!;
      const overflowX = getComputedStyle(box).overflowX;
      const scrolls = overflowX === 'auto' || overflowX === 'scroll';
      if (table.getBoundingClientRect().right > box.getBoundingClientRect().right + 1 && !scrolls) problems.push(`${name(table)}: wider than its ${name(box)}`);
    }
    return problems;
  }, PHONE.width);
}

type Report = Record<string, Record<string, unknown>[]>;
interface Usage {
  rows: { period: string; total_tokens: number; cost_usd: number; project?: string }[];
  totals: { total_tokens: number; cost_usd: number; sessions: number };
}
const spans = (where: string) => `(SELECT * FROM otel_traces WHERE ${where} LIMIT 1 BY SpanId)`;

describe('ccotel ui in a headless browser (generated corpus, 60 sessions, hooks and shell log)', () => {
  const root = mkdtempSync(join(tmpdir(), 'ccotel-ui-'));
  const storeDir = join(root, 'store');
  let env: NodeJS.ProcessEnv;
  let expected: Expected;
  let report: Report;
  let daily: Usage;
  let bySession: Usage;
  let served: Served;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];
  const { ccotel, query } = storeCli(storeDir, () => env);

  beforeAll(async () => {
    browser = await launchBrowser();
    expected = await generateCorpus({ seed: 5, root: join(root, 'corpus'), sessions: 60, hostLayout: 'multi-root' });
    generateHooksAndShell({ seed: 5, configDirs: expected.configDirs, spoolDir: join(root, 'state', 'spool'), shellLogDir: join(root, 'state', 'shell') });
    env = { ...process.env, HOME: join(root, 'corpus', 'home'), CLAUDE_CONFIG_DIR: expected.configDirs.join(','), CCOTEL_STATE_DIR: join(root, 'state'), CCOTEL_RAW_TTL_DAYS: '0' };
    await ccotel('backfill', '--no-progress');
    report = JSON.parse(await ccotel('report', '--json')) as Report;
    daily = JSON.parse(await ccotel('report', 'daily', '--json', '--timezone', 'UTC')) as Usage;
    bySession = JSON.parse(await ccotel('report', 'session', '--json', '--timezone', 'UTC')) as Usage;
    served = await serve(['ui', '--store', storeDir], env);
    page = await newPage(browser, consoleErrors);
  });

  afterAll(async () => {
    await browser?.close();
    await stop(served?.child);
  });

  it('refuses every request without the session cookie, and the login URL works once', async () => {
    for (const path of ['/', '/assets/app.js', '/api/overview', '/api/session?id=x']) expect((await fetch(served.base + path)).status, path).toBe(401);
    await page.goto(served.loginUrl);
    await shown(page, 'overview');
    expect(page.url()).toBe(`${served.base}/`);
    const [cookie] = await page.cookies();
    // Named after the view's port (a browser sends 127.0.0.1's cookies to every port), and expiring.
    expect(cookie).toMatchObject({ name: `ccotel_ui_${new URL(served.base).port}`, httpOnly: true, sameSite: 'Strict' });
    expect(cookie.expires * 1000).toBeGreaterThan(Date.now());
    expect(await page.evaluate(() => document.cookie)).toBe(''); // HttpOnly: no script reads it
    // The code is spent: a second browser (or whoever finds the URL in a history) is refused.
    expect((await fetch(served.loginUrl, { redirect: 'manual' })).status).toBe(401);
    const forged = await fetch(`${served.base}/api/overview`, { headers: { cookie: `${cookie.name}=${Date.now() + 3_600_000}.guess` } });
    expect(forged.status).toBe(401);
  });

  it('refuses a request naming another host (DNS rebinding)', async () => {
    const { port } = new URL(served.base);
    const status = await new Promise<number>((resolveStatus, rejectStatus) => {
      request({ host: '127.0.0.1', port, path: '/', headers: { host: `attacker.example:${port}` } }, (response) => {
        response.resume();
        resolveStatus(response.statusCode ?? 0);
      }).on('error', rejectStatus).end();
    });
    expect(status).toBe(421);
  });

  it('shows every figure of `report --json` on the overview, each equal to it', async () => {
    await page.goto(`${served.base}/#/overview`);
    await shown(page, 'overview');
    // The tiles: the report's own values (the cost shown in dollars and cents).
    const tiles = await figures(page, '.tiles');
    expect(tiles.length).toBeGreaterThanOrEqual(6);
    for (const { path, value } of tiles) {
      const [section, index, field] = path.split('.');
      expect(value, path).toBe(String(report[section][Number(index)][field]));
    }
    expect(Number(report.overview[0].cost_usd)).toBeGreaterThan(0);
    expect(Number(report.overview[0].cost_usd)).toBeCloseTo(daily.totals.cost_usd, 6);
    // The tables: every cell of every section, as `report --json` has it.
    const shownFigures = await figures(page, '.reports');
    const cells = Object.entries(report).flatMap(([section, rows]) => rows.flatMap((row, index) => Object.keys(row).map((field) => `${section}.${index}.${field}`)));
    expect(new Set(shownFigures.map((figure) => figure.path))).toEqual(new Set(cells));
    for (const { path, value, text } of shownFigures) {
      const [section, index, field] = path.split('.');
      const answer = report[section][Number(index)][field];
      expect(value, path).toBe(String(answer));
      expect(text, path).toBe(shownAs(answer));
    }
    // The generator's sessions, plus one known only from its hooks (its transcript is gone).
    expect(report.overview[0].sessions).toBeGreaterThanOrEqual(expected.sessions);
  });

  it("draws per-day series that add up to the report's totals", async () => {
    const days = await page.evaluate(async () => (await (await fetch('/api/overview')).json()).days);
    const total = (values: number[]) => values.reduce((sum, value) => sum + value, 0);
    expect(total(days.turns)).toBe(report.overview[0].turns);
    expect(total(days.toolCalls)).toBe(report.overview[0].tool_calls);
    expect(total(days.toolSuccess)).toBe(report.tools.reduce((sum, row) => sum + Number(row.success), 0));
    expect(total(days.outputTokens)).toBe(report.tokens.reduce((sum, row) => sum + Number(row.output), 0));
    expect(total(days.costUsd)).toBeCloseTo(daily.totals.cost_usd, 6);
    expect(days.costUsd).toEqual(days.days.map((day: number) => daily.rows.find((row) => Date.parse(`${row.period}T00:00:00Z`) / 1000 === day)?.cost_usd ?? 0));
    expect(total(days.permissionBlocks)).toBe(report.permissionBlocks.reduce((sum, row) => sum + Number(row.blocks), 0));
    expect(total(days.resumes)).toBe(report.sessionStarts[0].resumes);
    const detections = Object.values(days.failureModes as Record<string, number[]>).reduce((sum, values) => sum + total(values), 0);
    expect(detections).toBe(report.failureModes.reduce((sum, row) => sum + Number(row.detections), 0));
    expect(await page.$$eval('figure.chart canvas', (canvases) => canvases.length)).toBeGreaterThanOrEqual(4);
  });

  it("shows each project's sessions, tokens and cost as `report session --json` adds them up", async () => {
    const shownProjects = (await page.evaluate(async () => (await (await fetch('/api/overview')).json()).projects)) as { project: string; sessions: number; tokens: number; cost_usd: number }[];
    const projects = new Map<string, { project: string; sessions: number; tokens: number; cost_usd: number }>();
    for (const session of bySession.rows) {
      const row = projects.get(session.project ?? '') ?? { project: session.project ?? '', sessions: 0, tokens: 0, cost_usd: 0 };
      projects.set(row.project, { ...row, sessions: row.sessions + 1, tokens: row.tokens + session.total_tokens, cost_usd: row.cost_usd + session.cost_usd });
    }
    expect(projects.size).toBeGreaterThan(1);
    expect(shownProjects.map((row) => row.project).sort()).toEqual([...projects.keys()].sort());
    for (const row of shownProjects) {
      expect(row, row.project).toMatchObject({ sessions: projects.get(row.project)!.sessions, tokens: projects.get(row.project)!.tokens });
      expect(row.cost_usd, row.project).toBeCloseTo(projects.get(row.project)!.cost_usd, 8);
    }
    // The most costly first, as the page draws them.
    expect(shownProjects.map((row) => row.cost_usd)).toEqual(shownProjects.map((row) => row.cost_usd).sort((a, b) => b - a));
    const cells = await page.$$eval('section.report.wide tbody tr td.path', (elements) => elements.map((element) => element.textContent));
    expect(cells).toEqual(shownProjects.map((row) => row.project || '(unknown)'));
    // The generated projects are in no repository: no table by repository, all usage is of none.
    expect(await page.$('[data-usage-by="repository"]')).toBeNull();
    const shownRepositories = (await page.evaluate(async () => (await (await fetch('/api/overview')).json()).repositories)) as { repository: string; sessions: number }[];
    expect(shownRepositories).toEqual([expect.objectContaining({ repository: '', sessions: bySession.rows.length })]);
  });

  it('limits every figure to a custom time range, and offers the presets', async () => {
    const first = Date.parse(`${report.overview[0].first_event as string}Z`.replace(' ', 'T'));
    const to = first + 12 * 3_600_000;
    await page.goto(`${served.base}/#/overview?from=${first}&to=${to}`);
    await shown(page, 'overview');
    const range = `Timestamp >= fromUnixTimestamp64Milli(${first}) AND Timestamp < fromUnixTimestamp64Milli(${to})`;
    const [counts] = await query<{ sessions: number; turns: number }>(
      `SELECT uniqExact(SpanAttributes['session.id']) AS sessions, countIf(SpanName = 'invoke_agent claude-code') AS turns FROM ${spans(range)}`,
    );
    expect(counts.turns).toBeGreaterThan(0);
    expect(counts.turns).toBeLessThan(Number(report.overview[0].turns));
    const tile = (path: string) => page.$eval(`.tiles [data-figure="${path}"]`, (element) => Number(element.getAttribute('data-value')));
    expect(await tile('overview.0.sessions')).toBe(counts.sessions);
    expect(await tile('overview.0.turns')).toBe(counts.turns);
    // The summaries (cost) are limited to the range too.
    const [{ cost }] = await query<{ cost: number }>(`SELECT sum(CostUsd) AS cost FROM ccotel_span_facts FINAL WHERE Kind = 'chat' AND ${range}`);
    expect(await tile('overview.0.cost_usd')).toBeCloseTo(cost, 6);
    expect(cost).toBeLessThan(daily.totals.cost_usd);
    await page.click('button[data-range="7d"]');
    await page.waitForFunction(() => location.hash.includes('range=7d'));
    await shown(page, 'overview');
    expect(await page.$eval('button[data-range="7d"]', (button) => button.classList.contains('active'))).toBe(true);
  });

  /** Every row of the virtual table, scrolled through: session id → its cells' raw values. */
  async function tableRows(): Promise<Map<string, { turns: number; tokens: number; cost: number; project: string; place: string }>> {
    const rows = new Map<string, { turns: number; tokens: number; cost: number; project: string; place: string }>();
    const frame = () => page.evaluate(() => new Promise((resolveFrame) => requestAnimationFrame(resolveFrame)));
    await page.$eval('.viewport', (viewport) => (viewport.scrollTop = 0));
    await frame(); // the rows are redrawn on the scroll event
    for (;;) {
      const visible = await page.$$eval('.viewport .row', (elements) =>
        elements.map((row) => ({
          session: row.getAttribute('data-session') ?? '',
          turns: Number(row.querySelector('[data-figure="turns"]')?.getAttribute('data-value')),
          tokens: Number(row.querySelector('[data-figure="total_tokens"]')?.getAttribute('data-value')),
          cost: Number(row.querySelector('[data-figure="cost_usd"]')?.getAttribute('data-value')),
          project: row.querySelector('.cell.project')?.textContent ?? '',
          place: row.querySelector('.cell.repo')?.textContent ?? '',
        })),
      );
      for (const row of visible) rows.set(row.session, row);
      const atEnd = await page.$eval('.viewport', (viewport) => {
        const end = viewport.scrollTop + viewport.clientHeight >= viewport.scrollHeight - 1;
        viewport.scrollTop += viewport.clientHeight;
        return end;
      });
      if (atEnd) return rows;
      await frame();
    }
  }

  it("lists every session with the tokens and cost of `report session --json` (tokens as the generator's); totals equal `report --json`", async () => {
    await page.goto(`${served.base}/#/sessions`);
    await shown(page, 'sessions');
    const total = async (path: string) => page.$eval(`[data-figure="${path}"]`, (element) => Number(element.getAttribute('data-value')));
    const tokenTotal = report.tokens.reduce((sum, row) => sum + Number(row.input) + Number(row.output) + Number(row.cache_read) + Number(row.cache_creation), 0);
    expect(await total('sessions.count')).toBe(report.overview[0].sessions);
    expect(await total('sessions.turns')).toBe(report.overview[0].turns);
    expect(await total('sessions.tokens')).toBe(tokenTotal);
    expect(await total('sessions.cost_usd')).toBeCloseTo(bySession.totals.cost_usd, 6);
    // Virtualised: fewer rows in the document than sessions.
    expect(await page.$$eval('.viewport .row', (rows) => rows.length)).toBeLessThan(Number(report.overview[0].sessions));
    const rows = await tableRows();
    expect(rows.size).toBe(report.overview[0].sessions);
    const sharing = new Set(expected.sessionsSharingMessages);
    const comparable = Object.entries(expected.perSessionTokens).filter(([session]) => !sharing.has(session));
    expect(comparable.length).toBeGreaterThan(30);
    for (const [session, tokens] of comparable) expect(rows.get(session)?.tokens, session).toBe(tokens.input + tokens.output + tokens.cacheRead + tokens.cacheCreation);
    for (const usage of bySession.rows) {
      expect(rows.get(usage.period)?.tokens, usage.period).toBe(usage.total_tokens);
      expect(rows.get(usage.period)?.cost, usage.period).toBe(usage.cost_usd);
    }
  });

  it('shows each session\'s repository and the branch it was on last, and filters by branch', async () => {
    const rows = await tableRows();
    const stored = await query<{ session: string; branch: string }>(
      `SELECT SpanAttributes['session.id'] AS session, argMaxIf(SpanAttributes['vcs.ref.head.name'], Timestamp, mapContains(SpanAttributes, 'vcs.ref.head.name')) AS branch
       FROM ${spans("SpanName = 'invoke_agent claude-code'")} GROUP BY session`,
    );
    expect(stored.length).toBe(rows.size);
    // The generated projects are in no repository: the cell is the branch alone.
    for (const { session, branch } of stored) expect(rows.get(session)?.place, session).toBe(branch || '–');
    await page.type('input[type=search]', 'feature/retry');
    const count = await page.$eval('[data-figure="sessions.count"]', (element) => Number(element.getAttribute('data-value')));
    expect(count).toBe(stored.filter((row) => row.branch.includes('feature/retry')).length);
    expect(count).toBeGreaterThan(0);
    await page.$eval('input[type=search]', (input) => {
      (input as HTMLInputElement).value = '';
      input.dispatchEvent(new Event('input'));
    });
  });

  it('sorts by a column and filters by text', async () => {
    const rows = await tableRows();
    const turns = [...rows.values()].map((row) => row.turns);
    await page.$eval('.viewport', (viewport) => (viewport.scrollTop = 0));
    await page.click('button[data-sort="turns"]');
    const firstTurns = () => page.$eval('.viewport .row [data-figure="turns"]', (element) => Number(element.getAttribute('data-value')));
    expect(await firstTurns()).toBe(Math.max(...turns));
    await page.click('button[data-sort="turns"]');
    expect(await firstTurns()).toBe(Math.min(...turns));
    const project = [...rows.values()].find((row) => row.project.startsWith('/'))!.project;
    await page.type('input[type=search]', project);
    const count = await page.$eval('[data-figure="sessions.count"]', (element) => Number(element.getAttribute('data-value')));
    expect(count).toBe([...rows.values()].filter((row) => row.project.includes(project)).length);
    expect(count).toBeLessThan(rows.size);
  });

  it('shows every span of a turn in tree order, hook events as marks, the masked prompt as stored', async () => {
    // The turn with the most kinds of span: shell commands and a subagent if there are any, then the most spans.
    const [turn] = await query<{ trace: string; session: string }>(
      `SELECT TraceId AS trace, any(SpanAttributes['session.id']) AS session FROM ${spans('1')} GROUP BY TraceId
       ORDER BY countIf(startsWith(SpanName, 'shell ')) > 0 DESC, countIf(startsWith(SpanName, 'invoke_agent ') AND SpanName != 'invoke_agent claude-code') > 0 DESC, count() DESC, TraceId LIMIT 1`,
    );
    const stored = await query<{ id: string; parent: string; name: string; start: number; marks: number; prompt: string }>(
      `SELECT SpanId AS id, ParentSpanId AS parent, SpanName AS name, toUnixTimestamp64Nano(Timestamp) AS start, length(Events.Name) AS marks,
         SpanAttributes['ccotel.prompt'] AS prompt FROM ${spans(`TraceId = '${turn.trace}'`)}`,
    );
    expect(stored.some((span) => span.name.startsWith('shell '))).toBe(true);
    await page.goto(`${served.base}/#/session/${encodeURIComponent(turn.session)}?turn=${turn.trace}`);
    await shown(page, 'session');
    const section = `section.turn[data-trace="${turn.trace}"]`;
    const rows = await page.$$eval(`${section} .span-row`, (elements) =>
      elements.map((row) => ({ id: row.getAttribute('data-span-id') ?? '', depth: Number(row.getAttribute('data-depth')), marks: row.querySelectorAll('.mark').length })),
    );
    expect(rows.map((row) => row.id).sort()).toEqual(stored.map((span) => span.id).sort());
    const byId = new Map(stored.map((span) => [span.id, span]));
    const position = new Map(rows.map((row, index) => [row.id, index]));
    const depth = new Map(rows.map((row) => [row.id, row.depth]));
    for (const row of rows) {
      const span = byId.get(row.id)!;
      expect(row.marks, span.name).toBe(span.marks);
      if (span.parent === '') {
        expect(row.depth).toBe(0);
        continue;
      }
      expect(position.get(row.id)!, `${span.name} after its parent`).toBeGreaterThan(position.get(span.parent)!);
      expect(row.depth).toBe(depth.get(span.parent)! + 1);
    }
    // Siblings in start order.
    for (const span of stored) {
      const siblings = stored.filter((other) => other.parent === span.parent).sort((a, b) => position.get(a.id)! - position.get(b.id)!);
      for (let index = 1; index < siblings.length; index++) expect(siblings[index].start).toBeGreaterThanOrEqual(siblings[index - 1].start);
    }
    const root = stored.find((span) => span.parent === '')!;
    expect(await page.$eval(`${section} pre.prompt`, (element) => element.textContent)).toBe(root.prompt);
  });

  it('colours denied and failed tool calls', async () => {
    const [denied] = await query<{ id: string; session: string }>(
      `SELECT SpanId AS id, SpanAttributes['session.id'] AS session FROM ${spans(`SpanAttributes['ccotel.tool.outcome'] = 'denied'`)} ORDER BY SpanId LIMIT 1`,
    );
    await page.goto(`${served.base}/#/session/${encodeURIComponent(denied.session)}`);
    await shown(page, 'session');
    expect(await page.$eval(`.span-row[data-span-id="${denied.id}"] .bar`, (bar) => bar.className)).toContain('state-denied');
  });

  it('lists every failure mode detection, each linked to its session and turn', async () => {
    await page.goto(`${served.base}/#/failures`);
    await shown(page, 'failures');
    const modes = await page.$$eval('table.failures tbody tr', (rows) => rows.map((row) => row.getAttribute('data-mode') ?? ''));
    const detections = Object.fromEntries(report.failureModes.map((row) => [row.mode, row.detections]));
    expect(detections).not.toEqual({});
    const counted: Record<string, number> = {};
    for (const mode of modes) counted[mode] = (counted[mode] ?? 0) + 1;
    expect(counted).toEqual(detections);
    const link = await page.$('table.failures a[href*="?turn="]');
    expect(link).not.toBeNull();
    const href = await link!.evaluate((anchor) => anchor.getAttribute('href') ?? '');
    await link!.click();
    await shown(page, 'session');
    const trace = new URLSearchParams(href.split('?')[1]).get('turn');
    expect(await page.$(`section.turn[data-trace="${trace}"]`)).not.toBeNull();
    expect(await page.$$eval('.facts tr[data-event="ccotel.failure_mode.detected"]', (rows) => rows.length)).toBeGreaterThan(0);
  });

  /** `hash` shown at `viewport`'s size, laid out (charts resize on the frame after their data). */
  async function showAt(viewport: { width: number; height: number }, hash: string, name: string): Promise<Page> {
    await page.setViewport(viewport);
    await page.goto(`${served.base}/${hash}`);
    await shown(page, name);
    await page.evaluate(() => new Promise((resolveFrame) => requestAnimationFrame(() => requestAnimationFrame(resolveFrame))));
    return page;
  }

  /** The turn with the most spans: the session page scrolled to its waterfall. */
  async function busiestTurn(): Promise<string> {
    const [turn] = await query<{ session: string; trace: string }>(
      `SELECT any(SpanAttributes['session.id']) AS session, TraceId AS trace FROM ${spans('1')} GROUP BY trace ORDER BY count() DESC, trace LIMIT 1`,
    );
    return `#/session/${encodeURIComponent(turn.session)}?turn=${turn.trace}`;
  }

  for (const viewport of [PHONE, LAPTOP]) {
    it(`fits every page in ${viewport.width} px: no sideways scroll of the document, no table cut`, async () => {
      const pages = { overview: '#/overview', sessions: '#/sessions', session: await busiestTurn(), failures: '#/failures' };
      const problems: Record<string, string[]> = {};
      for (const [name, hash] of Object.entries(pages)) {
        problems[name] = await layoutProblems(await showAt(viewport, hash, name));
        await screenshot(page, viewport === PHONE ? `${name}-phone` : name);
      }
      expect(problems).toEqual({ overview: [], sessions: [], session: [], failures: [] });
    });
  }

  it('keeps the waterfall readable on a phone: every bar has most of the width to move in', async () => {
    await showAt(PHONE, await busiestTurn(), 'session');
    const tracks = await page.$$eval('.span-row .track', (elements) => elements.map((element) => element.clientWidth));
    expect(tracks.length).toBeGreaterThan(0);
    expect(Math.min(...tracks)).toBeGreaterThanOrEqual(PHONE.width / 2);
  });

  it('says a range holds no data instead of showing 1970 and zeros, at both widths', async () => {
    const last = Date.parse(`${report.overview[0].last_event as string}Z`.replace(' ', 'T'));
    const hash = `?from=${last + 86_400_000}&to=${last + 2 * 86_400_000}`;
    for (const viewport of [PHONE, LAPTOP]) {
      await showAt(viewport, `#/overview${hash}`, 'overview');
      const text = await page.$eval('main', (element) => element.innerText);
      expect(text).not.toContain('1970');
      expect(text).toContain('no data in this range');
      expect(await layoutProblems(page)).toEqual([]);
      await showAt(viewport, `#/sessions${hash}`, 'sessions');
      expect(await page.$eval('main', (element) => element.innerText)).toContain('no sessions in this range');
    }
  });

  it('draws one day of data on an axis of one day, not years', async () => {
    const first = Date.parse(`${report.overview[0].first_event as string}Z`.replace(' ', 'T'));
    const midnight = Math.ceil((first + 1) / 86_400_000) * 86_400_000;
    await showAt(LAPTOP, `#/overview?from=${first}&to=${Math.min(first + 12 * 3_600_000, midnight)}`, 'overview');
    const days = (await page.evaluate(async (query) => (await (await fetch(`/api/overview?${query}`)).json()).days.days, `from=${first}&to=${Math.min(first + 12 * 3_600_000, midnight)}`)) as number[];
    expect(days).toHaveLength(1);
    const axes = await page.$$eval('figure.chart[data-x-min]', (elements) => elements.map((element) => Number(element.getAttribute('data-x-max')) - Number(element.getAttribute('data-x-min'))));
    expect(axes.length).toBeGreaterThanOrEqual(4);
    for (const seconds of axes) expect(seconds).toBeLessThanOrEqual(86_400);
  });

  it('counts in the singular when there is one: "1 session"', async () => {
    const [one] = await query<{ start: number }>(`SELECT min(toUnixTimestamp64Milli(Timestamp)) AS start FROM ${spans(`SpanName = 'invoke_agent claude-code'`)}`);
    await showAt(LAPTOP, `#/sessions?from=${one.start}&to=${one.start + 1}`, 'sessions');
    expect(await page.$eval('[data-figure="sessions.count"]', (element) => Number(element.getAttribute('data-value')))).toBe(1);
    const totals = await page.$eval('.totals', (element) => element.textContent ?? '');
    expect(totals).toMatch(/^1 session · /);
    expect(totals).not.toMatch(/\b1 (sessions|turns|tokens)\b/);
  });

  it('exports one self-contained HTML file of the overview and sessions, with no prompt in it', async () => {
    const file = join(root, 'report.html');
    await ccotel('ui', '--export', file);
    const html = readFileSync(file, 'utf8');
    const prompts = await query<{ prompt: string }>(`SELECT SpanAttributes['ccotel.prompt'] AS prompt FROM ${spans(`SpanName = 'invoke_agent claude-code'`)} WHERE length(prompt) > 20 LIMIT 20`);
    expect(prompts.length).toBeGreaterThan(0);
    for (const { prompt } of prompts) expect(html.includes(prompt)).toBe(false);
    const exportPage = await newPage(browser, consoleErrors);
    const requests: string[] = [];
    exportPage.on('request', (sent) => requests.push(sent.url()));
    await exportPage.goto(`file://${file}`);
    await shown(exportPage, 'overview');
    for (const { path, value } of await figures(exportPage)) {
      const [section, index, field] = path.split('.');
      expect(value, path).toBe(String(report[section][Number(index)][field]));
    }
    await exportPage.goto(`file://${file}#/sessions`);
    await shown(exportPage, 'sessions');
    expect(await exportPage.$eval('[data-figure="sessions.count"]', (element) => Number(element.getAttribute('data-value')))).toBe(report.overview[0].sessions);
    expect(requests.filter((url) => !url.startsWith('file:'))).toEqual([]);
    await exportPage.close();
  });

  it('logged no console error on any page', () => {
    expect(consoleErrors).toEqual([]);
  });
});
