import { readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { interactiveProblem } from './interactive.js';
import { INTERACTIVE_SCENARIOS, interactiveScenarioNamed, scriptedBlocks } from './interactive-scenarios.js';
import { runInteractiveScenario } from './run-interactive.js';
import { writeSampleFolder } from './sample-folder.js';

// Re-makes test/fixtures/real/2.1.332-interactive/<scenario>/ from interactive runs of the real CLI in tmux:
//   npx vite-node test/harness/make-interactive-fixtures.ts [scenario ...]
// Each runs in /tmp/ccotel-interactive/<scenario>/{home,project,hooks}; files are byte copies.

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), '../fixtures/real/2.1.332-interactive');
const RUN_ROOT = '/tmp/ccotel-interactive';

async function makeFixture(name: string): Promise<void> {
  const scenario = interactiveScenarioNamed(name);
  const outcome = await runInteractiveScenario(scenario, join(RUN_ROOT, name));
  // A CLI that switches sessions in /resume also starts (and ends) one of its own with no transcript.
  const sessionIds = readdirSync(join(outcome.home, '.claude', 'projects'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.jsonl') && !f.includes('subagents'))
    .map((f) => basename(f, '.jsonl'));
  const out = join(FIXTURES, name);
  writeSampleFolder(out, {
    home: outcome.home,
    hookDir: outcome.hookDir,
    telemetry: outcome.telemetry,
    requests: [outcome.requests],
    expectations: {
      scenario: scenario.name,
      description: scenario.description,
      home: outcome.home,
      projectDir: outcome.projectDir,
      sessions: sessionIds.map((sessionId) => ({ sessionId, ...outcome.expectation })),
      blocks: scriptedBlocks(outcome.turns),
      exitStatuses: outcome.exitStatuses,
    },
  });
  writeFileSync(join(out, 'screens.txt'), outcome.screens.map((s, i) => `--- end of turn ${i + 1}\n${s.trimEnd()}\n`).join(''));
  console.log(`${name}: sessions=${sessionIds.join(',')} requests=${outcome.requests.length} unused=${outcome.unusedSteps} exits=${outcome.exitStatuses.join(',')}`);
  if (outcome.unusedSteps > 0) console.warn(`  WARNING ${name}: ${outcome.unusedSteps} scripted steps were never requested`);
}

const problem = await interactiveProblem();
if (problem) {
  console.error(problem);
  process.exit(1);
}
const names = process.argv.slice(2);
for (const name of names.length ? names : INTERACTIVE_SCENARIOS.map((s) => s.name)) await makeFixture(name);
