// Benchmark (not a test): scale-out capacity. Two parts, both printed as Markdown tables.
//
// 1. Workload: what one agent produces. The real pipeline (parse → correlate → mask → cap) runs over the
//    recorded Claude Code samples (test/fixtures/real) and over a generated corpus; per model request
//    (chat span) it counts transcript lines, events (spans + log records + metric points), OTLP protobuf
//    bytes after masking, and, written into the embedded ClickHouse, compressed bytes on disk per row.
// 2. Load: N simulated agent hosts on loopback, each a generated corpus replayed by appending lines at a
//    fixed rate, each followed by its own sidecar process (bench/scale-out-host.ts: the tailer and the
//    OTLP sink, store off), all sending to ONE real collector (collector-config/gateway.yaml with the
//    file-exporter overlay, every processor as shipped) pinned to one core with taskset; the sidecars
//    are pinned to the other core. Per stage: offered and accepted events/s, the collector's CPU and its
//    CPU time per event, from which the events/s one collector core sustains follows.
// Then collectors and ClickHouse nodes per 1k / 10k / 100k agent hosts, from the measured figures and,
// as a second anchor, the exporter README's figures (labelled).
//
//   bash collector-config/build.sh && npx vite-node bench/scale-out.ts [--hosts 4,8] [--rates 1,40] [--seconds 30] [--corpus-mb 8] [--flush-ms 200,5000]
// Every process it starts is stopped by pid at the end of its stage (and on exit); temp dirs are removed.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { DEFAULTS, loadConfig } from '../sidecar/src/config.js';
import { buildPipeline } from '../sidecar/src/build-pipeline.js';
import { ingestFile } from '../sidecar/src/ingest.js';
import type { TelemetryBatch } from '../sidecar/src/model.js';
import { SIDECAR_VERSION, sidecarResource } from '../sidecar/src/resource.js';
import { OtlpEncoder, type Signal } from '../sidecar/src/sinks/otlp-convert.js';
import { resolveTargets, sendRequest } from '../sidecar/src/sinks/otlp-transport.js';
import { discoverTranscripts, transcriptRoots, type DiscoveredTranscript } from '../sidecar/src/sources/transcript-discovery.js';
import { openStore } from '../sidecar/src/store/open-store.js';
import { Gateway } from '../test/collector/otlp-gateway.js';
import { RecordingSink } from '../test/collector/otlp-output.js';
import { generateCorpus } from '../test/generator/corpus.js';

const { values: flags } = parseArgs({
  options: {
    hosts: { type: 'string', default: '4,8' },
    rates: { type: 'string', default: '1,40' },
    seconds: { type: 'string', default: '30' },
    'corpus-mb': { type: 'string', default: '8' },
    // The sidecars' flush_interval_ms, each a set of stages in the same run: 200 (with a store) and 5000 (OTLP only).
    'flush-ms': { type: 'string', default: '200,5000' },
  },
});
const HOST_COUNTS = flags.hosts.split(',').map(Number);
const LINE_RATES = flags.rates.split(',').map(Number);
const FLUSH_INTERVALS = flags['flush-ms'].split(',').map(Number);
const STAGE_SECONDS = Number(flags.seconds);
const CORPUS_BYTES = Number(flags['corpus-mb']) * 1e6;

/** A busy agent: one model request every 10 s (model latency plus tool time), i.e. 360 an hour. Labelled as an assumption. */
const BUSY_REQUESTS_PER_HOUR = 360;
/** An interactive user: one prompt every few minutes, a handful of requests each: 60 an hour. */
const INTERACTIVE_REQUESTS_PER_HOUR = 60;
/** Collectors are sized to run at this share of their cores, for bursts and failover. */
const COLLECTOR_TARGET_UTILISATION = 0.6;
/** Exporter README: OTLP receiver → ClickHouse exporter, about 40k log entries per second per core. */
const README_EVENTS_PER_CORE = 40_000;
/** Exporter README: one 32-core / 128 GB ClickHouse node takes about 20 billion log rows a day. */
const README_ROWS_PER_NODE_PER_SECOND = 20e9 / 86_400;
/** Raw rows are kept for the default raw window (DESIGN §9). */
const RAW_TTL_DAYS = DEFAULTS.rawTtlDays;
/** Disk a ClickHouse node is given for raw rows (assumption, e.g. 4 × 3.84 TB NVMe less headroom). */
const DISK_PER_NODE_BYTES = 10e12;

