// Benchmark (not a test): peak memory of `ccotel backfill` (issue #36: ≤ 450 MB into the embedded store at 1 GB, ≤ 300 MB
// OTLP-only at 5 GB),
// into the embedded store and OTLP-only (to a stand-in receiver that accepts every export), for this build and
// optionally another one (`--before`, run in the same minutes). Each backfill is sampled every 200 ms:
// RSS split into anonymous and file-backed (the embedded engine's library pages), and Node's own heap.
//
//   npm run build && node dist/bench/gen-corpus.js --out /tmp/corpus-1G --bytes 1G
//   node dist/bench/backfill-memory.js --corpus /tmp/corpus-1G [--before <other build>/dist/sidecar/src/cli.js]
//   node dist/bench/backfill-memory.js --bytes 5G --modes otlp-only   (the benchmarks' corpus of that size, made on first use)
//   node dist/bench/backfill-memory.js --corpus /tmp/corpus-1G --command run   (`ccotel run`'s catch-up on the same
//     history instead: its time and peak until it says it caught up, where `npm start` would be)
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Expected } from '../test/generator/corpus.js';
import { benchCorpus } from './corpus.js';
import { reportGoals } from './goals.js';
import { standInReceiver } from './stand-in-receiver.js';

const repo = resolve(import.meta.dirname, '..', '..');
const cli = join(repo, 'dist', 'sidecar', 'src', 'cli.js');
// The sampler is written to a scratch directory, where no node_modules resolves a bare 'chdb'.
const chdbUrl = pathToFileURL(createRequire(import.meta.url).resolve('chdb')).href;

