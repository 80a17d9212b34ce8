import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { copyStdinHookCommand, installHooks, readHookPayloads, claudeBinaryProblem } from './run-claude.js';
import { runScenario, type ScenarioOutcome } from './run-scenario.js';
import { SCENARIOS, scenarioNamed } from './scenarios.js';
import { lastUserText } from './model-server.js';

// Re-makes test/fixtures/real/<scenario>/ from real runs of the CLI:
//   npx vite-node test/harness/make-fixtures.ts [scenario ...]
// Each scenario runs in /tmp/ccotel-harness/<scenario>/{home,project,hooks} (fixed paths, so a re-run
// only changes ids and timestamps). Files are copied byte for byte; nothing is rewritten.

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

async function makeFixture(name: string): Promise<void> {
  const scenario = scenarioNamed(name);
  const root = join(RUN_ROOT, name);
  rmSync(root, { recursive: true, force: true });
  const [home, projectDir, hookDir] = ['home', 'project', 'hooks'].map((d) => join(root, d));
  mkdirSync(hookDir, { recursive: true });
  installHooks(home, copyStdinHookCommand(hookDir));

  const outcome = await runScenario(scenario, { home, projectDir });

  const out = join(FIXTURES, name);
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
    home,
    projectDir,
    sessions: outcome.sessions.map((session) => ({ sessionId: session.sessionId, ...session.expectation })),
    background: outcome.background,
  });

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
