// Runs the harness scenarios against the real Claude Code CLI as one user: one HOME with ccotel's hooks
// and shell integration installed (as `ccotel install-hooks` / `install-shell` would), each scenario in
// its own project directory with its own model server and native-telemetry receiver, a few at a time.
import { join } from 'node:path';
import { installHooks } from '../../sidecar/src/install/hooks.js';
import { installShell } from '../../sidecar/src/install/shell.js';
import { runScenario, type ScenarioOutcome } from '../harness/run-scenario.js';
import { SCENARIOS, type Scenario } from '../harness/scenarios.js';

export interface ScenarioRunsOptions {
  /** HOME of the simulated user; afterwards `<home>/.claude/projects` holds every scenario's transcripts. */
  home: string;
  /** Where the scenarios' project directories go (`<workDir>/<scenario>`). */
  workDir: string;
  scenarios?: Scenario[];
  /** Scenarios running at once. Each CLI run is mostly waiting on its own start-up and hooks. */
  concurrency?: number;
}

/** ccotel's own integration, installed into `home` the way a user installs it. */
export function installCcotelIntegration(home: string): void {
  const env = { HOME: home };
  installHooks({ env });
  installShell({ env });
}

export async function runScenarios(options: ScenarioRunsOptions): Promise<ScenarioOutcome[]> {
  const scenarios = options.scenarios ?? SCENARIOS;
  installCcotelIntegration(options.home);
  const outcomes: ScenarioOutcome[] = new Array(scenarios.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < scenarios.length; i = next++) {
      const scenario = scenarios[i];
      outcomes[i] = await runScenario(scenario, { home: options.home, projectDir: join(options.workDir, scenario.name) });
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 3, scenarios.length) }, worker));
  return outcomes;
}
