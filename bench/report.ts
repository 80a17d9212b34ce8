// Benchmark (not a test): `ccotel report daily|session|blocks --json` against ccusage 20.0.24 asked the same
// question on the same files, at each history size, in one run:
// - ccotel warm: `ccotel run` owns the store and serves it; the CLI asks through its endpoint. The overview
//   (`report --json`) too, and the web view's overview (its data read through the endpoint, in this process). The
//   sidecar keeps an answer while the store is unchanged (store/kept-answers.ts): the first run's figure is given
//   beside the median (warmFirst).
// - ccotel cold: nothing running. First answer: the CLI opens the embedded store itself (its kept answers removed
//   before each run, as after any change of the store). Asked again: the store unchanged, the answer it kept
//   (store/answer-cache.ts).
// - ccusage: re-reads every file for every question.
// - `report insights --json` against `report daily --json`, both cold, on the same store, in alternating pairs after
//   everything else (issue 35: insights within the time of report daily). Right after the backfill each cold reader's
//   engine still rewrites raw parts the TTL drops: the first reports pay for it, so the two are timed side by side.
// ccotel answers from the summaries kept at insert (the generated corpus is dated August 2026, older than the
// 30-day raw window, so nothing else is there). Each figure is the median of --runs, wall and CPU (user + system,
// children included), with the load average: on a shared machine the CPU seconds are the steadier figure.
//
//   npm run build && node dist/bench/report.js [--sizes 10M,100M,1G] [--runs 3] [--seed 1] [--dir .cache/bench]
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ANSWERS_DIR } from '../sidecar/src/store/answer-cache.js';
import { openStore } from '../sidecar/src/store/open-store.js';
import { UiData } from '../sidecar/src/ui/data.js';
import { benchCorpus } from './corpus.js';
import { reportGoals, type GoalFigure } from './goals.js';
import { ccusage, cli, processCpuSeconds, repo, timed, withRunningSidecar, type Timed } from './processes.js';
import { median } from './stats.js';

const { values: args } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10M,100M,1G' },
    runs: { type: 'string', default: '3' },
    seed: { type: 'string', default: '1' },
    dir: { type: 'string', default: join(repo, '.cache', 'bench') },
  },
});
const runs = Number(args.runs);
const PERIODS = ['daily', 'session', 'blocks'] as const;
/** Issue 36: with `run` up, every answer within this; with nothing running, ccusage's pace at 10 MB and 5× it at 1 GB. */
const WARM_BOUND_SECONDS = 0.25;

interface Figure {
  seconds: number;
  cpuSeconds: number;
}

const round = (value: number, digits = 3) => Number(value.toFixed(digits));
const load = () => round(loadavg()[0], 1);

/** The median wall and CPU of `runs` runs, the first run's (with `run` up: before the sidecar kept the answer), and the last run's output. */
function medianOf(results: Timed[]): Figure & { first: Figure; stdout: string } {
  return {
    seconds: round(median(results.map((r) => r.seconds))), cpuSeconds: round(median(results.map((r) => r.cpuSeconds))),
    first: { seconds: round(results[0].seconds), cpuSeconds: round(results[0].cpuSeconds) }, stdout: results[results.length - 1].stdout,
  };
}

/** `runs` runs, each after `before()`. */
function repeat(command: string, commandArgs: string[], env: NodeJS.ProcessEnv, before = () => {}): ReturnType<typeof medianOf> {
  return medianOf(Array.from({ length: runs }, () => (before(), timed(command, commandArgs, env))));
}

/** ccotel's rows and ccusage's: ccusage lists the gaps between blocks as blocks of their own (isGap); ccotel does not. */
function rowCounts(ours: string, theirs: string): { ccotel: number; ccusage: number } {
  const theirList = Object.values(JSON.parse(theirs) as Record<string, unknown>).find(Array.isArray) as { isGap?: boolean }[];
  return { ccotel: (JSON.parse(ours) as { rows: unknown[] }).rows.length, ccusage: theirList.filter((row) => !row.isGap).length };
}

type Period = (typeof PERIODS)[number];

