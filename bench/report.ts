// Benchmark (not a test): `ccotel report daily|session|blocks --json` against ccusage 20.0.24 asked the same
// question on the same files, in one run; and `report insights --json` against `report daily --json` on the same store
// (issue 35: insights within the time of report daily). ccotel answers from the summaries kept at insert (the generated corpus
// is dated August 2026, older than the 30-day raw window, so nothing else is there); ccusage re-reads every file.
//
//   npm run build && node dist/bench/report.js [--bytes 200M] [--seed 1] [--dir .cache/bench]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { generateCorpus } from '../test/generator/corpus.js';
import type { Expected } from '../test/generator/expected.js';

const repo = resolve(import.meta.dirname, '..', '..');
const cli = join(repo, 'dist', 'sidecar', 'src', 'cli.js');
const ccusage = join(repo, 'node_modules', 'ccusage', 'src', 'cli.js');
const { values: args } = parseArgs({
  options: {
    bytes: { type: 'string', default: '200M' },
    seed: { type: 'string', default: '1' },
    dir: { type: 'string', default: join(repo, '.cache', 'bench') },
  },
});

function run(command: string[], env: NodeJS.ProcessEnv): { seconds: number; stdout: string } {
  const started = performance.now();
  const result = spawnSync(process.execPath, command, { env, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (result.status !== 0) throw new Error(`${command.join(' ')} failed: ${result.stderr}`);
  return { seconds: (performance.now() - started) / 1000, stdout: result.stdout };
}

/** Median wall time of three runs, and the last run's output. */
function median3(command: string[], env: NodeJS.ProcessEnv): { seconds: number; stdout: string } {
  const runs = [run(command, env), run(command, env), run(command, env)];
  return { seconds: runs.map((r) => r.seconds).sort((a, b) => a - b)[1], stdout: runs[2].stdout };
}

async function main(): Promise<void> {
  const corpusDir = join(args.dir!, `corpus-report-${args.bytes}-${args.seed}`);
  const targetBytes = Number(/^(\d+)M$/i.exec(args.bytes!)?.[1] ?? 200) * 1e6;
  const expected: Expected = existsSync(join(corpusDir, 'expected.json'))
    ? (JSON.parse(readFileSync(join(corpusDir, 'expected.json'), 'utf8')) as Expected)
    : await generateCorpus({ seed: Number(args.seed), root: corpusDir, targetBytes });
  const env = {
    ...process.env,
    HOME: mkdtempSync(join(tmpdir(), 'ccotel-bench-home-')),
    CCOTEL_STATE_DIR: mkdtempSync(join(tmpdir(), 'ccotel-bench-state-')),
    CLAUDE_CONFIG_DIR: expected.configDirs.join(','),
    TZ: 'UTC',
  };
  const store = mkdtempSync(join(tmpdir(), 'ccotel-bench-store-'));
  console.error('ccotel backfill (default settings) …');
  const ingest = run([cli, 'backfill', '--store', store, '--json', '--no-progress'], env);
  const figures: Record<string, unknown> = {
    machine: { cpu: cpus()[0]?.model, cores: cpus().length, loadAverage1m: Number(loadavg()[0].toFixed(1)), node: process.version },
    corpus: { mb: Number((expected.bytes / 1e6).toFixed(1)), sessions: expected.sessions, chatSpans: expected.chatSpans },
    backfillSeconds: Number(ingest.seconds.toFixed(2)),
  };
  for (const period of ['daily', 'session', 'blocks']) {
    console.error(`report ${period}: ccotel, ccusage …`);
    const ours = median3([cli, 'report', period, '--json', '--timezone', 'UTC', '--store', store], env);
    const theirs = median3([ccusage, period, '--json', '--offline'], env);
    const rows = (JSON.parse(ours.stdout) as { rows: unknown[] }).rows.length;
    // ccusage lists the gaps between blocks as blocks of their own (isGap); ccotel does not.
    const theirList = Object.values(JSON.parse(theirs.stdout) as Record<string, unknown>).find(Array.isArray) as { isGap?: boolean }[];
    const theirRows = theirList.filter((row) => !row.isGap).length;
    figures[period] = {
      ccotelSeconds: Number(ours.seconds.toFixed(2)),
      ccusageSeconds: Number(theirs.seconds.toFixed(2)),
      speedupVsCcusage: Number((theirs.seconds / ours.seconds).toFixed(1)),
      rows: { ccotel: rows, ccusage: theirRows },
    };
  }
  console.error('report insights …');
  const insights = median3([cli, 'report', 'insights', '--json', '--timezone', 'UTC', '--store', store], env);
  const daily = figures.daily as { ccotelSeconds: number };
  figures.insights = {
    ccotelSeconds: Number(insights.seconds.toFixed(2)),
    ratioToDaily: Number((insights.seconds / daily.ccotelSeconds).toFixed(2)),
    found: Object.fromEntries((JSON.parse(insights.stdout) as { insights: { pattern: string; count: number }[] }).insights.map((i) => [i.pattern, i.count])),
  };
  figures.loadAverage1mAfter = Number(loadavg()[0].toFixed(1));
  console.log(JSON.stringify(figures, null, 2));
}

await main();
