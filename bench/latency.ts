// Benchmark (not a test): time from appending a turn to a transcript until its rows can be queried, with
// `ccotel run` (the built CLI) on the embedded store, asked through the sidecar's own query endpoint (the
// path `ccotel query` and `ccotel report` take while run owns the store). Two rows per append:
//   tool span     `execute_tool Bash` of the appended turn: emitted as soon as its result line is read;
//   turn root     `invoke_agent` of the turn before it: emitted when the appended prompt closes that turn.
// The poll (one count query every --poll-ms) runs in the sidecar too, so it adds a little load to what it measures.
//
// --files N adds N other transcripts followed at the same time: one in --turn-every holds a turn dated now
// (a session still open), the rest a summary row.
//
//   npm run build && node dist/bench/latency.js [--appends 100] [--poll-ms 10] [--files 0] [--turn-every 10]
import { createClient } from '@clickhouse/client';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { assertBuilt, cliEnv, startRun, transcriptStatus } from '../test/reliability/cli.js';
import { appendTurns, sessionPath, waitFor, writeManyTranscripts } from '../test/reliability/transcripts.js';
import { percentile } from './stats.js';

const { values: args } = parseArgs({
  options: {
    appends: { type: 'string', default: '100' },
    'poll-ms': { type: 'string', default: '10' },
    files: { type: 'string', default: '0' },
    'turn-every': { type: 'string', default: '10' },
  },
});
const appends = Number(args.appends);
const pollMs = Number(args['poll-ms']);
const otherFiles = Number(args.files);
const sleep = (ms: number) => new Promise((resolveDelay) => setTimeout(resolveDelay, ms));

function summary(name: string, samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const figure = (ms: number) => `${Math.round(ms)} ms`;
  return `${name.padEnd(12)} n=${sorted.length}  p50 ${figure(percentile(sorted, 50))}  p90 ${figure(percentile(sorted, 90))}  p99 ${figure(percentile(sorted, 99))}  max ${figure(sorted[sorted.length - 1])}`;
}

assertBuilt();
const home = mkdtempSync(join(tmpdir(), 'ccotel-latency-'));
const env = cliEnv(home);
const store = join(home, 'store');
const session = 'latency-session';
const transcript = sessionPath(join(home, 'claude'), session);
// Records dated now, so nothing is idle; the idle close is not what is measured.
const startMs = Date.now();
appendTurns(transcript, session, 0, 1, startMs);
writeManyTranscripts(join(home, 'claude'), 0, otherFiles, Number(args['turn-every']), startMs);
const sidecar = startRun(['--store', store], env);
try {
  await waitFor('the query endpoint', () => sidecar.output().includes('queries served on'), 60_000);
  const lock = JSON.parse(readFileSync(join(store, 'ccotel.lock'), 'utf8')) as { endpoint: { url: string; token: string } };
  const client = createClient({ url: lock.endpoint.url, username: 'ccotel', password: lock.endpoint.token });
  const counts = async () => {
    const result = await client.query({
      query: "SELECT countIf(SpanName = 'execute_tool Bash') AS tools, countIf(SpanName = 'invoke_agent claude-code') AS roots FROM otel_traces",
      format: 'JSONEachRow',
    });
    const [row] = await result.json<{ tools: string; roots: string }>();
    return { tools: Number(row.tools), roots: Number(row.roots) };
  };
  const catchUpStarted = performance.now();
  await waitFor('the catch-up', async () => (await transcriptStatus(env, store))?.filesFollowed === otherFiles + 1, 300_000);
  await waitFor('the first turn', async () => (await counts()).tools >= 1, 60_000);
  console.log(`catch-up on ${otherFiles + 1} files: ${((performance.now() - catchUpStarted) / 1000).toFixed(1)} s`);

  // The other sessions' rows are counted too: measure from what is there after the catch-up.
  const { tools: firstTools, roots: firstRoots } = await counts();
  const toolMs: number[] = [];
  const rootMs: number[] = [];
  const queryMs: number[] = [];
  for (let turn = 1; turn <= appends; turn++) {
    appendTurns(transcript, session, turn, turn + 1, startMs);
    const appended = performance.now();
    let tool: number | undefined;
    let root: number | undefined;
    while (tool === undefined || root === undefined) {
      const asked = performance.now();
      const seen = await counts();
      queryMs.push(performance.now() - asked);
      const now = performance.now();
      if (tool === undefined && seen.tools >= firstTools + turn) tool = now - appended;
      if (root === undefined && seen.roots >= firstRoots + turn) root = now - appended;
      if (now - appended > 30_000) throw new Error(`turn ${turn} not queryable after 30 s`);
      await sleep(pollMs);
    }
    toolMs.push(tool);
    rootMs.push(root);
    await sleep(100 + Math.random() * 400); // a pause between appends, as between a model's messages
  }
  await client.close();
  console.log(`append → queryable, embedded store, ${appends} appends (one turn = 4 lines each), poll every ${pollMs} ms, ${otherFiles + 1} files followed (${Math.ceil(otherFiles / Number(args['turn-every'])) + 1} open sessions)`);
  console.log(summary('tool span', toolMs));
  console.log(summary('turn root', rootMs));
  console.log(summary('poll query', queryMs));
  console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load ${loadavg().map((n) => n.toFixed(2)).join(' ')} at the end`);
} finally {
  sidecar.child.kill('SIGTERM');
  await sidecar.exited;
  rmSync(home, { recursive: true, force: true });
}