const { values: args } = parseArgs({
  options: {
    corpus: { type: 'string' },
    bytes: { type: 'string' },
    before: { type: 'string' },
    modes: { type: 'string', default: 'otlp-only,embedded' },
    command: { type: 'string', default: 'backfill' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help || (!args.corpus && !args.bytes)) {
  console.log('usage: backfill-memory --corpus DIR (written by gen-corpus) | --bytes SIZE [--before OTHER_BUILD/dist/sidecar/src/cli.js] [--modes otlp-only,embedded] [--command backfill|run]');
  process.exit(args.help ? 0 : 2);
}

interface Peak {
  /** For `run`: until it said it caught up (every file read and every record stored), and its peaks until then. */
  seconds: number;
  cpuSeconds: number;
  rssMb: number;
  anonMb: number;
  fileMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  /** What the backfill says it stored (its --json summary): the same in every build, or rows were lost. `run` says none. */
  stored?: { spans: number; logs: number; metrics: number };
  /** Node's memory outside the V8 heap (buffers). */
  externalMb: number;
  /** The embedded engine's own tracked memory (system.metrics MemoryTracking) and, each at its peak, its merges', its queries' (the inserts), its parts' primary keys, its caches, its active parts. */
  engineTrackedMb?: number;
  engineMergesMb?: number;
  engineQueriesMb?: number;
  enginePrimaryKeysMb?: number;
  engineCachesMb?: number;
  enginePartsActive?: number;
}

const mb = (kb: number) => Math.round(kb / 1024);

/** VmRSS, RssAnon, RssFile (kB) and utime + stime (s) of a process, or undefined once it is gone. */
function sample(pid: number): { rss: number; anon: number; file: number; cpu: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime and stime are the 14th and 15th of the line.
    const times = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { rss: field('VmRSS'), anon: field('RssAnon'), file: field('RssFile'), cpu: (Number(times[11]) + Number(times[12])) / 100 };
  } catch {
    return undefined;
  }
}

/**
 * Run one backfill, or `run` until it has caught up (then stopped), sampling its memory; Node's heap and the engine's
 * own figures come from a preloaded module.
 */
async function measure(cliPath: string, extra: string[], env: NodeJS.ProcessEnv, scratch: string, command: Command): Promise<Peak> {
  const heapLog = join(scratch, `heap-${Date.now()}.jsonl`);
  const preload = join(scratch, 'heap-sampler.mjs');
  writeFileSync(preload, sampler(heapLog, extra));
  const startedMs = Date.now();
  const commandArgs = command === 'run' ? ['run', '--telemetry-port', '0'] : ['backfill', '--json', '--no-progress'];
  const child = spawn(process.execPath, ['--import', preload, cliPath, ...commandArgs, ...extra], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const peak = { rss: 0, anon: 0, file: 0, cpu: 0 };
  const takeSample = () => {
    const now = sample(child.pid!);
    if (!now) return;
    peak.rss = Math.max(peak.rss, now.rss);
    peak.anon = Math.max(peak.anon, now.anon);
    peak.file = Math.max(peak.file, now.file);
    peak.cpu = now.cpu;
  };
  const timer = setInterval(takeSample, 200);
  let endMs: number | undefined;
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    // `run` goes on following: measured until it says so, then stopped.
    if (command === 'run' && endMs === undefined && stderr.includes('caught up:')) {
      takeSample();
      clearInterval(timer);
      endMs = Date.now();
      child.kill('SIGINT');
    }
  });
  const code = await new Promise<number | null>((resolveExit) => child.once('exit', resolveExit));
  clearInterval(timer);
  const endedMs = endMs ?? Date.now();
  if (code !== 0) throw new Error(`${command} ${extra.join(' ')} failed (${code}): ${stderr}`);
  const samples = existsSync(heapLog) ? readFileSync(heapLog, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Sample).filter((s) => s.atMs <= endedMs) : [];
  const peakOf = (of: (sample: Sample) => number | undefined) => Math.round(Math.max(0, ...samples.map((s) => of(s) ?? 0)) / 2 ** 20);
  return {
    seconds: Number(((endedMs - startedMs) / 1000).toFixed(1)),
    cpuSeconds: Number(peak.cpu.toFixed(1)),
    rssMb: mb(peak.rss),
    anonMb: mb(peak.anon),
    fileMb: mb(peak.file),
    heapUsedMb: peakOf((s) => s.used),
    heapTotalMb: peakOf((s) => s.total),
    externalMb: peakOf((s) => s.external),
    ...(command === 'backfill' ? { stored: (JSON.parse(stdout.trim().split('\n').pop()!) as { inserted: Peak['stored'] }).inserted } : {}),
    ...(extra.includes('none') ? {} : { engineTrackedMb: peakOf((s) => s.engine?.MemoryTracking), engineMergesMb: peakOf((s) => s.engine?.merges), engineQueriesMb: peakOf((s) => s.engine?.queries), enginePrimaryKeysMb: peakOf((s) => s.engine?.primaryKeys), engineCachesMb: peakOf((s) => s.engine?.caches), enginePartsActive: Math.max(0, ...samples.map((s) => s.engine?.PartsActive ?? 0)) }),
  };
}

/** One line of the sampler inside the backfill. */
interface Sample {
  atMs: number;
  used: number;
  total: number;
  external: number;
  /** The embedded engine's own accounting (system.metrics), once it inserts. */
  engine?: { MemoryTracking: number; merges: number; queries: number; primaryKeys: number; caches: number; PartsActive: number };
}

/**
 * The module preloaded into the backfill: process.memoryUsage() every 200 ms, and with a store, once the first insert's
 * rows file is there (the engine started with its arguments), the engine's tracked memory, caches and parts from a
 * connection of its own to the same engine every second.
 */
function sampler(log: string, extra: string[]): string {
  const store = extra[extra.indexOf('--store') + 1];
  return `import { appendFileSync, existsSync } from 'node:fs';
let engine;
setInterval(() => { const m = process.memoryUsage(); appendFileSync(${JSON.stringify(log)}, JSON.stringify({ atMs: Date.now(), used: m.heapUsed, total: m.heapTotal, external: m.external, engine }) + '\\n'); }, 200).unref();
if (${JSON.stringify(store)} !== 'none') {
  let session;
  const poll = setInterval(async () => {
    if (!session) {
      if (!existsSync(${JSON.stringify(join(store, 'insert-0.rowbinary'))})) return;
      const { Session } = await import(${JSON.stringify(chdbUrl)});
      session = new Session(${JSON.stringify(join(store, 'chdb'))});
    }
    const rows = (await session.queryAsync("SELECT metric, value FROM system.metrics WHERE metric IN ('MemoryTracking', 'MergesMutationsMemoryTracking', 'PartsActive') OR metric LIKE '%CacheBytes' UNION ALL SELECT 'Queries', sum(memory_usage) FROM system.processes UNION ALL SELECT 'PrimaryKeys', sum(primary_key_bytes_in_memory_allocated) FROM system.parts WHERE active", { format: 'JSONEachRow' })).text().trim().split('\\n').map((line) => JSON.parse(line));
    const value = (name) => Number(rows.find((row) => row.metric === name)?.value ?? 0);
    engine = { MemoryTracking: value('MemoryTracking'), merges: value('MergesMutationsMemoryTracking'), queries: value('Queries'), primaryKeys: value('PrimaryKeys'), PartsActive: value('PartsActive'), caches: rows.filter((row) => row.metric.endsWith('CacheBytes')).reduce((sum, row) => sum + Number(row.value), 0) };
  }, 1000);
  poll.unref();
}
`;
}

const MODES = ['otlp-only', 'embedded'] as const;
const COMMANDS = ['backfill', 'run'] as const;
type Command = (typeof COMMANDS)[number];
const command = args.command as Command;
if (!COMMANDS.includes(command)) {
  console.error(`backfill-memory: --command: "${command}" is none of ${COMMANDS.join(', ')}`);
  process.exit(2);
}
const modes = args.modes!.split(',') as Array<(typeof MODES)[number]>;
const unknownMode = modes.find((mode) => !MODES.includes(mode));
if (unknownMode !== undefined) {
  console.error(`backfill-memory: --modes: "${unknownMode}" is none of ${MODES.join(', ')}`);
  process.exit(2);
}

async function main(): Promise<void> {
  const expected = args.corpus
    ? (JSON.parse(readFileSync(join(resolve(args.corpus), 'expected.json'), 'utf8')) as Expected)
    : await benchCorpus({ dir: join(repo, '.cache', 'bench'), bytes: args.bytes!, seed: 1, scale: 1 });
  const scratch = mkdtempSync(join(tmpdir(), 'ccotel-bench-memory-'));
  const env = { ...process.env, CLAUDE_CONFIG_DIR: expected.configDirs.join(','), CCOTEL_RAW_TTL_DAYS: '0' };
  const receiver = await standInReceiver();
  const builds = [{ name: 'this build', cli }, ...(args.before ? [{ name: `before (${args.before})`, cli: resolve(args.before) }] : [])];
  const results: Record<string, Record<string, Peak>> = {};
  try {
    for (const mode of modes) {
      for (const build of builds) {
        console.error(`${build.name}, ${command} ${mode} …`);
        const store = join(scratch, `store-${Date.now()}`);
        const extra = mode === 'embedded' ? ['--store', store] : ['--store', 'none', '--otlp', receiver.url];
        const receivedBefore = receiver.received.bytes;
        // A home each: `run` would resume from the read positions the one before committed there.
        const home = join(scratch, `home-${Date.now()}`);
        (results[build.name] ??= {})[mode] = await measure(build.cli, extra, { ...env, HOME: home }, scratch, command);
        if (mode === 'otlp-only') console.error(`  the receiver took ${((receiver.received.bytes - receivedBefore) / 1e6).toFixed(0)} MB of OTLP`);
        rmSync(store, { recursive: true, force: true });
      }
    }
  } finally {
    receiver.close();
    rmSync(scratch, { recursive: true, force: true });
  }
  const figures = {
    machine: { cores: cpus().length, cpu: cpus()[0]?.model, node: process.version },
    corpus: { mb: Math.round(expected.bytes / 1e6), files: expected.files, sessions: expected.sessions },
    loadAverage: loadavg().map((load) => Number(load.toFixed(1))),
    command,
    results,
  };
  console.log(JSON.stringify(figures, null, 2));
  // Issue 36's bounds are a backfill's; `run`'s is its idle following (idle.js --embedded).
  if (command === 'run') return;
  const ours = results['this build'];
  const goals = { 'otlp-only': { goal: 'peak RSS, OTLP-only', bound: 300 }, embedded: { goal: 'peak RSS, embedded store', bound: 450 } } as const;
  reportGoals(
    `backfill memory ${figures.corpus.mb} MB`,
    Object.entries(ours).map(([mode, peak]) => ({ ...goals[mode as keyof typeof goals], measured: peak.rssMb, unit: 'MB', better: 'lower' as const })),
  );
}

await main();
