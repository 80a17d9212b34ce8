// Benchmark (not a test): the web view with 10 000 sessions, in headless Chromium. Overview: page load to
// rendered page, its API answer included, median of --runs, each a question the server has not cached (a
// range covering everything, a different bound each run), with the server's CPU seconds for it; then one the
// server answers from its cache; against `ccotel report --json` on the same store (a CLI process: startup, the
// report's queries, printing). Sessions table: frame times while scrolling it a page per frame, against the
// same rows drawn as one plain <table> (no virtualisation) scrolled the same way.
//
//   npm run build && node dist/bench/ui.js [--sessions 10000] [--runs 5] [--frames 300] [--store DIR]
// (--store: reuse a store holding such a corpus; else one is generated and backfilled into a temp dir.)
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Page } from 'puppeteer-core';
import { CLI } from '../test/reliability/cli.js';
import { launchBrowser, newPage, serve, shown, stop } from '../test/ui/browser.js';
import { processCpuSeconds } from './processes.js';
import { median, percentile } from './stats.js';

const { values: args } = parseArgs({
  options: {
    sessions: { type: 'string', default: '10000' },
    runs: { type: 'string', default: '5' },
    frames: { type: 'string', default: '300' },
    store: { type: 'string' },
  },
});

// The page-side functions below run in the browser; this file compiles without the DOM library, so the
// little they use is declared here (module scope: nothing global changes).
interface PageElement {
  id: string;
  className: string;
  textContent: string | null;
  append(...nodes: PageElement[]): void;
  replaceChildren(...nodes: PageElement[]): void;
  insertRow(): { insertCell(): PageElement };
}
declare const document: { createElement(tag: string): PageElement; querySelector(selector: string): PageElement | null };
declare function requestAnimationFrame(callback: (now: number) => void): number;

const ms = (value: number) => `${value.toFixed(1)} ms`;

/**
 * Until the process has used under 0.05 s of CPU in 2 s (at most 90 s): a store just opened merges its parts in
 * the background for a while, which would count as the overview's CPU (and slow it) otherwise.
 */
async function settled(pid: number): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (let before = processCpuSeconds(pid); Date.now() < deadline; ) {
    await new Promise((resolveWait) => setTimeout(resolveWait, 2_000));
    const now = processCpuSeconds(pid);
    if (now - before < 0.05) return;
    before = now;
  }
}

