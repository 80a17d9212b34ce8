// Runs every benchmark of issues #18's and #36's goals, one after the other, each printing its own figures, then one table of
// the headline figures against their bounds. A regression is one command away from being seen:
//
//   npm run bench                 (builds first; about 20 minutes on 2 cores)
//   npm run bench -- --quick      (smaller corpora and fewer runs: a few minutes, rougher figures)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { goalMet, SUMMARY_ENV, type GoalFigure } from './goals.js';

const { values: args } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
const repo = resolve(import.meta.dirname, '..', '..');
const viteNode = join(repo, 'node_modules', '.bin', 'vite-node');

/** Each benchmark as a command line: the compiled ones run from dist/, the others through vite-node. */
const benches: { name: string; command: string[] }[] = [
  { name: 'backfill', command: ['node', join(repo, 'dist', 'bench', 'backfill.js'), '--bytes', args.quick ? '100M' : '1G'] },
  // The corpus the backfill benchmark above generated (its directory naming: corpus-<bytes>-<seed>-x<scale>).
  { name: 'backfill memory', command: ['node', join(repo, 'dist', 'bench', 'backfill-memory.js'), '--corpus', join(repo, '.cache', 'bench', `corpus-${args.quick ? '100M' : '1G'}-1-x1`)] },
  // Issue #36 bounds OTLP-only memory at 5 GB (its corpus made on first use, ~15 minutes).
  ...(args.quick ? [] : [{ name: 'backfill memory, OTLP-only 5 GB', command: ['node', join(repo, 'dist', 'bench', 'backfill-memory.js'), '--bytes', '5G', '--modes', 'otlp-only'] }]),
  { name: 'backfill, real-shaped', command: ['node', join(repo, 'dist', 'bench', 'backfill.js'), '--bytes', args.quick ? '100M' : '1G', '--scale', '5'] },
  // The reading stage alone against the floor, on the corpus just read (no bound of its own: it shows where the time is not).
  { name: 'reading stage, real-shaped', command: ['node', join(repo, 'dist', 'bench', 'read-stage.js'), '--bytes', args.quick ? '100M' : '1G', '--scale', '5'] },
  // Answers at each history size: through a running sidecar, cold, and ccusage's re-read (its 1 GB corpus is the backfill's).
  { name: 'report', command: ['node', join(repo, 'dist', 'bench', 'report.js'), '--sizes', args.quick ? '10M,100M' : '10M,100M,1G'] },
  { name: 'idle', command: ['node', join(repo, 'dist', 'bench', 'idle.js'), '--embedded', ...(args.quick ? ['--files', '2000', '--seconds', '30', '--settle', '20'] : [])] },
  { name: 'hook', command: [viteNode, join(repo, 'bench', 'hook.ts'), args.quick ? '100' : '400'] },
  { name: 'otlp', command: [viteNode, join(repo, 'bench', 'otlp.ts'), args.quick ? '20000' : '100000'] },
  // The fleet path with the real clickhouse exporter (needs the built Collector): spans per gateway core, row → store delay.
  { name: 'fleet', command: [viteNode, join(repo, 'bench', 'fleet.ts'), ...(args.quick ? ['--sessions', '20', '--slices', '10'] : [])] },
];

const dir = mkdtempSync(join(tmpdir(), 'ccotel-bench-all-'));
const summary = join(dir, 'summary.jsonl');
const failed: string[] = [];
try {
  for (const { name, command } of benches) {
    console.log(`\n### ${name}: ${command.slice(1).join(' ')}\n`);
    const run = spawnSync(command[0], command.slice(1), { cwd: repo, stdio: 'inherit', env: { ...process.env, [SUMMARY_ENV]: summary } });
    if (run.status !== 0) failed.push(`${name} (exit ${run.status ?? run.signal})`);
  }
  const rows = readFileSync(summary, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { bench: string; figures: GoalFigure[] });
  console.log(`\n## Goals (${cpus().length} × ${cpus()[0]?.model ?? '?'}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')})\n`);
  console.log('| benchmark | figure | measured | bound | met |');
  console.log('|---|---|---:|---:|---|');
  for (const { bench, figures } of rows) {
    for (const figure of figures) {
      const bound = `${figure.better === 'higher' ? '≥' : '≤'} ${figure.bound} ${figure.unit}`;
      console.log(`| ${bench} | ${figure.goal}${figure.peer ? ` (vs ${figure.peer})` : ''} | ${figure.measured} ${figure.unit} | ${bound} | ${goalMet(figure) ? 'yes' : '**no**'} |`);
    }
  }
  if (failed.length > 0) console.log(`\nbenchmarks that failed: ${failed.join(', ')}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (failed.length > 0) process.exitCode = 1;
