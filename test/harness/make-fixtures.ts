import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchRelease, type ClaudeRelease } from './claude-releases.js';
import { copyStdinHookCommand, installHooks, claudeBinaryProblem } from './run-claude.js';
import { runScenario } from './run-scenario.js';
import { MATRIX_SCENARIO_NAMES } from './matrix-scenarios.js';
import { SCENARIOS, scenarioNamed } from './scenarios.js';
import { writeSampleFolder } from './sample-folder.js';

// Re-makes test/fixtures/real/<scenario>/ from real runs of the pinned CLI, or
// test/fixtures/real/<version>/<scenario>/ from another release (fetched once into the release cache):
//   npx vite-node test/harness/make-fixtures.ts [--release X.Y.Z] [scenario ...]
// Each scenario runs in /tmp/ccotel-harness/[<version>/]<scenario>/{home,project,hooks} (fixed paths, so
// a re-run only changes ids and timestamps). Files are copied byte for byte; nothing is rewritten.

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), '../fixtures/real');
const RUN_ROOT = '/tmp/ccotel-harness';

async function makeFixture(name: string, release: ClaudeRelease | undefined): Promise<void> {
  const scenario = scenarioNamed(name);
  const subdir = release ? join(release.version, name) : name;
  const root = join(RUN_ROOT, subdir);
  rmSync(root, { recursive: true, force: true });
  const [home, projectDir, hookDir] = ['home', 'project', 'hooks'].map((d) => join(root, d));
  mkdirSync(hookDir, { recursive: true });
  installHooks(home, copyStdinHookCommand(hookDir), release?.hookEvents);

  const outcome = await runScenario(scenario, { home, projectDir, release });

  const out = join(FIXTURES, subdir);
  writeSampleFolder(out, {
    home,
    hookDir,
    telemetry: outcome.telemetry,
    requests: outcome.sessions.map((session) => session.requests),
    expectations: {
      scenario: scenario.name,
      description: scenario.description,
      version: release?.version,
      home,
      projectDir,
      sessions: outcome.sessions.flatMap((session) => session.cliSessions.map(({ sessionId, expectation }) => ({ sessionId, ...expectation }))),
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

const args = process.argv.slice(2);
const releaseAt = args.indexOf('--release');
const release = releaseAt >= 0 ? fetchRelease(args.splice(releaseAt, 2)[1]) : undefined;
const problem = release ? undefined : claudeBinaryProblem();
if (problem) {
  console.error(problem);
  process.exit(1);
}
const defaults = release ? MATRIX_SCENARIO_NAMES : SCENARIOS.map((s) => s.name);
const failed: string[] = [];
for (const name of args.length ? args : defaults) {
  // One scenario a release cannot run is reported; the others are still recorded.
  await makeFixture(name, release).catch((err: unknown) => {
    failed.push(name);
    console.error(`${name}: FAILED ${err instanceof Error ? err.message : String(err)}`);
  });
}
const out = release ? join(FIXTURES, release.version) : FIXTURES;
console.log(`fixtures in ${out}: ${readdirSync(out).join(', ')}`);
if (failed.length) {
  console.error(`not recorded: ${failed.join(', ')}`);
  process.exitCode = 1;
}