const repo = join(dirname(new URL(import.meta.url).pathname), '..');
const scratch = mkdtempSync(join(tmpdir(), 'ccotel-scale-out-'));
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------------
// Part 1: the workload per model request

interface Workload {
  name: string;
  /** What the pipeline delivered (masked, capped): the load the saturation stage sends. */
  batch: TelemetryBatch;
  files: number;
  lines: number;
  turns: number;
  chats: number;
  spans: number;
  logs: number;
  points: number;
  otlpBytes: number;
  otlpGzipBytes: number;
}

const events = (w: Pick<Workload, 'spans' | 'logs' | 'points'>) => w.spans + w.logs + w.points;

async function measureWorkload(name: string, configDirs: string[]): Promise<Workload> {
  const config = loadConfig({ store: '' }, { HOME: join(scratch, 'workload-home'), CCOTEL_STATE_DIR: join(scratch, 'workload-state') });
  const recorder = new RecordingSink();
  const { pipeline } = buildPipeline(config, { mode: 'once', sinks: [recorder] });
  const files = await discoverTranscripts(transcriptRoots({ HOME: '/nonexistent', CLAUDE_CONFIG_DIR: configDirs.join(',') }));
  for (const file of files) await ingestFile(pipeline, file, 0);
  await pipeline.finish();
  const { spans, logs, metrics } = recorder.batch;
  const encoder = new OtlpEncoder(sidecarResource('masked', {}), SIDECAR_VERSION);
  // encoded in requests of the sink's size (1000 items), as they go on the wire
  const bodies = [
    ...chunks(spans, 1000).map((part) => encoder.traces(part)),
    ...chunks(logs, 1000).map((part) => encoder.logs(part)),
    ...chunks(metrics, 1000).map((part) => encoder.metrics(part)),
  ];
  return {
    name,
    batch: recorder.batch,
    files: files.length,
    lines: pipeline.stats.lines,
    turns: spans.filter((s) => s.name === 'invoke_agent claude-code').length,
    chats: spans.filter((s) => s.name.startsWith('chat ')).length,
    spans: spans.length,
    logs: logs.length,
    points: metrics.length,
    otlpBytes: bodies.reduce((sum, body) => sum + body.byteLength, 0),
    otlpGzipBytes: bodies.reduce((sum, body) => sum + gzipSync(body).byteLength, 0),
  };
}

function chunks<T>(items: T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
}

