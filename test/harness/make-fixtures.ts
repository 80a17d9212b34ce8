import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchRelease, type ClaudeRelease } from './claude-releases.js';
import { copyStdinHookCommand, installHooks, readHookPayloads, claudeBinaryProblem } from './run-claude.js';
import { runScenario, type ScenarioOutcome } from './run-scenario.js';
import { MATRIX_SCENARIO_NAMES } from './matrix-scenarios.js';
import { SCENARIOS, scenarioNamed } from './scenarios.js';
import { lastUserText } from './model-server.js';

// Re-makes test/fixtures/real/<scenario>/ from real runs of the pinned CLI, or
// test/fixtures/real/<version>/<scenario>/ from another release (fetched once into the release cache):
//   npx vite-node test/harness/make-fixtures.ts [--release X.Y.Z] [scenario ...]
// Each scenario runs in /tmp/ccotel-harness/[<version>/]<scenario>/{home,project,hooks} (fixed paths, so
// a re-run only changes ids and timestamps). Files are copied byte for byte; nothing is rewritten.

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), '../fixtures/real');
const RUN_ROOT = '/tmp/ccotel-harness';

function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(value, null, 2) + '\n');
}

function modelRequestSummary(outcome: ScenarioOutcome) {
  return outcome.sessions.map((session) =>
    session.requests.map((r) => {
      const body = r.body as { model?: string; stream?: boolean; tools?: { name: string }[]; max_tokens?: number };
      return {
        method: r.method,
        path: r.path,
        handledAs: r.handledAs,
        sessionHeader: r.headers['x-claude-code-session-id'],
        traceparent: r.headers.traceparent,
        model: body.model,
        stream: body.stream,
        maxTokens: body.max_tokens,
        tools: body.tools?.map((t) => t.name),
        prompt: lastUserText(body).slice(0, 300),
        messageId: r.messageId,
        requestId: r.requestId,
        toolUseIds: r.toolUseIds,
      };
    }),
  );
}

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
  rmSync(out, { recursive: true, force: true });
  cpSync(join(home, '.claude', 'projects'), join(out, 'projects'), { recursive: true });
  readHookPayloads(hookDir).forEach(({ file, payload }, i) =>
    cpSync(join(hookDir, file), join(out, 'hooks', `${String(i + 1).padStart(3, '0')}-${String(payload.hook_event_name)}.json`)),
  );
  mkdirSync(join(out, 'otel'), { recursive: true });
  for (const signal of ['traces', 'logs', 'metrics'] as const) {
    const bodies = outcome.telemetry.filter((e) => e.signal === signal).map((e) => e.raw);
    writeFileSync(join(out, 'otel', `${signal}.jsonl`), bodies.map((b) => b + '\n').join(''));
  }
  outcome.sessions.forEach((session, s) =>
    session.runs.forEach((run, r) => {
      mkdirSync(join(out, 'results'), { recursive: true });
      writeFileSync(join(out, 'results', `session-${s + 1}-run-${r + 1}.json`), run.stdout);
    }),
  );
  writeJson(join(out, 'model-requests.json'), modelRequestSummary(outcome));
  writeJson(join(out, 'expectations.json'), {
    scenario: scenario.name,
    description: scenario.description,
    version: release?.version,
    home,
    projectDir,
    sessions: outcome.sessions.flatMap((session) => session.cliSessions.map(({ sessionId, expectation }) => ({ sessionId, ...expectation }))),
    background: outcome.background,
  });

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
