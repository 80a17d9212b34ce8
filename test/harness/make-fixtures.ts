import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { copyStdinHookCommand, installHooks, claudeBinaryProblem } from './run-claude.js';
import { runScenario } from './run-scenario.js';
import { SCENARIOS, scenarioNamed } from './scenarios.js';
import { writeSampleFolder } from './sample-folder.js';

// Re-makes test/fixtures/real/<scenario>/ from real runs of the CLI:
//   npx vite-node test/harness/make-fixtures.ts [scenario ...]
// Each scenario runs in /tmp/ccotel-harness/<scenario>/{home,project,hooks} (fixed paths, so a re-run
// only changes ids and timestamps). Files are copied byte for byte; nothing is rewritten.

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), '../fixtures/real');
const RUN_ROOT = '/tmp/ccotel-harness';

async function makeFixture(name: string): Promise<void> {
  const scenario = scenarioNamed(name);
  const root = join(RUN_ROOT, name);
  rmSync(root, { recursive: true, force: true });
  const [home, projectDir, hookDir] = ['home', 'project', 'hooks'].map((d) => join(root, d));
  mkdirSync(hookDir, { recursive: true });
  installHooks(home, copyStdinHookCommand(hookDir));

  const outcome = await runScenario(scenario, { home, projectDir });

  const out = join(FIXTURES, name);
  writeSampleFolder(out, {
    home,
    hookDir,
    telemetry: outcome.telemetry,
    requests: outcome.sessions.map((session) => session.requests),
    expectations: {
      scenario: scenario.name,
      description: scenario.description,
      home,
      projectDir,
      sessions: outcome.sessions.map((session) => ({ sessionId: session.sessionId, ...session.expectation })),
      background: outcome.background,
    },
  });
  outcome.sessions.forEach((session, s) =>
    session.runs.forEach((run, r) => {
      mkdirSync(join(out, 'results'), { recursive: true });
      writeFileSync(join(out, 'results', `session-${s + 1}-run-${r + 1}.json`), run.stdout);
    }),
  );

  const summary = outcome.sessions.map(
    (s) => `${s.sessionId} runs=${s.runs.map((r) => `${r.exitCode}/${r.durationMs}ms`).join(',')} requests=${s.requests.length} unused=${s.unusedSteps}`,
  );
  console.log(`${name}: ${summary.join(' | ')} telemetry=${outcome.telemetry.length}${outcome.background ? ' background=' + JSON.stringify(outcome.background) : ''}`);
  for (const s of outcome.sessions) if (s.unusedSteps > 0) console.warn(`  WARNING ${name}: ${s.unusedSteps} scripted steps were never requested`);
}

const problem = claudeBinaryProblem();
if (problem) {
  console.error(problem);
  process.exit(1);
}
const names = process.argv.slice(2);
for (const name of names.length ? names : SCENARIOS.map((s) => s.name)) await makeFixture(name);
console.log(`fixtures in ${FIXTURES}: ${readdirSync(FIXTURES).join(', ')}`);