/** Compressed bytes on disk per row of each otel_* table, after writing the corpus into the embedded ClickHouse. */
async function measureStorage(configDirs: string[]): Promise<{ rows: number; bytes: number; byTable: Record<string, { rows: number; bytes: number }> }> {
  const storeDir = join(scratch, 'storage-store');
  const config = loadConfig({ store: storeDir }, { HOME: join(scratch, 'storage-home'), CCOTEL_STATE_DIR: join(scratch, 'storage-state'), CCOTEL_RAW_TTL_DAYS: '0' });
  const store = await openStore(storeDir, { command: 'bench', access: 'write', rawTtlDays: 0 });
  try {
    const { pipeline } = buildPipeline(config, { mode: 'once', store });
    for (const file of await discoverTranscripts(transcriptRoots({ HOME: '/nonexistent', CLAUDE_CONFIG_DIR: configDirs.join(',') }))) await ingestFile(pipeline, file, 0);
    await pipeline.finish();
    await store.client.command({ query: 'OPTIMIZE TABLE otel_traces FINAL' });
    await store.client.command({ query: 'OPTIMIZE TABLE otel_logs FINAL' });
    const result = await store.client.query({
      query: `SELECT table, sum(rows) AS rows, sum(data_compressed_bytes) AS bytes FROM system.parts
              WHERE active AND database = 'default' AND table LIKE 'otel_%' GROUP BY table ORDER BY table`,
      format: 'JSONEachRow',
    });
    const byTable: Record<string, { rows: number; bytes: number }> = {};
    for (const row of await result.json<{ table: string; rows: string; bytes: string }>()) byTable[row.table] = { rows: Number(row.rows), bytes: Number(row.bytes) };
    // the trace-id lookup table is a by-product of spans, not an event of its own
    const eventTables = Object.entries(byTable).filter(([table]) => table !== 'otel_traces_trace_id_ts');
    return {
      rows: eventTables.reduce((sum, [, t]) => sum + t.rows, 0),
      bytes: Object.values(byTable).reduce((sum, t) => sum + t.bytes, 0),
      byTable,
    };
  } finally {
    await store.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// Part 2: N hosts, one collector core

/** A transcript tree replayed into a live copy at a fixed number of lines per second. */
class HostReplay {
  private readonly queue: { source: DiscoveredTranscript; lines: string[] }[] = [];
  private fileIndex = 0;
  private lineIndex = 0;
  appended = 0;

  constructor(files: DiscoveredTranscript[], private readonly sourceRoot: string, readonly liveRoot: string) {
    for (const source of files) {
      const lines = readFileSync(source.path, 'utf8').split('\n');
      lines.pop(); // after the last newline
      this.queue.push({ source, lines });
    }
    mkdirSync(join(liveRoot, 'projects'), { recursive: true });
  }

  get totalLines(): number {
    return this.queue.reduce((sum, file) => sum + file.lines.length, 0);
  }

  /** Appends the next `count` lines (whole lines, one write per file touched). */
  append(count: number): void {
    while (count > 0 && this.fileIndex < this.queue.length) {
      const file = this.queue[this.fileIndex]!;
      const take = Math.min(count, file.lines.length - this.lineIndex);
      const target = join(this.liveRoot, relative(this.sourceRoot, file.source.path));
      mkdirSync(dirname(target), { recursive: true });
      appendFileSync(target, file.lines.slice(this.lineIndex, this.lineIndex + take).join('\n') + '\n');
      this.lineIndex += take;
      this.appended += take;
      count -= take;
      if (this.lineIndex === file.lines.length) {
        this.fileIndex++;
        this.lineIndex = 0;
      }
    }
  }
}

interface HostStats {
  sent: { traces: number; logs: number; metrics: number };
  requests: number;
  failedAttempts: number;
  dropped: { traces: number; logs: number; metrics: number };
  lines: number;
  stopped: boolean;
}

function readHostStats(path: string): HostStats | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as HostStats;
  } catch {
    return undefined; // not written yet, or being replaced
  }
}

const sentEvents = (stats: HostStats | undefined) => (stats ? stats.sent.traces + stats.sent.logs + stats.sent.metrics : 0);

/** utime + stime of a process (all its threads), in CPU seconds. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function pin(pid: number, core: number): boolean {
  return spawnSync('taskset', ['-a', '-cp', String(core), String(pid)], { stdio: 'ignore' }).status === 0;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}

interface Stage {
  hosts: number;
  linesPerHostPerSecond: number;
  flushIntervalMs: number;
  offeredLinesPerSecond: number;
  acceptedEventsPerSecond: number;
  /** Seconds after the last append until every host had sent everything. */
  drainSeconds: number;
  collectorUtilisation: number;
  collectorCpuMicrosPerEvent: number;
  sidecarCpuMillisPerEvent: number;
  /** Share of a core each sidecar used, on average. */
  sidecarUtilisationPerHost: number;
  /** Events per OTLP request the sidecars sent: small at real rates, since each sends what it has just read. */
  eventsPerRequest: number;
  failedAttempts: number;
  dropped: number;
}

