// `npm run demo [-- --store <dir|url>]`: real data in ccotel without ever having used Claude Code, and what
// makes ccotel different. `ccotel run` follows a made-up user's temp HOME live (ccotel's hooks and shell
// integration installed there) while the real Claude Code CLI (offline: a scripted model on loopback) runs every
// harness scenario and the failure scenarios that leave a server running, detach a child from an interrupted
// call, resume beside a leftover process and kill the agent. Then `ccotel report` shows session states and the
// failure modes, and the demo says which scenario, call and process each detection came from.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { configFilePath, loadConfig } from '../../sidecar/src/config.js';
import { runScenarios } from '../e2e/scenario-runs.js';
import { FAILURE_SCENARIOS } from '../scenarios/failure-scenarios.js';
import { startLiveSidecar, type DetectionRow } from '../scenarios/live-sidecar.js';
import { killLeftovers, runFailureScenario, type ScenarioRun } from '../scenarios/run-failure-scenario.js';
import { claudeBinaryProblem, CLAUDE_BINARY } from './run-claude.js';
import { SCENARIOS } from './scenarios.js';

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist/sidecar/src/cli.js');
const SHOWN_MODES = ['orphan_process', 'approval_scope', 'signal_propagation', 'abandoned_session', 'replay_divergence'];
const FAILURES = ['server-left-running', 'interrupt-escaped-child', 'resume-with-process-left', 'agent-killed'];

function fail(message: string): never {
  console.error(`ccotel demo: ${message}`);
  process.exit(1);
}

const { values } = parseArgs({ options: { store: { type: 'string' } } });
const problem = claudeBinaryProblem();
if (problem) fail(`the demo drives the real Claude Code CLI, which cannot run here: ${problem}`);
if (!existsSync(CLI)) fail(`${CLI} is missing: run \`npm run build\` first`);

// Your store and your ccotel settings, resolved before ccotel is pointed at the made-up user.
const config = loadConfig({ store: values.store });
const root = mkdtempSync(join(tmpdir(), 'ccotel-demo-'));
const configFile = configFilePath(process.env);
const sidecar = await startLiveSidecar({ root, store: config.store, configFile: existsSync(configFile) ? configFile : 'none' }).catch((error: Error) =>
  fail(`could not start \`ccotel run\` on ${config.store} (is your own \`ccotel run\` holding it? give --store): ${error.message}`),
);
const failures: ScenarioRun[] = [];
try {
  const version = spawnSync(CLAUDE_BINARY, ['--version'], { encoding: 'utf8' }).stdout.trim();
  console.log(`ccotel run follows ${sidecar.home} into ${config.store}.`);
  console.log(`Running ${SCENARIOS.length + FAILURES.length} scenarios against ${version} (offline, scripted model)…`);
  const started = performance.now();
  const [outcomes] = await Promise.all([
    runScenarios({ home: sidecar.home, workDir: join(root, 'projects'), concurrency: 2 }),
    (async () => {
      for (const name of FAILURES) {
        const scenario = FAILURE_SCENARIOS.find((s) => s.name === name)!;
        failures.push(await runFailureScenario(scenario, sidecar.home, join(root, 'failures', name)));
      }
    })(),
  ]);
  for (const outcome of outcomes) console.log(`  ${outcome.scenario.padEnd(26)} ${outcome.sessions.map((s) => s.sessionId.slice(0, 8)).join(', ')}`);
  for (const run of failures) console.log(`  ${run.scenario.name.padEnd(26)} ${run.sessionId.slice(0, 8)}  (${run.scenario.description})`);
  console.log(`Done in ${((performance.now() - started) / 1000).toFixed(1)} s. Waiting for ccotel to see the leftover processes…\n`);

  let detections: DetectionRow[] = [];
  const seen = () => new Set(detections.map((detection) => detection.mode));
  for (const deadline = Date.now() + 60_000; Date.now() < deadline && !SHOWN_MODES.every((mode) => seen().has(mode)); await sleep(1_000)) {
    detections = await sidecar.detections();
  }
  console.log('Failure modes found on real processes, and where each came from:');
  const scenarioOf = new Map([
    ...outcomes.flatMap((outcome) => outcome.sessions.map((session) => [session.sessionId, outcome.scenario] as const)),
    ...failures.map((run) => [run.sessionId, run.scenario.name] as const),
  ]);
  for (const d of detections) {
    const what = [d.cause && `cause ${d.cause}`, d.toolUseId && `call ${d.toolUseId}`, d.pid && `pid ${d.pid}`, d.port && `port ${d.port}`, d.commandLine && `\`${d.commandLine.slice(0, 60)}\``];
    console.log(`  ${d.mode.padEnd(19)} ${(scenarioOf.get(d.sessionId) ?? d.sessionId.slice(0, 8)).padEnd(26)} ${what.filter(Boolean).join(', ')}`);
  }
  const missing = SHOWN_MODES.filter((mode) => !seen().has(mode));
  if (missing.length > 0) console.log(`  (not seen within a minute: ${missing.join(', ')})`);
  console.log('');
} finally {
  for (const run of failures) killLeftovers(run);
  await sidecar.stop();
}
const report = spawnSync(process.execPath, [CLI, 'report', '--store', config.store], { stdio: 'inherit' });
rmSync(root, { recursive: true, force: true, maxRetries: 5 });
if (report.status !== 0) fail(`\`ccotel report\` failed (exit ${report.status ?? report.signal})`);
console.log(`The demo sessions are in ${config.store}; explore them with \`ccotel query\` or the Grafana dashboards.`);
