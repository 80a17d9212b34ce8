// History older than the raw window (default settings: 30 days) lives only in the summaries: the web view
// still shows its sessions, tokens and cost (as `report session|daily --json` do), next to the recent
// sessions the raw tables hold in detail; their turns too, counted from the summaries as the overview counts them.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { storeCli } from '../e2e/store-cli.js';
import { generateCorpus, type Expected } from '../generator/corpus.js';
import { shown } from './browser.js';
import { withUi } from './with-ui.js';

const DAY = 86_400_000;
interface Usage {
  rows: { period: string; total_tokens: number; cost_usd: number }[];
  totals: { cost_usd: number; sessions: number };
}

describe('ccotel ui with history older than the raw window', () => {
  const root = mkdtempSync(join(tmpdir(), 'ccotel-ui-history-'));
  const storeDir = join(root, 'store');
  const env = { ...process.env, HOME: join(root, 'home'), CLAUDE_CONFIG_DIR: `${join(root, 'old')},${join(root, 'recent')}`, CCOTEL_STATE_DIR: join(root, 'state') };
  const { ccotel } = storeCli(storeDir, () => env);
  let old: Expected;
  let recent: Expected;
  let bySession: Usage;
  let daily: Usage;
  const ui = withUi(storeDir, env, async () => {
    old = await generateCorpus({ seed: 21, root: join(root, 'old'), sessions: 5, hostLayout: 'single-root', startMs: Date.now() - 120 * DAY });
    recent = await generateCorpus({ seed: 22, root: join(root, 'recent'), sessions: 5, hostLayout: 'single-root', startMs: Date.now() - 2 * DAY });
    await ccotel('backfill', '--no-progress');
    bySession = JSON.parse(await ccotel('report', 'session', '--json', '--timezone', 'UTC')) as Usage;
    daily = JSON.parse(await ccotel('report', 'daily', '--json', '--timezone', 'UTC')) as Usage;
  });

  it('shows the cost of all history on the overview, and its days', async () => {
    const sessions = await ui.page.$eval('.tiles [data-figure="overview.0.sessions"]', (element) => Number(element.getAttribute('data-value')));
    expect(sessions).toBe(old.sessions + recent.sessions);
    const cost = await ui.page.$eval('.tiles [data-figure="overview.0.cost_usd"]', (element) => Number(element.getAttribute('data-value')));
    expect(cost).toBeCloseTo(daily.totals.cost_usd, 6);
    const days = await ui.page.evaluate(async () => (await (await fetch('/api/overview')).json()).days);
    const oldest = Math.min(...days.days) * 1000;
    expect(oldest).toBeLessThan(Date.now() - 100 * DAY);
    // The turns of the old sessions are counted per day from the summaries, as the report counts them.
    const turns = await ui.page.$eval('.tiles [data-figure="overview.0.turns"]', (element) => Number(element.getAttribute('data-value')));
    expect(days.turns.reduce((sum: number, value: number) => sum + value, 0)).toBe(turns);
    expect(days.turns.filter((value: number, index: number) => value > 0 && days.days[index] * 1000 < Date.now() - 100 * DAY).length).toBeGreaterThan(0);
  });

  it('lists the sessions only the summaries hold, with their tokens, cost and turns; the header counts the overview\'s turns', async () => {
    await ui.page.goto(`${ui.served.base}/#/sessions`);
    await shown(ui.page, 'sessions');
    const rows = await ui.page.$$eval('.viewport .row', (elements) =>
      elements.map((row) => ({
        session: row.getAttribute('data-session') ?? '',
        turns: Number(row.querySelector('[data-figure="turns"]')?.getAttribute('data-value')),
        tokens: Number(row.querySelector('[data-figure="total_tokens"]')?.getAttribute('data-value')),
        cost: Number(row.querySelector('[data-figure="cost_usd"]')?.getAttribute('data-value')),
      })),
    );
    expect(rows.length).toBe(old.sessions + recent.sessions);
    expect(bySession.totals.sessions).toBe(old.sessions + recent.sessions);
    for (const usage of bySession.rows) {
      const row = rows.find((candidate) => candidate.session === usage.period);
      expect(row, usage.period).toMatchObject({ tokens: usage.total_tokens, cost: usage.cost_usd });
    }
    const oldSessions = new Set(Object.keys(old.perSessionTokens));
    expect(rows.filter((row) => oldSessions.has(row.session)).reduce((sum, row) => sum + row.turns, 0)).toBe(old.turns);
    const headerTurns = await ui.page.$eval('[data-figure="sessions.turns"]', (element) => Number(element.getAttribute('data-value')));
    expect(headerTurns).toBe(old.turns + recent.turns);
    expect(ui.consoleErrors).toEqual([]);
  });

  it("shows an old session's turns from the summaries, saying that their detail expired", async () => {
    await ui.page.goto(`${ui.served.base}/#/sessions`);
    await shown(ui.page, 'sessions');
    const sessions = Object.keys(old.perSessionTokens);
    let turns = 0;
    for (const session of sessions) {
      await ui.page.goto(`${ui.served.base}/#/session/${encodeURIComponent(session)}`);
      await shown(ui.page, 'session');
      expect(await ui.page.$eval('p.expired', (element) => element.textContent)).toContain('expired');
      turns += await ui.page.$$eval('section.turn', (elements) => elements.length);
    }
    expect(sessions.length).toBe(old.sessions);
    expect(turns).toBe(old.turns);
    expect(ui.consoleErrors).toEqual([]);
  });
});
