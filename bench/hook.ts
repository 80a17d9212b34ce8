// Benchmark (not a test) of the hook and the shell log, printed as Markdown for docs/HOOKS.md.
//   npx vite-node bench/hook.ts [runs]
// 1. Hook: time per call as Claude Code makes it (`/bin/sh -c '<command>'`, the event on stdin),
//    against the least any spooling hook can do, `cat > file`, and against the hook as of an earlier
//    commit (default d487416: date + cat + mv), all in the same run.
// 2. Shell log: wall time of a Bash tool command (`bash -c`, Claude Code's wrapper) with and without
//    the integration, and the integration's own shell work measured inside one bash.
//
//   npx vite-node bench/hook.ts [runs=400] [earlier-commit=d487416]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { shellSourceLine } from '../sidecar/src/install/shell.js';
import { spoolHookHandler } from '../sidecar/src/install/hooks.js';
import { shQuote } from '../sidecar/src/install/scripts.js';
import { hookPayloads } from '../test/hook/payloads.js';
import { bashToolScript, HOOK_SCRIPT, SHELL_SCRIPT } from '../test/hook/run.js';
import { reportGoals } from './goals.js';
import { percentile } from './stats.js';

const runs = Number(process.argv[2] ?? 400);
const earlier = process.argv[3] ?? 'd487416';
const dir = mkdtempSync(join(tmpdir(), 'ccotel-bench-'));

/** Milliseconds per run of each function, after a few warm-up runs; interleaved in rounds so a change of load hits all alike. */
function timeRuns(fns: (() => void)[], rounds = 8): number[][] {
  for (const fn of fns) for (let i = 0; i < 10; i++) fn();
  const times: number[][] = fns.map(() => []);
  for (let round = 0; round < rounds; round++) {
    fns.forEach((fn, f) => {
      for (let i = 0; i < Math.ceil(runs / rounds); i++) {
        const start = process.hrtime.bigint();
        fn();
        times[f].push(Number(process.hrtime.bigint() - start) / 1e6);
      }
    });
  }
  return times.map((list) => list.sort((a, b) => a - b));
}

function row(name: string, times: number[]): string {
  const f = (ms: number) => ms.toFixed(2);
  return `| ${name} | ${f(percentile(times, 50))} | ${f(percentile(times, 90))} | ${f(percentile(times, 99))} | ${f(times.at(-1)!)} |`;
}

/** Seconds of shell CPU (user + sys) in one line of `times` output, e.g. "0m0.012s 0m0.004s". */
const cpuSeconds = (line: string) =>
  [...line.matchAll(/(\d+)m([\d.]+)s/g)].slice(0, 2).reduce((sum, [, m, sec]) => sum + Number(m) * 60 + Number(sec), 0);
function mustSucceed(result: ReturnType<typeof spawnSync>): void {
  if (result.status !== 0) throw new Error(`benchmark command failed: ${String(result.stderr)}`);
}

const payload = JSON.stringify(hookPayloads({ sessionId: '3f1c2b9e-8d7a-4c6b-9e5f-0a1b2c3d4e5f', cwd: '/home/dev/project' }).PostToolUse);
const spool = join(dir, 'state', 'spool');
const hookCommand = spoolHookHandler(HOOK_SCRIPT, spool).command!;
const executedHookCommand = `${shQuote(HOOK_SCRIPT)} ${shQuote(join(dir, 'state', 'spool-executed'))}`;
const catCommand = `cat > ${shQuote(join(dir, 'cat-target'))}`;
const earlierScript = join(dir, 'ccotel-hook-earlier.sh');
writeFileSync(earlierScript, execFileSync('git', ['show', `${earlier}:sidecar/hook/ccotel-hook.sh`]), { mode: 0o755 });
const earlierCommand = `${shQuote(earlierScript)} ${shQuote(join(dir, 'state', 'spool-earlier'))}`;

const asClaudeCodeRunsIt = (commandLine: string) => () => mustSucceed(spawnSync('/bin/sh', ['-c', commandLine], { input: payload }));
const [hookTimes, executedTimes, catTimes, shellTimes, earlierTimes] = timeRuns(
  [hookCommand, executedHookCommand, catCommand, 'true', earlierCommand].map(asClaudeCodeRunsIt),
);
/** CPU (user + sys) per call of a hook command, summed over its processes: bash `times` for children. */
function cpuMicrosPerCall(commandLine: string): number {
  const script = `for ((i = 0; i < ${runs}; i++)); do sh -c ${shQuote(commandLine)} < ${shQuote(payloadFile)}; done; times`;
  const children = spawnSync('bash', ['-c', script], { encoding: 'utf8' }).stdout.trim().split('\n').at(-1)!;
  return (cpuSeconds(children) * 1e6) / runs;
}
const payloadFile = join(dir, 'payload.json');
writeFileSync(payloadFile, payload);
const hookCpu = cpuMicrosPerCall(hookCommand);
const executedCpu = cpuMicrosPerCall(executedHookCommand);
const catCpu = cpuMicrosPerCall(catCommand);
const earlierCpu = cpuMicrosPerCall(earlierCommand);
rmSync(spool, { recursive: true });

