// Benchmark (not a test): the fleet path with the real clickhouse exporter (deploy/local-fleet.ts: N `ccotel run`
// hosts → scale-out.yaml → two gateway.yaml gateways → ClickHouse, here the test front over the embedded engine).
// A generated corpus is split over the hosts by project and appended live, a slice every --slice-ms. It prints:
//   - spans/s through the fleet per gateway core: spans stored ÷ the gateways' CPU seconds (utime + stime from
//     /proc, both gateways, start to the last row), and the wall-clock rate;
//   - end-to-end delay from an appended row to its row in the fleet's store, p50 / p99 over the turns' root
//     spans: the store is polled every --poll-ms for new spans; a span's delay is the time it was first seen
//     less the time the row that completes it (the last appended row of its session whose transcript timestamp is
//     not after the span's end) was appended. The gateways' exporter batches for up to 5 s (gateway.yaml), which bounds
//     the delay from below; the poll adds up to --poll-ms.
// Every process shares the machine (say its load with the figures); the test front's inserts run on the same cores.
//
//   npm run build && bash collector-config/build.sh
//   npx vite-node bench/fleet.ts [--hosts 3] [--sessions 60] [--slices 20] [--slice-ms 1000] [--poll-ms 500]
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { createClient } from '@clickhouse/client';
import { LocalFleet } from '../deploy/local-fleet.js';
import { generateCorpus } from '../test/generator/corpus.js';

const { values: flags } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    hosts: { type: 'string', default: '3' },
    sessions: { type: 'string', default: '60' },
    slices: { type: 'string', default: '20' },
    'slice-ms': { type: 'string', default: '1000' },
    'poll-ms': { type: 'string', default: '500' },
  },
});
const HOSTS = Number(flags.hosts);
const SLICES = Number(flags.slices);
const SLICE_MS = Number(flags['slice-ms']);
const POLL_MS = Number(flags['poll-ms']);

