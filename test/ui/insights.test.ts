// The Insights page (issue 35) in Chromium: its figures are `report insights --json`'s, each found pattern shows
// its suggestion, and an example opens its session at its turn.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { InsightsReport } from '../../sidecar/src/report/insights.js';
import { storeCli } from '../e2e/store-cli.js';
import { writeInsightSessions } from '../generator/insights.js';
import { cliEnv } from '../reliability/cli.js';
import { figures, shown } from './browser.js';
import { withUi } from './with-ui.js';

describe('ccotel ui: Insights', () => {
  const root = mkdtempSync(join(tmpdir(), 'ccotel-ui-insights-'));
  const storeDir = join(root, 'store');
  const env = cliEnv(root, { TZ: 'UTC' });
  const { ccotel } = storeCli(storeDir, () => env);
  let report: InsightsReport;
  const ui = withUi(storeDir, env, async () => {
    writeInsightSessions(join(root, 'claude'), join(root, 'state', 'spool'), Date.UTC(2026, 9, 5, 9));
    await ccotel('backfill', '--no-progress');
    report = JSON.parse(await ccotel('report', 'insights', '--json')) as InsightsReport;
  });

  it('shows the figures report insights --json gives, for every pattern', async () => {
    // All history: the sessions are of another day.
    await ui.page.goto(`${ui.served.base}/#/insights?from=0`);
    await shown(ui.page, 'insights');
    const onPage = await figures(ui.page, 'table.insights');
    const expected = report.insights.flatMap((insight, index) =>
      (['count', 'sessions', 'turns', 'tokens', 'cost_usd', 'time_ms'] as const).map((name) => ({ path: `insights.${index}.${name}`, value: String(insight[name]) })));
    expect(onPage.map(({ path, value }) => ({ path, value }))).toEqual(expected);
    expect(report.insights.filter((insight) => insight.count > 0)).toHaveLength(8);
    const suggestions = await ui.page.$$eval('section.insight', (sections) => sections.map((section) => [section.getAttribute('data-pattern'), section.querySelector('.suggestion')?.textContent]));
    expect(suggestions).toEqual(report.insights.filter((insight) => insight.count > 0).map((insight) => [insight.pattern, insight.suggestion]));
  });

  it('counts only the range asked for, as report insights --since does', async () => {
    const later = JSON.parse(await ccotel('report', 'insights', '--json', '--since', '2026-10-06')) as InsightsReport;
    await ui.page.goto(`${ui.served.base}/#/insights?from=${Date.UTC(2026, 9, 6)}`);
    await shown(ui.page, 'insights');
    const counts = (await figures(ui.page, 'table.insights')).filter(({ path }) => path.endsWith('.count')).map(({ value }) => value);
    expect(counts).toEqual(later.insights.map((insight) => String(insight.count)));
    expect(counts.every((count) => count === '0')).toBe(true);
    // Back to all history for the next test.
    await ui.page.goto(`${ui.served.base}/#/insights?from=0`);
    await shown(ui.page, 'insights');
  });

  it('opens an example at its turn', async () => {
    const example = report.insights.find((insight) => insight.pattern === 'retry_loop')!.examples[0];
    await ui.page.click('section[data-pattern="retry_loop"] a.example');
    await shown(ui.page, 'session');
    expect(decodeURIComponent(await ui.page.evaluate(() => location.hash))).toBe(`#/session/${example.session}?turn=${example.trace}`);
    expect(ui.consoleErrors).toEqual([]);
  });
});
