// Benchmark (not a test): what one look at the process table costs, as the failure-mode detectors take it —
// a plain scan (stat + environ of every process) against one that also reads every command line, looking for
// the command line of a resumed session whose Claude Code process is not known yet (`sessionsToName`).
// Events now ask for scans besides the interval, so this is the unit of the watcher's CPU.
//
//   npm run build && node dist/bench/process-scan.js [--scans 200]
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { scanProcesses } from '../sidecar/src/sources/process-watcher.js';

const { values: args } = parseArgs({ options: { scans: { type: 'string', default: '200' } } });
const scans = Number(args.scans);

/** Milliseconds per scan, the median of 5 rounds of `scans` scans. */
function perScan(options: Parameters<typeof scanProcesses>[0]): number {
  const rounds: number[] = [];
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    for (let i = 0; i < scans; i++) scanProcesses(options);
    rounds.push((performance.now() - started) / scans);
  }
  return rounds.sort((a, b) => a - b)[2];
}

// A few processes that carry a session id, as Bash tool commands would.
const children = Array.from({ length: 20 }, () =>
  spawn('sleep', ['60'], { env: { PATH: process.env.PATH, CLAUDE_CODE_SESSION_ID: 'ffffffff-0000-4000-8000-000000000001' }, stdio: 'ignore' }),
);
try {
  await new Promise((resolve) => setTimeout(resolve, 1_000)); // let them start
  const processes = scanProcesses().parents.size;
  const plain = perScan({});
  const naming = perScan({ sessionsToName: new Set(['ffffffff-0000-4000-8000-000000000002']) });
  console.log(`processes on the host: ${processes}, of them with a session id: ${scanProcesses().processes.size}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`plain scan:                       ${plain.toFixed(2)} ms`);
  console.log(`scan reading every command line:  ${naming.toFixed(2)} ms (${(naming / plain).toFixed(2)}x)`);
  console.log(`at the 15 s default interval: ${((plain / 15_000) * 100).toFixed(3)} % of one core; at 1 scan/s: ${((plain / 1_000) * 100).toFixed(2)} %`);
} finally {
  for (const child of children) child.kill('SIGKILL');
}