const dir = mkdtempSync(join(tmpdir(), 'ccotel-bench-fleet-'));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND; // utime, stime
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const fleet = new LocalFleet({ dir: join(dir, 'fleet'), hosts: Array.from({ length: HOSTS }, (_, i) => `host-${i + 1}`), runArgs: ['--idle', '2000'] });
try {
  // Recent sessions (the shipped schema's raw TTL is 30 days), written live.
  await generateCorpus({ seed: 7, root: join(dir, 'corpus'), hostLayout: 'single-root', sessions: Number(flags.sessions), startMs: Date.now() - 86_400_000 });
  const projects = join(dir, 'corpus', 'projects');
  const files: { host: number; path: string; lines: string[] }[] = [];
  readdirSync(projects).sort().forEach((project, index) => {
    const walk = (path: string): void => {
      if (statSync(path).isDirectory()) for (const entry of readdirSync(path)) walk(join(path, entry));
      else files.push({ host: index % HOSTS, path: relative(projects, path), lines: readFileSync(path, 'utf8').match(/[^\n]*\n|[^\n]+$/g) ?? [] });
    };
    walk(join(projects, project));
  });
  await fleet.start();
  const client = createClient({ url: fleet.storeUrl, request_timeout: 120_000 });
  const cpuAtStart = fleet.gateways.map((gateway) => cpuSeconds(gateway.pid));

  /** Per session: each row's transcript time (ms) and when it was appended (wall ms). */
  const appendedAt = new Map<string, { rowMs: number; wallMs: number }[]>();
  const seen = new Map<string, { session: string; endMs: number; seenMs: number }>();
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const result = await client.query({
        query: `SELECT SpanId AS id, SpanAttributes['session.id'] AS session, intDiv(toUnixTimestamp64Nano(Timestamp) + Duration, 1000000) AS end
                FROM otel_traces WHERE SpanName = 'invoke_agent claude-code'`,
        format: 'JSONEachRow',
      });
      const now = Date.now();
      for (const row of await result.json<{ id: string; session: string; end: string }>()) {
        if (!seen.has(row.id)) seen.set(row.id, { session: row.session, endMs: Number(row.end), seenMs: now });
      }
      await pause(POLL_MS);
    }
  })();

  const startedMs = Date.now();
  for (let slice = 1; slice <= SLICES; slice++) {
    const wallMs = Date.now();
    for (const file of files) {
      const path = join(fleet.hosts[file.host]!.projects, file.path);
      mkdirSync(dirname(path), { recursive: true });
      const part = file.lines.slice(Math.floor(((slice - 1) * file.lines.length) / SLICES), Math.floor((slice * file.lines.length) / SLICES));
      appendFileSync(path, part.join(''));
      for (const line of part) {
        const rowMs = Date.parse(/"timestamp":"([^"]+)"/.exec(line)?.[1] ?? '');
        const session = /"sessionId":"([^"]+)"/.exec(line)?.[1];
        if (Number.isFinite(rowMs) && session) appendedAt.set(session, [...(appendedAt.get(session) ?? []), { rowMs, wallMs }]);
      }
    }
    await pause(Math.max(0, wallMs + SLICE_MS - Date.now()));
  }
  // Until the store stops growing for 20 s (the exporter flushes within 5 s; retries within 30 s).
  let last = -1;
  let stableSince = Date.now();
  let spansStored = 0;
  let lastRowMs = Date.now();
  for (;;) {
    const [row] = await (await client.query({ query: 'SELECT count() AS n FROM otel_traces', format: 'JSONEachRow' })).json<{ n: string }>();
    spansStored = Number(row!.n);
    if (spansStored !== last) {
      last = spansStored;
      stableSince = lastRowMs = Date.now();
    } else if (Date.now() - stableSince > 20_000) break;
    await pause(1000);
  }
  polling = false;
  await poller;
  const cpu = fleet.gateways.reduce((sum, gateway, i) => sum + cpuSeconds(gateway.pid) - cpuAtStart[i]!, 0);
  await client.close();

  /** When the last row of the session at or before the span's end was appended: the row that completes the turn. */
  const appendWall = (session: string, endMs: number): number | undefined => {
    let found: number | undefined;
    for (const { rowMs, wallMs } of appendedAt.get(session) ?? []) if (rowMs <= endMs) found = Math.max(found ?? 0, wallMs);
    return found;
  };
  const delays = [...seen.values()].flatMap(({ session, endMs, seenMs }) => {
    const wall = appendWall(session, endMs);
    return wall === undefined ? [] : [(seenMs - wall) / 1000];
  });
  delays.sort((a, b) => a - b);
  const wallSeconds = (lastRowMs - startedMs) / 1000;
  console.log(`## Fleet path (${HOSTS} hosts → scale-out → ${fleet.gateways.length} gateways → real clickhouse exporter → test front)\n`);
  console.log(`${cpus().length} × ${cpus()[0]?.model ?? '?'}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}; ${files.length} transcript files appended in ${SLICES} slices, one per ${SLICE_MS} ms\n`);
  console.log('| figure | value |');
  console.log('|---|---:|');
  console.log(`| spans stored | ${spansStored} |`);
  console.log(`| gateways' CPU (both, s) | ${cpu.toFixed(2)} |`);
  console.log(`| **spans per gateway core-second** (stored ÷ gateways' CPU) | **${Math.round(spansStored / cpu)}** |`);
  console.log(`| spans/s wall clock (first append to last row) | ${(spansStored / wallSeconds).toFixed(1)} |`);
  console.log(`| turns timed (root spans) | ${delays.length} |`);
  console.log(`| **delay appended row → row in the store, p50** | **${percentile(delays, 50).toFixed(2)} s** |`);
  console.log(`| **delay appended row → row in the store, p99** | **${percentile(delays, 99).toFixed(2)} s** |`);
} finally {
  await fleet.stop();
  rmSync(dir, { recursive: true, force: true });
}
