// What the web view tests share: the system Chromium driven by puppeteer-core (no browser download), a CLI
// process serving the view (its login URL read from its output), console errors collected, screenshots.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { CLI } from '../reliability/cli.js';

export const CHROMIUM = process.env.CCOTEL_CHROMIUM ?? '/usr/bin/chromium';
const README_IMAGES = join(import.meta.dirname, '..', '..', 'docs', 'img');
export const SCREENSHOT_DIR = mkdtempSync(join(tmpdir(), 'ccotel-ui-screenshots-'));

/** Fails (never skips) without the browser: CI installs Debian's chromium package. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`the web view tests need a headless Chromium at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium) or set CCOTEL_CHROMIUM`);
  }
  // Generous waits: on a loaded machine Chromium takes far longer than puppeteer's 30 s defaults to start and answer.
  return puppeteer.launch({ executablePath: CHROMIUM, headless: true, timeout: 180_000, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

/** A page whose console errors and uncaught exceptions land in `errors`. */
export async function newPage(browser: Browser, errors: string[]): Promise<Page> {
  const page = await browser.newPage();
  page.setDefaultTimeout(120_000);
  await page.setViewport({ width: 1200, height: 800 });
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`${page.url()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`${page.url()}: ${(error as Error).message}`));
  return page;
}

/** Wait until the page shows `name` with its data loaded (or its error: `state`). */
export async function shown(page: Page, name: string, state = 'ready'): Promise<void> {
  await page.waitForSelector(`body[data-page="${name}"][data-state="${state}"]`, { timeout: 60_000 });
}

/**
 * Into the temp dir; with CCOTEL_UPDATE_SCREENSHOTS=1 (npm run screenshots) also over the README's copy.
 * WebP at quality 80: a fifth of a PNG's size, and sharp enough for text.
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(SCREENSHOT_DIR, `${name}.webp`);
  await page.screenshot({ path, type: 'webp', quality: 80 });
  if (process.env.CCOTEL_UPDATE_SCREENSHOTS === '1') {
    mkdirSync(README_IMAGES, { recursive: true });
    copyFileSync(path, join(README_IMAGES, `${name}.webp`));
  }
  return path;
}

export interface Served {
  child: ChildProcess;
  loginUrl: string;
  base: string;
  output: () => string;
}

const LOGIN_URL = /http:\/\/127\.0\.0\.1:\d+\/login\?code=[\w-]+/;

/** Start `ccotel <args>` and wait for the login URL it prints (ui on stdout, run --ui on stderr). */
export function serve(args: string[], env: NodeJS.ProcessEnv): Promise<Served> {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolveServed, rejectServed) => {
    const timer = setTimeout(() => rejectServed(new Error(`no login URL from ccotel ${args.join(' ')} within 90 s:\n${output}`)), 90_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = LOGIN_URL.exec(output);
      if (match) {
        clearTimeout(timer);
        resolveServed({ child, loginUrl: match[0], base: new URL(match[0]).origin, output: () => output });
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      rejectServed(new Error(`ccotel ${args.join(' ')} exited (${code}) before serving:\n${output}`));
    });
  });
}

/** `ccotel ui` on an embedded store, and a page logged in on its overview. */
export async function openUi(browser: Browser, storeDir: string, env: NodeJS.ProcessEnv, consoleErrors: string[]): Promise<{ served: Served; page: Page }> {
  const served = await serve(['ui', '--store', storeDir], env);
  const page = await newPage(browser, consoleErrors);
  await page.goto(served.loginUrl);
  await shown(page, 'overview');
  return { served, page };
}

/** SIGTERM, and wait for the exit. */
export async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
  child.kill('SIGTERM');
  await exited;
}

/** Every `[data-figure]` on the page (or under `within`): its path, raw value and shown text. */
export function figures(page: Page, within = 'body'): Promise<{ path: string; value: string; text: string }[]> {
  return page.$$eval(`${within} [data-figure]`, (elements) =>
    elements.map((element) => ({ path: element.getAttribute('data-figure') ?? '', value: element.getAttribute('data-value') ?? '', text: element.textContent ?? '' })),
  );
}

/** How the page formats a figure (dom.ts `figure`). */
export function shownAs(value: unknown): string {
  return typeof value === 'number' && Number.isInteger(value) ? value.toLocaleString('en-US') : String(value);
}
