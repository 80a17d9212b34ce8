// The scenario suite of the failure-mode detectors: every mode of DESIGN section 6 planted on the real Claude
// Code CLI (print mode, and the TUI in a tmux pane) with `ccotel run` following it live, and a well-behaved twin
// of each. Every planted failure must be reported naming its session, call, process and port; the twins must
// raise nothing; docs/FAILURE-SCENARIOS.md is the table of it. Everything a scenario leaves is killed by pid.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { interactiveProblem } from '../harness/interactive.js';
import { FAILURE_SCENARIOS, type FailureScenario } from './failure-scenarios.js';
import { failureTable, judge, type Verdict } from './failure-table.js';
import { SCAN_INTERVAL_MS, startLiveSidecar, type DetectionRow, type LiveSidecar } from './live-sidecar.js';
import { killLeftovers, runFailureScenario, type ScenarioRun } from './run-failure-scenario.js';
import { skipWithout } from '../helpers/real-parts.js';

const TABLE = resolve('docs/FAILURE-SCENARIOS.md');
const problem = await interactiveProblem();

/** Print scenarios a few at a time (the slowest first); interactive ones one after another beside them, so no
 * two terminals exist at once (a pseudo-terminal number freed by one may be taken by the next). */
async function runAll(home: string, workDir: string): Promise<ScenarioRun[]> {
  const thinking = (s: FailureScenario) => s.print!({ port: 0 }).flatMap((run) => run.steps).reduce((ms, step) => ms + (step.delayMs ?? 0), 0);
  const print = FAILURE_SCENARIOS.filter((s) => s.print).sort((a, b) => thinking(b) - thinking(a));
  const interactive = FAILURE_SCENARIOS.filter((s) => s.interactive);
  const runs = new Map<string, ScenarioRun>();
  const worker = async (queue: FailureScenario[]) => {
    for (let scenario = queue.shift(); scenario; scenario = queue.shift()) {
      runs.set(scenario.name, await runFailureScenario(scenario, home, join(workDir, scenario.name)));
    }
  };
  await Promise.all([worker(print), worker(print), worker(interactive)]);
  return FAILURE_SCENARIOS.map((scenario) => runs.get(scenario.name)!);
}

describe.skipIf(skipWithout(problem))('failure modes on the real Claude Code CLI, ccotel run live beside it', () => {
  const root = mkdtempSync(join(tmpdir(), 'ccotel-failures-'));
  let sidecar: LiveSidecar;
  let runs: ScenarioRun[] = [];
  let detections: DetectionRow[] = [];
  let verdicts: Verdict[] = [];

  beforeAll(async () => {
    sidecar = await startLiveSidecar({ root });
    try {
      runs = await runAll(sidecar.home, join(root, 'projects'));
    } finally {
      for (const run of runs) if (run) killLeftovers(run);
    }
    // Every planted failure reported, or two minutes; then every twin's session over and a few scans more.
    const allFound = () => runs.map((run) => judge(run, detections)).every((verdict) => verdict.found.every((entry) => entry.detection));
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(1_000)) {
      detections = await sidecar.detections();
      if (allFound()) break;
    }
    const twins = runs.filter((run) => run.scenario.twinOf);
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(1_000)) {
      const states = await sidecar.sessionStates();
      if (twins.every((run) => states.get(run.sessionId)?.includes('ended'))) break;
    }
    await sleep(5 * SCAN_INTERVAL_MS);
    detections = await sidecar.detections();
    verdicts = runs.map((run) => judge(run, detections));
  }, 900_000);

  afterAll(async () => {
    await sidecar?.stop();
    rmSync(root, { recursive: true, force: true, maxRetries: 5 });
  });

  it('reports every planted failure, naming its session, tool call, process and port', () => {
    const missed = verdicts.flatMap((verdict) => verdict.found.filter((entry) => !entry.detection).map((entry) => `${verdict.scenario.name}: ${entry.planted.mode}`));
    expect(missed, JSON.stringify({ detections, runs: runs.map(({ scenario, ...run }) => ({ name: scenario.name, ...run })) }, null, 1)).toEqual([]);
    expect(verdicts.flatMap((verdict) => verdict.found)).toHaveLength(FAILURE_SCENARIOS.flatMap((scenario) => scenario.planted).length);
  });

  it('raises no failure mode on the well-behaved twins, and nothing unplanted on the others', () => {
    const falseAlarms = verdicts.flatMap((verdict) => verdict.unexpected.map((detection) => `${verdict.scenario.name}: ${detection.mode} (${detection.cause})`));
    expect(falseAlarms, JSON.stringify(detections, null, 1)).toEqual([]);
  });

  it('follows the interactive sessions: the closed terminal ends its session, the dead one is abandoned', async () => {
    const states = await sidecar.sessionStates();
    const stateOf = (name: string) => states.get(runs.find((run) => run.scenario.name === name)!.sessionId);
    expect(stateOf('interactive-terminal-closed')).toContain('ended');
    expect(stateOf('interactive-terminal-closed')).not.toContain('abandoned');
    expect(stateOf('interactive-terminal-dies')?.at(-1)).toBe('abandoned');
    expect(stateOf('interactive-terminal-dies')).toContain('waiting_for_input'); // the permission prompt
  });

  it('is what docs/FAILURE-SCENARIOS.md says', () => {
    const table = failureTable(verdicts);
    if (process.env.CCOTEL_UPDATE_DOCS === '1') writeFileSync(TABLE, table);
    expect(table).toBe(readFileSync(TABLE, 'utf8'));
  });
});