interface StageLoad {
  hosts: number;
  rate: number;
  flushIntervalMs: number;
}

async function runStage(gateway: Gateway, corpora: { root: string; files: DiscoveredTranscript[] }[], load: StageLoad, sidecarCore: number, idleCpuPerSecond: number): Promise<Stage> {
  const { hosts, rate, flushIntervalMs } = load;
  const stageDir = join(scratch, `stage-${hosts}-${rate}-${flushIntervalMs}`);
  const replays: HostReplay[] = [];
  const statsPaths: string[] = [];
  const processes: ChildProcess[] = [];
  for (let host = 0; host < hosts; host++) {
    const corpus = corpora[host % corpora.length]!;
    const hostDir = join(stageDir, `host-${host}`);
    replays.push(new HostReplay(corpus.files, corpus.root, join(hostDir, 'claude')));
    statsPaths.push(join(hostDir, 'stats.json'));
    const child = spawn(join(repo, 'node_modules', '.bin', 'vite-node'), [join(repo, 'bench', 'scale-out-host.ts'), statsPaths[host]!], {
      cwd: repo,
      env: {
        PATH: process.env.PATH,
        HOME: hostDir,
        CLAUDE_CONFIG_DIR: join(hostDir, 'claude'),
        CCOTEL_STATE_DIR: join(hostDir, 'state'),
        OTEL_EXPORTER_OTLP_ENDPOINT: gateway.url,
        OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${gateway.token}`,
        OTEL_RESOURCE_ATTRIBUTES: `host.name=bench-host-${host}`,
        CCOTEL_FLUSH_INTERVAL_MS: String(flushIntervalMs),
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.add(child);
    child.once('exit', () => children.delete(child));
    processes.push(child);
  }
  try {
    // up: every sidecar has written its first stats
    const upBy = Date.now() + 60_000;
    while (statsPaths.some((path) => !existsSync(path))) {
      if (Date.now() > upBy) throw new Error('sidecars did not start within 60 s');
      if (processes.some((child) => child.exitCode !== null)) throw new Error('a sidecar exited at start');
      await sleep(200);
    }
    for (const child of processes) pin(child.pid!, sidecarCore);
    const totalSent = () => statsPaths.reduce((sum, path) => sum + sentEvents(readHostStats(path)), 0);
    const sidecarCpu = () => processes.reduce((sum, child) => sum + cpuSeconds(child.pid!), 0);
    const sidecarBefore = sidecarCpu();
    const collectorBefore = cpuSeconds(gateway.pid!);
    const sentBefore = totalSent();
    const requestsBefore = statsPaths.reduce((sum, path) => sum + (readHostStats(path)?.requests ?? 0), 0);
    const started = performance.now();
    const tickMs = 100;
    let owed = 0;
    while (performance.now() - started < STAGE_SECONDS * 1000) {
      owed += (rate * tickMs) / 1000;
      const lines = Math.floor(owed);
      owed -= lines;
      for (const replay of replays) replay.append(lines);
      await sleep(tickMs);
    }
    const appendSeconds = (performance.now() - started) / 1000;
    const collectorWindow = cpuSeconds(gateway.pid!) - collectorBefore;
    // drain: wait until every host has read every appended line and its sent count is still
    const appended = replays.reduce((sum, replay) => sum + replay.appended, 0);
    let last = -1;
    const drainStart = performance.now();
    while (performance.now() - drainStart < 60_000) {
      await sleep(1000);
      const read = statsPaths.reduce((sum, path) => sum + (readHostStats(path)?.lines ?? 0), 0);
      const sent = totalSent();
      if (read >= appended && sent === last) break;
      last = sent;
    }
    const drainSeconds = Math.max(0, (performance.now() - drainStart) / 1000 - 1);
    const sidecarSpent = sidecarCpu() - sidecarBefore;
    await Promise.all(processes.map(stopChild));
    const finals = statsPaths.map(readHostStats);
    const accepted = finals.reduce((sum, stats) => sum + sentEvents(stats), 0) - sentBefore;
    const collectorSpent = cpuSeconds(gateway.pid!) - collectorBefore - idleCpuPerSecond * (appendSeconds + drainSeconds);
    return {
      hosts,
      linesPerHostPerSecond: rate,
      flushIntervalMs,
      offeredLinesPerSecond: appended / appendSeconds,
      acceptedEventsPerSecond: accepted / (appendSeconds + drainSeconds),
      drainSeconds,
      collectorUtilisation: collectorWindow / appendSeconds,
      collectorCpuMicrosPerEvent: (collectorSpent * 1e6) / accepted,
      sidecarCpuMillisPerEvent: (sidecarSpent * 1e3) / accepted,
      sidecarUtilisationPerHost: sidecarSpent / (appendSeconds + drainSeconds) / hosts,
      eventsPerRequest: accepted / (finals.reduce((sum, stats) => sum + (stats?.requests ?? 0), 0) - requestsBefore),
      failedAttempts: finals.reduce((sum, stats) => sum + (stats?.failedAttempts ?? 0), 0),
      dropped: finals.reduce((sum, stats) => sum + (stats ? stats.dropped.traces + stats.dropped.logs + stats.dropped.metrics : 0), 0),
    };
  } finally {
    await Promise.all(processes.map(stopChild));
    rmSync(stageDir, { recursive: true, force: true });
  }
}

/** Copy `copy` of an id: the first hex digits replaced, so every copy is a new trace with new spans. */
function copyId(id: string, copy: number): string {
  return id === '' ? id : (copy.toString(16).padStart(8, '0') + id.slice(8)).slice(0, id.length);
}

/** Endless OTLP requests of the recorded batch, `itemsPerRequest` items each (the sink's maximum is 1000), each round with fresh ids. */
interface OtlpRequest {
  signal: Signal;
  body: Uint8Array;
  items: number;
}

function* requestsOf(batch: TelemetryBatch, itemsPerRequest: number): Generator<OtlpRequest, never> {
  const encoder = new OtlpEncoder(sidecarResource('masked', {}), SIDECAR_VERSION);
  for (let copy = 1; ; copy++) {
    const spans = batch.spans.map((span) => ({ ...span, traceId: copyId(span.traceId, copy), spanId: copyId(span.spanId, copy), parentSpanId: copyId(span.parentSpanId, copy) }));
    const logs = batch.logs.map((log) => ({ ...log, traceId: copyId(log.traceId, copy), spanId: copyId(log.spanId, copy) }));
    for (const part of chunks(spans, itemsPerRequest)) yield { signal: 'traces', body: encoder.traces(part), items: part.length };
    for (const part of chunks(logs, itemsPerRequest)) yield { signal: 'logs', body: encoder.logs(part), items: part.length };
    for (const part of chunks(batch.metrics, itemsPerRequest)) yield { signal: 'metrics', body: encoder.metrics(part), items: part.length };
  }
}

interface Saturation {
  itemsPerRequest: number;
  acceptedEventsPerSecond: number;
  refusedRequests: number;
  collectorUtilisation: number;
  collectorCpuMicrosPerEvent: number;
}

/** As many requests as the collector takes, from 8 concurrent senders, for `seconds`: its ceiling on its core. */
async function saturate(gateway: Gateway, batch: TelemetryBatch, itemsPerRequest: number, seconds: number, idleCpuPerSecond: number): Promise<Saturation> {
  process.env.OTEL_EXPORTER_OTLP_HEADERS = `authorization=Bearer%20${gateway.token}`;
  const targets = await resolveTargets(gateway.url);
  const requests = requestsOf(batch, itemsPerRequest);
  let accepted = 0;
  let refused = 0;
  const collectorBefore = cpuSeconds(gateway.pid!);
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (performance.now() < deadline) {
        const request: OtlpRequest = requests.next().value;
        const outcome = await sendRequest(request.signal, targets[request.signal], request.body);
        if (outcome.kind === 'accepted') accepted += request.items;
        else refused++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const collectorSpent = cpuSeconds(gateway.pid!) - collectorBefore;
  return {
    itemsPerRequest,
    acceptedEventsPerSecond: accepted / elapsed,
    refusedRequests: refused,
    collectorUtilisation: collectorSpent / elapsed,
    collectorCpuMicrosPerEvent: ((collectorSpent - idleCpuPerSecond * elapsed) * 1e6) / accepted,
  };
}

// ---------------------------------------------------------------------------------------------------

/** Events/s one fully busy core takes: the accepted rate scaled to 100 % of the core. */
const perCore = (run: Saturation) => run.acceptedEventsPerSecond / Math.min(1, run.collectorUtilisation);

const fmt = (value: number, digits = 0) => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function main(): Promise<void> {
  console.log(`# bench/scale-out (${new Date().toISOString()})\n`);
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${fmt(totalmem() / 2 ** 30, 1)} GiB, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}, node ${process.version}\n`);

  // --- workload ---
  const workloads: Workload[] = [];
  const realDir = join(repo, 'test', 'fixtures', 'real');
  const realRoots = readdirSync(realDir).filter((name) => existsSync(join(realDir, name, 'projects')));
  // the fixtures keep projects/ directly in the scenario folder, which is what a config dir looks like
  workloads.push(await measureWorkload(`real samples (${realRoots.length} scenarios)`, realRoots.map((name) => join(realDir, name))));
  const corpusRoot = join(scratch, 'corpus-0');
  await generateCorpus({ seed: 1, root: corpusRoot, targetBytes: CORPUS_BYTES, hostLayout: 'single-root' });
  workloads.push(await measureWorkload(`generated (seed 1, ${fmt(CORPUS_BYTES / 1e6)} MB)`, [corpusRoot]));
  console.log('## Workload per model request (chat span), after masking\n');
  console.log('| corpus | files | lines | turns | chat spans | events (spans + logs + points) | lines / chat | events / chat | OTLP bytes / event | gzip bytes / event |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const w of workloads) {
    console.log(`| ${w.name} | ${w.files} | ${fmt(w.lines)} | ${fmt(w.turns)} | ${fmt(w.chats)} | ${fmt(events(w))} (${fmt(w.spans)} + ${fmt(w.logs)} + ${fmt(w.points)}) | ${fmt(w.lines / w.chats, 1)} | ${fmt(events(w) / w.chats, 1)} | ${fmt(w.otlpBytes / events(w))} | ${fmt(w.otlpGzipBytes / events(w))} |`);
  }
  const generated = workloads[1]!;
  const eventsPerChat = Math.max(...workloads.map((w) => events(w) / w.chats));
  const linesPerChat = generated.lines / generated.chats;
  console.log(`\nSizing uses the larger events / chat (${fmt(eventsPerChat, 1)}). Per agent-hour, at ${BUSY_REQUESTS_PER_HOUR} model requests (busy agent, assumption) ` +
    `and ${INTERACTIVE_REQUESTS_PER_HOUR} (interactive, assumption): ${fmt(eventsPerChat * BUSY_REQUESTS_PER_HOUR)} and ${fmt(eventsPerChat * INTERACTIVE_REQUESTS_PER_HOUR)} events; ` +
    `a busy agent writes ${fmt((linesPerChat * BUSY_REQUESTS_PER_HOUR) / 3600, 2)} transcript lines per second.`);
  const storage = await measureStorage([corpusRoot]);
  const diskBytesPerEvent = storage.bytes / storage.rows;
  console.log(`\nClickHouse (embedded chdb, exporter tables, after OPTIMIZE FINAL): ${fmt(storage.rows)} event rows, ${fmt(storage.bytes / 1e6, 2)} MB compressed on disk ` +
    `(lookup table included) = **${fmt(diskBytesPerEvent)} bytes per event**; by table: ${Object.entries(storage.byTable).map(([t, v]) => `${t} ${fmt(v.rows)} rows / ${fmt(v.bytes / 1e3)} kB`).join(', ')}.`);

  // --- load ---
  const corpora: { root: string; files: DiscoveredTranscript[] }[] = [];
  for (let seed = 2; seed < 2 + Math.max(...HOST_COUNTS); seed++) {
    const root = join(scratch, `corpus-${seed}`);
    await generateCorpus({ seed, root, targetBytes: CORPUS_BYTES, hostLayout: 'single-root' });
    corpora.push({ root, files: await discoverTranscripts([join(root, 'projects')]) });
  }
  const gateway = new Gateway({ dir: join(scratch, 'collector'), env: { CCOTEL_MEMORY_LIMIT_MIB: '2048', CCOTEL_MEMORY_SPIKE_MIB: '400' } });
  await gateway.start();
  const cores = cpus().length;
  const collectorCore = cores - 1;
  const sidecarCore = 0;
  const pinned = cores > 1 && pin(gateway.pid!, collectorCore);
  console.log(`\n## Load: N sidecar processes → one collector (gateway.yaml + file exporter, shipped processors, sampling 100%)\n`);
  const idleStart = cpuSeconds(gateway.pid!);
  await sleep(5000);
  const idleCpuPerSecond = (cpuSeconds(gateway.pid!) - idleStart) / 5;
  console.log(pinned ? `collector pinned to core ${collectorCore} (taskset), sidecars to core ${sidecarCore}; ${STAGE_SECONDS} s of appends per stage, then drain.` : 'taskset not available or one core: nothing pinned.');
  console.log(`Idle collector: ${fmt(idleCpuPerSecond * 100, 1)} % of a core (subtracted from the CPU per event below; included in "core busy").\n`);
  console.log('| flush ms | hosts | lines/s per host | offered lines/s | accepted events/s | events / request | drain s | collector core busy | collector µs CPU / event | sidecar ms CPU / event | sidecar core busy (each) | failed attempts | dropped |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const stages: Stage[] = [];
  const saturations: Saturation[] = [];
  let realistic: Stage[];
  try {
    for (const flushIntervalMs of FLUSH_INTERVALS) {
      for (const hosts of HOST_COUNTS) {
        for (const rate of LINE_RATES) {
          const stage = await runStage(gateway, corpora, { hosts, rate, flushIntervalMs }, sidecarCore, idleCpuPerSecond);
          stages.push(stage);
          console.log(`| ${flushIntervalMs} | ${hosts} | ${rate} | ${fmt(stage.offeredLinesPerSecond)} | ${fmt(stage.acceptedEventsPerSecond)} | ${fmt(stage.eventsPerRequest, 1)} | ${fmt(stage.drainSeconds, 1)} | ${fmt(stage.collectorUtilisation * 100)} % | ${fmt(stage.collectorCpuMicrosPerEvent, 1)} | ${fmt(stage.sidecarCpuMillisPerEvent, 2)} | ${fmt(stage.sidecarUtilisationPerHost * 100, 1)} % | ${stage.failedAttempts} | ${stage.dropped} |`);
        }
      }
    }
    // The sidecars share one core, so they cannot fill the collector's: its ceiling is found by sending what
    // they produced (same events, fresh ids each round) as fast as it takes them, in full requests and in
    // requests the size the sidecars sent at the real-rate stage (lowest rate per host, most hosts) of each
    // flush interval.
    realistic = FLUSH_INTERVALS.map((interval) =>
      stages.filter((stage) => stage.flushIntervalMs === interval).reduce((best, stage) =>
        stage.linesPerHostPerSecond < best.linesPerHostPerSecond || (stage.linesPerHostPerSecond === best.linesPerHostPerSecond && stage.hosts > best.hosts) ? stage : best));
    for (const itemsPerRequest of [1000, ...realistic.map((stage) => Math.max(1, Math.round(stage.eventsPerRequest)))]) {
      saturations.push(await saturate(gateway, generated.batch, itemsPerRequest, STAGE_SECONDS, idleCpuPerSecond));
    }
  } finally {
    await gateway.stop();
  }
  console.log(`\n### Saturation: the sidecars' output re-sent by 8 concurrent senders for ${STAGE_SECONDS} s each\n`);
  console.log('| events / request | accepted events/s | collector core busy | collector µs CPU / event | refused requests | events/s per collector core |');
  console.log('|---:|---:|---:|---:|---:|---:|');
  for (const run of saturations) {
    console.log(`| ${run.itemsPerRequest} | ${fmt(run.acceptedEventsPerSecond)} | ${fmt(run.collectorUtilisation * 100)} % | ${fmt(run.collectorCpuMicrosPerEvent, 1)} | ${run.refusedRequests} | **${fmt(perCore(run))}** |`);
  }

  // --- capacity ---
  const batchedPerCore = perCore(saturations[0]!);
  const realisticPerCore = realistic.map((_, i) => perCore(saturations[i + 1]!));
  console.log(`\nOne collector core (gateway.yaml as shipped, file exporter instead of ClickHouse, sampling 100 %) sustains ` +
    realistic.map((stage, i) => `**${fmt(realisticPerCore[i]!)} events/s** in requests of ${saturations[i + 1]!.itemsPerRequest} events (what the sidecars sent at ${stage.linesPerHostPerSecond} line/s per host, flushing every ${stage.flushIntervalMs} ms)`).join(', ') +
    `, **${fmt(batchedPerCore)} events/s** in requests of 1000.`);

  console.log(`\n## Capacity (busy agents: ${BUSY_REQUESTS_PER_HOUR} model requests an hour each, all at once; collectors at ${COLLECTOR_TARGET_UTILISATION * 100} % of their cores; raw rows kept ${RAW_TTL_DAYS} days)\n`);
  console.log(`| agent hosts | events/s | ${FLUSH_INTERVALS.map((interval) => `collector cores (sidecars flushing every ${interval} ms)`).join(' | ')} | (requests of 1000) | (README 40k/s/core) | ClickHouse rows/day | raw storage (${RAW_TTL_DAYS} d) | ClickHouse nodes by inserts (README 20 bn rows/day) | by disk (10 TB/node) | nodes with 2 replicas |`);
  console.log(`|---:|---:|${FLUSH_INTERVALS.map(() => '---:|').join('')}---:|---:|---:|---:|---:|---:|---:|`);
  for (const hostCount of [1_000, 10_000, 100_000]) {
    const eventsPerSecond = (hostCount * eventsPerChat * BUSY_REQUESTS_PER_HOUR) / 3600;
    const rowsPerDay = eventsPerSecond * 86_400;
    const storageBytes = rowsPerDay * RAW_TTL_DAYS * diskBytesPerEvent;
    const cores = (eventsPerCore: number) => Math.ceil(eventsPerSecond / (eventsPerCore * COLLECTOR_TARGET_UTILISATION));
    const byInserts = Math.ceil(eventsPerSecond / README_ROWS_PER_NODE_PER_SECOND);
    const byDisk = Math.ceil(storageBytes / DISK_PER_NODE_BYTES);
    console.log(
      `| ${fmt(hostCount)} | ${fmt(eventsPerSecond)} | ${realisticPerCore.map(cores).join(' | ')} | ${cores(batchedPerCore)} | ${cores(README_EVENTS_PER_CORE)} | ` +
        `${fmt(rowsPerDay / 1e9, 2)} bn | ${fmt(storageBytes / 1e12, 2)} TB | ${byInserts} | ${byDisk} | ${2 * Math.max(byInserts, byDisk)} |`,
    );
  }
}

await main();
