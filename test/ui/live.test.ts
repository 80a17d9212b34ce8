// `ccotel run --ui` serves the web view from the live sidecar and its pages refresh by themselves as
// transcripts arrive; a second `ccotel ui` reads through run's query endpoint, and when that endpoint goes
// away (run stopped) the page says the query failed instead of going blank.
import { cpSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCorpus, type Expected } from '../generator/corpus.js';
import { launchBrowser, newPage, serve, shown, stop, type Served } from './browser.js';

describe('ccotel run --ui: live refresh, and a query error shown as a message', () => {
  const root = mkdtempSync(join(tmpdir(), 'ccotel-ui-live-'));
  const claudeDir = join(root, 'claude');
  const storeDir = join(root, 'store');
  const env = { ...process.env, HOME: join(root, 'home'), CLAUDE_CONFIG_DIR: claudeDir, CCOTEL_STATE_DIR: join(root, 'state'), CCOTEL_RAW_TTL_DAYS: '0', CCOTEL_UI_REFRESH_MS: '500' };
  let browser: Browser;
  let run: Served;
  let reader: Served;
  let expected: Expected;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    browser = await launchBrowser();
    mkdirSync(join(claudeDir, 'projects'), { recursive: true });
    mkdirSync(join(root, 'home'), { recursive: true });
    expected = await generateCorpus({ seed: 11, root: join(root, 'generated'), sessions: 6, hostLayout: 'single-root' });
    run = await serve(['run', '--ui', '--store', storeDir], env);
  });

  afterAll(async () => {
    await browser?.close();
    await stop(reader?.child);
    await stop(run?.child);
  });

  it('shows sessions as run stores them, without a reload', async () => {
    const page = await newPage(browser, consoleErrors);
    await page.goto(run.loginUrl);
    await shown(page, 'overview');
    expect(await page.$eval('.status', (element) => element.textContent)).toContain('live');
    const sessions = () => page.$eval('.tiles [data-figure="overview.0.sessions"]', (element) => element.getAttribute('data-value'));
    expect(await sessions()).toBe('0');
    const loadsBefore = await page.$eval('body', (body) => Number(body.dataset.loads));
    cpSync(join(root, 'generated', 'projects'), join(claudeDir, 'projects'), { recursive: true, preserveTimestamps: true });
    await page.waitForFunction(
      (count) => document.querySelector('.tiles [data-figure="overview.0.sessions"]')?.getAttribute('data-value') === String(count),
      { timeout: 120_000 },
      expected.sessions,
    );
    expect(await page.$eval('body', (body) => Number(body.dataset.loads))).toBeGreaterThan(loadsBefore);
    await page.close();
  });

  it("reads through run's endpoint, and says so when a query fails", async () => {
    reader = await serve(['ui', '--store', storeDir], env);
    const page = await newPage(browser, consoleErrors);
    await page.goto(reader.loginUrl);
    await shown(page, 'overview');
    expect(await page.$eval('.tiles [data-figure="overview.0.sessions"]', (element) => element.getAttribute('data-value'))).toBe(String(expected.sessions));
    expect(await page.$eval('.status', (element) => element.textContent)).toContain('live');
    await stop(run.child); // the endpoint the reader queries goes away
    await shown(page, 'overview', 'error');
    const alert = await page.$eval('[role=alert]', (element) => ({ text: element.textContent ?? '', hidden: (element as HTMLElement).hidden }));
    expect(alert.hidden).toBe(false);
    expect(alert.text).toMatch(/^Query failed: 500: .*(ECONNREFUSED|ECONNRESET).*the ccotel run serving this store, is not answering/);
    // The page keeps what it showed last, with the message above it.
    expect(await page.$('.tiles')).not.toBeNull();
    await page.close();
  });

  it('logged no console error except the failed requests of the stopped store', () => {
    expect(consoleErrors.filter((message) => !message.includes('status of 500'))).toEqual([]);
  });
});