function prepareStore(): { store: string; env: NodeJS.ProcessEnv } {
  const env = { ...process.env, CCOTEL_RAW_TTL_DAYS: '0' };
  if (args.store) return { store: args.store, env };
  const root = mkdtempSync(join(tmpdir(), 'ccotel-bench-ui-'));
  const corpus = join(root, 'corpus');
  const started = Date.now();
  // Small non-conversation rows (--scale): the sessions are what this measures, not the bytes.
  execFileSync(process.execPath, [join(import.meta.dirname, 'gen-corpus.js'), '--seed', '3', '--out', corpus, '--sessions', args.sessions, '--layout', 'single-root', '--scale', '0.02'], { stdio: 'inherit' });
  const generated = { ...env, HOME: join(root, 'home'), CLAUDE_CONFIG_DIR: corpus, CCOTEL_STATE_DIR: join(root, 'state') };
  execFileSync(process.execPath, [CLI, 'backfill', '--no-progress', '--store', join(root, 'store')], { env: generated, stdio: 'inherit' });
  console.log(`corpus generated and backfilled in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return { store: join(root, 'store'), env: generated };
}

/** Scroll `selector` by one viewport height per animation frame; the frame-to-frame times. */
function scrollFrames(page: Page, selector: string, frames: number): Promise<number[]> {
  return page.$eval(
    selector,
    (element, count) =>
      new Promise<number[]>((resolveFrames) => {
        const times: number[] = [];
        let last = performance.now();
        const step = (now: number) => {
          times.push(now - last);
          last = now;
          element.scrollTop = (element.scrollTop + element.clientHeight) % Math.max(1, element.scrollHeight - element.clientHeight);
          if (times.length < count) requestAnimationFrame(step);
          else resolveFrames(times.slice(1));
        };
        requestAnimationFrame(step);
      }),
    frames,
  );
}

/** The same rows as one plain table of every session, in a scroll box the size of the virtual one. */
async function plainTable(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const rows = (await (await fetch('/api/sessions')).json()) as Record<string, unknown>[];
    const box = document.createElement('div');
    box.id = 'plain';
    box.className = 'viewport';
    const table = document.createElement('table');
    for (const row of rows) {
      const tr = table.insertRow();
      for (const key of ['project', 'start_ms', 'end_ms', 'turns', 'input_tokens', 'output_tokens', 'outcome', 'state', 'failure_modes']) tr.insertCell().textContent = String(row[key]);
    }
    box.append(table);
    document.querySelector('main')!.replaceChildren(box);
  });
}

function summary(times: number[]): string {
  const janky = times.filter((time) => time > 50).length;
  return `median ${ms(median(times))}, p95 ${ms(percentile([...times].sort((a, b) => a - b), 95))}, max ${ms(Math.max(...times))}, frames over 50 ms: ${janky} of ${times.length}`;
}

async function main(): Promise<void> {
  const { store, env } = prepareStore();
  const reportTimes: number[] = [];
  for (let run = 0; run < Number(args.runs); run++) {
    const started = performance.now();
    execFileSync(process.execPath, [CLI, 'report', '--json', '--store', store], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    reportTimes.push(performance.now() - started);
  }
  const browser = await launchBrowser();
  const served = await serve(['ui', '--store', store], env);
  const errors: string[] = [];
  try {
    const page = await newPage(browser, errors);
    await page.goto(served.loginUrl);
    await shown(page, 'overview');
    const sessions = await page.$eval('.tiles [data-figure="overview.0.sessions"]', (element) => element.getAttribute('data-value'));
    await settled(served.child.pid!);
    const overviewTimes: number[] = [];
    const serverCpu: number[] = [];
    // A full page load from a blank page: going to the new hash on the page itself would already ask for
    // that range (the app follows hash changes), and a reload after it would ask again while the first is running.
    const render = async (hash: string) => {
      await page.goto('about:blank');
      const started = performance.now();
      const cpuBefore = processCpuSeconds(served.child.pid!);
      await page.goto(`${served.base}/${hash}`);
      await shown(page, 'overview');
      return { ms: performance.now() - started, cpu: processCpuSeconds(served.child.pid!) - cpuBefore };
    };
    const farFuture = Date.UTC(2100, 0, 1);
    for (let run = 0; run < Number(args.runs); run++) {
      const { ms: took, cpu } = await render(`#/overview?from=0&to=${farFuture + run}`);
      overviewTimes.push(took);
      serverCpu.push(cpu);
    }
    const cachedRender = await render(`#/overview?from=0&to=${farFuture}`);
    await page.goto(`${served.base}/#/sessions`);
    await shown(page, 'sessions');
    const domRows = await page.$$eval('.viewport .row', (rows) => rows.length);
    const virtual = await scrollFrames(page, '.viewport', Number(args.frames));
    await plainTable(page);
    const plain = await scrollFrames(page, '#plain', Number(args.frames));
    console.log(`machine: ${cpus().length} cores, load average ${loadavg().map((load) => load.toFixed(1)).join(' ')}; ${sessions} sessions`);
    console.log(`overview, page load to rendered page, not cached (median of ${args.runs}): ${ms(median(overviewTimes))}, server CPU ${median(serverCpu).toFixed(2)} s; ccotel report --json: ${ms(median(reportTimes))} (ratio ${(median(overviewTimes) / median(reportTimes)).toFixed(2)})`);
    console.log(`overview answered from the server's cache (store unchanged): ${ms(cachedRender.ms)}, server CPU ${cachedRender.cpu.toFixed(2)} s`);
    console.log(`sessions table, virtual (${domRows} rows in the document): ${summary(virtual)}`);
    console.log(`same rows as one plain table: ${summary(plain)} (median frame ratio virtual/plain ${(median(virtual) / median(plain)).toFixed(2)})`);
    if (errors.length > 0) console.log(`console errors: ${errors.join('; ')}`);
  } finally {
    await browser.close();
    await stop(served.child);
  }
}

await main();