const logDir = join(dir, 'shell');
mkdirSync(logDir);
const toolOptions = { cwdFile: join(dir, 'cwd') };
const command = 'echo "$PWD" | wc -c >/dev/null';
const env = { PATH: process.env.PATH, HOME: dir, LANG: 'C.UTF-8', CLAUDE_CODE_SESSION_ID: 'bench-session' };
const [withTimes, withoutTimes] = timeRuns([
  () => mustSucceed(spawnSync('bash', ['-c', bashToolScript(command, { ...toolOptions, envFileLine: shellSourceLine(SHELL_SCRIPT, logDir) })], { env })),
  () => mustSucceed(spawnSync('bash', ['-c', bashToolScript(command, toolOptions)], { env })),
]);

// The integration's shell work alone: source it (start record) and run its exit handler (end
// record) many times inside one bash. Wall time suffers on a busy machine; the shell's own CPU
// time (bash's `times`, user + sys) much less.
const inShellLoops = 2000;
const inShell = spawnSync(
  'bash',
  [
    '-c',
    `__ccotel_shell_log_dir=${shQuote(logDir)}
     times; t0=$EPOCHREALTIME
     for ((i = 0; i < ${inShellLoops}; i++)); do unset __ccotel_shell_pid; . ${shQuote(SHELL_SCRIPT)}; __ccotel_shell_end; done
     t1=$EPOCHREALTIME; times
     trap - EXIT
     echo $(( \${t1//[!0-9]/} - \${t0//[!0-9]/} ))`,
  ],
  { env, encoding: 'utf8' },
);
const [cpuBefore, , cpuAfter, , wallMicros] = inShell.stdout.trim().split('\n');
const wallPerCommand = Number(wallMicros) / inShellLoops;
const cpuPerCommand = ((cpuSeconds(cpuAfter) - cpuSeconds(cpuBefore)) * 1e6) / inShellLoops;
rmSync(dir, { recursive: true, force: true });

const bashVersion = spawnSync('bash', ['-c', 'echo $BASH_VERSION'], { encoding: 'utf8' }).stdout.trim();
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(`Machine: ${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, Linux ${release()}, bash ${bashVersion}, /bin/sh = dash, Node ${process.version}, load ${load}; ${runs} runs each, ${payload.length}-byte event.

| per call, ms (spawned from Node like Claude Code does) | p50 | p90 | p99 | max |
|---|---|---|---|---|
${row('ccotel-hook.sh as installed (sourced by the sh -c)', hookTimes)}
${row('ccotel-hook.sh run as a command (the install before 2026-12-02)', executedTimes)}
${row('bare `cat > file` (sh -c)', catTimes)}
${row('`sh -c true` (the shell start alone)', shellTimes)}
${row(`ccotel-hook.sh at ${earlier} (date + cat + mv)`, earlierTimes)}
${row('Bash tool command with the shell log', withTimes)}
${row('Bash tool command without it', withoutTimes)}

CPU per hook call (all its processes, user + sys): ccotel-hook.sh ${hookCpu.toFixed(0)} µs (run as a command ${executedCpu.toFixed(0)} µs), \`cat > file\` ${catCpu.toFixed(0)} µs, at ${earlier} ${earlierCpu.toFixed(0)} µs. p99 ratio to \`cat > file\`: ${(percentile(hookTimes, 99) / percentile(catTimes, 99)).toFixed(2)} (at ${earlier}: ${(percentile(earlierTimes, 99) / percentile(catTimes, 99)).toFixed(2)}).

Shell log work per command inside bash (source the script, start record, end record; no process started): ${wallPerCommand.toFixed(0)} µs wall, ${cpuPerCommand.toFixed(0)} µs of shell CPU.`);
reportGoals('hook', [
  { goal: 'hook p99, sh -c as Claude Code spawns it', measured: Number(percentile(hookTimes, 99).toFixed(2)), unit: 'ms', bound: 5, better: 'lower', peer: `bare cat > file, p99 ${percentile(catTimes, 99).toFixed(2)} ms; sh -c true ${percentile(shellTimes, 99).toFixed(2)} ms` },
]);
