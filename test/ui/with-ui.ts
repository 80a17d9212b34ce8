// The web view of a store in the browser for one describe block's tests. Apart from browser.ts, which bench/ui.ts
// loads outside vitest, where importing vitest fails.
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll } from 'vitest';
import { launchBrowser, openUi, stop, type Served } from './browser.js';

export interface UiFixture {
  page: Page;
  served: Served;
  /** The page's console errors and uncaught exceptions. */
  consoleErrors: string[];
}

/**
 * The view of a store in the browser for the tests of one describe block: `fill` writes the store first, then the
 * view is served and logged into; all of it is stopped after the block. Its fields are there once the tests run.
 */
export function withUi(storeDir: string, env: NodeJS.ProcessEnv, fill: () => Promise<void>): UiFixture {
  const ui = { consoleErrors: [] as string[] } as UiFixture;
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
    await fill();
    Object.assign(ui, await openUi(browser, storeDir, env, ui.consoleErrors));
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await stop(ui.served?.child);
  });
  return ui;
}
