// Benchmark (not a test): what an idle `ccotel run` costs while it follows many transcript files, OTLP-only
// (`--store none`, so the embedded engine is never loaded) and exporting to a loopback OTLP/HTTP stub.
// After the catch-up on every file and the first idle check's exports, nothing is written: --settle seconds for
// V8 to give back the memory of that burst (the largest RSS in it is printed), then the window of --seconds. CPU
// is the process's utime + stime from /proc/<pid>/stat over the window, as % of one core; RSS is sampled every second.
//
// --baseline <cli.js> measures another build first (e.g. an older commit's `dist/sidecar/src/cli.js`), the
// same way in the same run, so the two rows compare. --embedded also measures this build writing to the embedded
// store as well (`--store <dir> --otlp …`: chdb in the process), the figure for a host that keeps its own store.
//
//   npm run build && node dist/bench/idle.js [--files 10000] [--seconds 60] [--settle 60] [--baseline <cli.js>] [--embedded]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { assertBuilt, CLI, cliEnv, startOtlpStub, startRun, transcriptStatus } from '../test/reliability/cli.js';
import { waitFor, writeManyTranscripts } from '../test/reliability/transcripts.js';
import { reportGoals } from './goals.js';

const { values: args } = parseArgs({
  options: {
    files: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '60' },
    settle: { type: 'string', default: '60' },
    baseline: { type: 'string' },
    embedded: { type: 'boolean', default: false },
  },
});
const fileCount = Number(args.files);
const windowSeconds = Number(args.seconds);
const settleSeconds = Number(args.settle);
const clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
const sleep = (ms: number) => new Promise((resolveDelay) => setTimeout(resolveDelay, ms));
/** The tailer checks for idle sessions every idle time / 4, at most every minute (the default idle time is 30 min). */
const FIRST_IDLE_CHECK_MS = 60_000;

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are 14 and 15.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}

function memoryMb(pid: number, field: 'VmRSS' | 'VmHWM' | 'RssFile'): number {
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

/** inotify watches the process holds (the `inotify wd:` lines of its inotify descriptors). */
function inotifyWatches(pid: number): number {
  let watches = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) !== 'anon_inode:inotify') continue;
      watches += readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8').split('\n').filter((line) => line.startsWith('inotify wd:')).length;
    } catch {
      // closed meanwhile
    }
  }
  return watches;
}

interface Row {
  label: string;
  watcher: string;
  watches: number;
  catchUpSeconds: number;
  peakCatchUpMb: number;
  cpuPercent: number;
  rssMb: number[];
  /** The largest RSS seen between the burst and the window. */
  settleRssMaxMb: number;
  chdbLoaded: boolean;
  /** File-backed RSS at the end of the window: with the store, mostly the pages of chdb's library. */
  fileMb: number;
  load: string;
}

/** RSS every second for `seconds`. */
async function sampleRss(pid: number, seconds: number): Promise<number[]> {
  const rssMb: number[] = [];
  for (const start = performance.now(); performance.now() - start < seconds * 1000; await sleep(1_000)) rssMb.push(memoryMb(pid, 'VmRSS'));
  return rssMb;
}