interface SizeFigures {
  corpus: { mb: number; files: number; sessions: number; chatSpans: number };
  backfill: { seconds: number; cpuSeconds: number; maxRssMb: number };
  periods: Record<Period, {
    warm: Figure; warmFirst: Figure; cold: Figure; coldAgain: Figure; ccusage: Figure;
    coldSpeedupVsCcusage: number; coldAgainSpeedupVsCcusage: number; coldCpuSpeedupVsCcusage: number; rows: { ccotel: number; ccusage: number };
  }>;
  overview: { warm: Figure; warmFirst: Figure; webView: Figure; webViewFirst: Figure };
  insights: { cold: Figure; dailyBeside: Figure; ratioToDaily: number; cpuRatioToDaily: number; found: Record<string, number> };
  loadAverage1m: number;
}

async function measureSize(size: string): Promise<SizeFigures> {
  const expected = await benchCorpus({ dir: args.dir!, bytes: size, seed: Number(args.seed), scale: 1 });
  const home = mkdtempSync(join(tmpdir(), 'ccotel-bench-home-'));
  const env = { ...process.env, HOME: home, CCOTEL_STATE_DIR: join(home, 'state'), CLAUDE_CONFIG_DIR: expected.configDirs.join(','), TZ: 'UTC' };
  const store = join(home, 'store');
  try {
    console.error(`${size}: ccotel backfill (default settings) …`);
    const ingest = timed(process.execPath, [cli, 'backfill', '--store', store, '--json', '--no-progress'], env);
    const reportArgs = (period?: string) => [cli, 'report', ...(period ? [period] : []), '--json', '--timezone', 'UTC', '--store', store];
    const cold = {} as Record<Period, Figure & { stdout: string }>;
    const coldAgain = {} as Record<Period, Figure & { stdout: string }>;
    const theirs = {} as Record<Period, Figure & { stdout: string }>;
    for (const period of PERIODS) {
      console.error(`${size}: report ${period}: ccotel cold, ccusage …`);
      cold[period] = repeat(process.execPath, reportArgs(period), env, () => rmSync(join(store, ANSWERS_DIR), { recursive: true, force: true }));
      coldAgain[period] = repeat(process.execPath, reportArgs(period), env);
      if (coldAgain[period].stdout !== cold[period].stdout) throw new Error(`report ${period}: the kept answer differs from the engine's`);
      theirs[period] = repeat(process.execPath, [ccusage, period, '--json', '--offline'], env);
    }
    console.error(`${size}: report insights and report daily cold, alternating …`);
    const forgetAnswers = () => rmSync(join(store, ANSWERS_DIR), { recursive: true, force: true });
    const pairs = Array.from({ length: runs }, () => ['daily', 'insights'].map((period) => (forgetAnswers(), timed(process.execPath, reportArgs(period), env))));
    const [dailyBeside, insights] = [medianOf(pairs.map(([daily]) => daily)), medianOf(pairs.map(([, insight]) => insight))];
    console.error(`${size}: ccotel run serving the store: report through its endpoint, the web view's overview …`);
    const warm = await withRunningSidecar(store, env, async (sidecar) => {
      const answers = {} as Record<Period | 'overview', ReturnType<typeof medianOf>> & { webOverview: Figure & { first: Figure } };
      for (const period of PERIODS) answers[period] = repeat(process.execPath, reportArgs(period), sidecar.env);
      answers.overview = repeat(process.execPath, reportArgs(), sidecar.env);
      // The web view's overview as its server computes it (no page, no cache of its own), through the endpoint.
      const endpoint = await openStore(store, { command: 'bench', access: 'read' });
      try {
        const data = new UiData(endpoint.client, endpoint.database);
        const seconds: number[] = [];
        const cpu: number[] = [];
        for (let i = 0; i < runs; i++) {
          const [started, startedCpu, sidecarCpu] = [performance.now(), process.cpuUsage(), processCpuSeconds(sidecar.pid)];
          await data.overview({});
          const used = process.cpuUsage(startedCpu);
          seconds.push((performance.now() - started) / 1000);
          // Both sides: this process building the overview from the rows, the sidecar answering its queries.
          cpu.push((used.user + used.system) / 1e6 + processCpuSeconds(sidecar.pid) - sidecarCpu);
        }
        answers.webOverview = { seconds: round(median(seconds)), cpuSeconds: round(median(cpu)), first: { seconds: round(seconds[0]), cpuSeconds: round(cpu[0]) } };
      } finally {
        await endpoint.close();
      }
      return answers;
    });
    const strip = ({ seconds, cpuSeconds }: Figure) => ({ seconds, cpuSeconds });
    return {
      corpus: { mb: round(expected.bytes / 1e6, 1), files: expected.files, sessions: expected.sessions, chatSpans: expected.chatSpans },
      backfill: { seconds: round(ingest.seconds, 1), cpuSeconds: round(ingest.cpuSeconds, 1), maxRssMb: Math.round(ingest.maxRssMb) },
      periods: Object.fromEntries(PERIODS.map((period) => [period, {
        warm: strip(warm[period]),
        warmFirst: warm[period].first,
        cold: strip(cold[period]),
        coldAgain: strip(coldAgain[period]),
        ccusage: strip(theirs[period]),
        coldSpeedupVsCcusage: round(theirs[period].seconds / cold[period].seconds, 2),
        coldAgainSpeedupVsCcusage: round(theirs[period].seconds / coldAgain[period].seconds, 2),
        coldCpuSpeedupVsCcusage: round(theirs[period].cpuSeconds / cold[period].cpuSeconds, 2),
        rows: rowCounts(cold[period].stdout, theirs[period].stdout),
      }])) as SizeFigures['periods'],
      overview: { warm: strip(warm.overview), warmFirst: warm.overview.first, webView: strip(warm.webOverview), webViewFirst: warm.webOverview.first },
      insights: {
        cold: strip(insights),
        dailyBeside: strip(dailyBeside),
        ratioToDaily: round(insights.seconds / dailyBeside.seconds, 2),
        cpuRatioToDaily: round(insights.cpuSeconds / dailyBeside.cpuSeconds, 2),
        found: Object.fromEntries((JSON.parse(insights.stdout) as { insights: { pattern: string; count: number }[] }).insights.map((i) => [i.pattern, i.count])),
      },
      loadAverage1m: load(),
    };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const figures: Record<string, unknown> = {
    machine: { cpu: cpus()[0]?.model, cores: cpus().length, node: process.version },
    loadAverage1mBefore: load(),
  };
  const goals: GoalFigure[] = [];
  for (const size of args.sizes!.split(',')) {
    const measured = await measureSize(size);
    figures[size] = measured;
    const warmWorst = Math.max(...PERIODS.map((period) => measured.periods[period].warm.seconds), measured.overview.warm.seconds);
    const slowest = (speedup: 'coldSpeedupVsCcusage' | 'coldAgainSpeedupVsCcusage') => Math.min(...PERIODS.map((period) => measured.periods[period][speedup]));
    const coldBound = size.endsWith('G') ? 5 : 1;
    goals.push(
      { goal: `${size}: slowest report (daily, session, blocks, overview) with run up, CLI through its endpoint`, measured: warmWorst, unit: 's', bound: WARM_BOUND_SECONDS, better: 'lower' },
      { goal: `${size}: the web view's overview with run up`, measured: measured.overview.webView.seconds, unit: 's', bound: WARM_BOUND_SECONDS, better: 'lower' },
      // No slower than ccusage up to 100 MB, ≥ 5× faster at 1 GB and beyond.
      { goal: `${size}: slowest report period with nothing running, first answer`, measured: slowest('coldSpeedupVsCcusage'), unit: '× faster', bound: coldBound, better: 'higher', peer: 'ccusage re-reading every file' },
      { goal: `${size}: slowest report period with nothing running, asked again`, measured: slowest('coldAgainSpeedupVsCcusage'), unit: '× faster', bound: coldBound, better: 'higher', peer: 'ccusage re-reading every file' },
      { goal: `${size}: report insights with nothing running`, measured: measured.insights.ratioToDaily, unit: '× report daily', bound: 1, better: 'lower', peer: 'report daily, alternating with it' },
      { goal: `${size}: report insights with nothing running, CPU`, measured: measured.insights.cpuRatioToDaily, unit: '× report daily', bound: 1, better: 'lower', peer: 'report daily, alternating with it' },
    );
    console.error(JSON.stringify({ [size]: measured }));
  }
  figures.loadAverage1mAfter = load();
  console.log(JSON.stringify(figures, null, 2));
  reportGoals('report', goals);
}

await main();