async function measure(cli: string, label: string, embedded = false): Promise<Row> {
  const home = mkdtempSync(join(tmpdir(), 'ccotel-idle-'));
  const env = cliEnv(home);
  const store = embedded ? join(home, 'store') : 'none';
  const otlp = await startOtlpStub();
  // One file in ten holds a complete turn (an hour old: closed at the first idle check); the others a summary row.
  writeManyTranscripts(join(home, 'claude'), 0, fileCount, 10, Date.now() - 3_600_000);
  const started = performance.now();
  const sidecar = startRun(['--store', store, '--otlp', otlp.url], env, cli);
  const pid = sidecar.child.pid!;
  try {
    const status = () => transcriptStatus(env, store);
    await waitFor(
      `the catch-up on ${fileCount} files`,
      async () => {
        const source = await status();
        return source?.filesFollowed === fileCount && source.bytesBehind === 0 && source.sink.state === 'ok';
      },
      300_000,
    );
    const catchUpSeconds = (performance.now() - started) / 1000;
    const peakCatchUpMb = memoryMb(pid, 'VmHWM');
    // The first idle check (a minute after the tailer started, with the default idle time) closes the turns read
    // in the catch-up: part of starting up, not of being idle. Wait for its exports (on a loaded machine the check
    // may come well after a minute; after a catch-up that long it may have come during it), then for them to stop.
    await sleep(Math.max(0, FIRST_IDLE_CHECK_MS - 5_000 - (performance.now() - started)));
    const exportedBeforeClose = otlp.bodies.length;
    for (let waited = 0; otlp.bodies.length === exportedBeforeClose && waited < FIRST_IDLE_CHECK_MS; waited += 1_000) await sleep(1_000);
    let exported = -1;
    while (exported !== otlp.bodies.length) {
      exported = otlp.bodies.length;
      await sleep(5_000);
    }
    // V8 gives the memory of that burst back some tens of seconds later, in a full collection: the settle time.
    const settleRssMb = await sampleRss(pid, settleSeconds);
    const cpuBefore = cpuSeconds(pid);
    const windowStart = performance.now();
    const rssMb = await sampleRss(pid, windowSeconds);
    const cpuPercent = (100 * (cpuSeconds(pid) - cpuBefore)) / ((performance.now() - windowStart) / 1000);
    return {
      label,
      watcher: (await status())?.watcher ?? '?',
      watches: inotifyWatches(pid),
      catchUpSeconds,
      peakCatchUpMb,
      cpuPercent,
      rssMb,
      settleRssMaxMb: Math.max(...settleRssMb, 0),
      chdbLoaded: /chdb/i.test(readFileSync(`/proc/${pid}/maps`, 'utf8')),
      fileMb: memoryMb(pid, 'RssFile'),
      load: loadavg().map((n) => n.toFixed(2)).join(' '),
    };
  } finally {
    sidecar.child.kill('SIGTERM');
    await sidecar.exited;
    otlp.close();
    rmSync(home, { recursive: true, force: true });
  }
}

assertBuilt();
const rows: Row[] = [];
if (args.baseline) rows.push(await measure(args.baseline, `baseline ${args.baseline}`));
rows.push(await measure(CLI, 'this build'));
const embeddedRow = args.embedded ? await measure(CLI, 'this build, embedded store too', true) : undefined;
console.log(`idle ccotel run, OTLP-only (--store none; the last row also --store <dir>) to a loopback stub, ${fileCount} transcript files followed; idle window ${windowSeconds} s after ${settleSeconds} s to settle`);
for (const row of embeddedRow ? [...rows, embeddedRow] : rows) {
  const rss = row.rssMb;
  console.log(`${row.label}: ${row.watcher}, ${row.watches} inotify watches; catch-up ${row.catchUpSeconds.toFixed(1)} s, peak RSS ${Math.round(row.peakCatchUpMb)} MB; largest RSS in the settle time ${Math.round(row.settleRssMaxMb)} MB`);
  console.log(`  idle CPU ${row.cpuPercent.toFixed(2)}% of a core; RSS first ${Math.round(rss[0])} MB, last ${Math.round(rss[rss.length - 1])} MB, max ${Math.round(Math.max(...rss))} MB (file-backed ${Math.round(row.fileMb)} MB); chdb mapped: ${row.chdbLoaded ? 'YES' : 'no'}; load ${row.load}`);
}
console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'})`);
const current = rows[rows.length - 1];
// Issue #18 goal 3: ≤ 0.3% of a core and ≤ 120 MB RSS (the largest seen in the idle window) with the files followed.
reportGoals(`idle, ${fileCount} files, OTLP-only`, [
  { goal: 'idle CPU', measured: Number(current.cpuPercent.toFixed(2)), unit: '% of a core', bound: 0.3, better: 'lower', peer: rows.length > 1 ? `baseline ${rows[0].cpuPercent.toFixed(2)}%` : undefined },
  { goal: 'idle RSS, largest in the window', measured: Math.round(Math.max(...current.rssMb)), unit: 'MB', bound: 120, better: 'lower' },
]);
// Issue #36: `run` following the files with its embedded store too, ≤ 120 MB.
if (embeddedRow) {
  reportGoals(`idle, ${fileCount} files, embedded store`, [
    { goal: 'idle RSS with the store, largest in the window', measured: Math.round(Math.max(...embeddedRow.rssMb)), unit: 'MB', bound: 120, better: 'lower' },
  ]);
}
