import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { toolResults, toolVerdict } from '../../sidecar/src/processors/classify.js';
import { parseTranscriptLine } from '../../sidecar/src/processors/parse-transcript.js';
import { interactiveProblem } from './interactive.js';
import { interactiveScenarioNamed } from './interactive-scenarios.js';
import { runInteractiveScenario } from './run-interactive.js';
import { skipWithout } from '../helpers/real-parts.js';

// One interactive scenario, live: the real TUI in tmux, keys sent, every wait bounded. It checks that the
// driver still gets through a permission prompt of the pinned CLI, and that the row it writes for a "No" is
// the one the recorded samples (and the outcome rules) are built on.

const problem = await interactiveProblem();
if (problem) console.warn(`interactive harness: skipped: ${problem}`);

describe.skipIf(skipWithout(problem))('the real Claude Code TUI in tmux, deny scenario', () => {
  const root = mkdtempSync(join(tmpdir(), 'ccotel-interactive-test-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('answers "No" at the permission prompt; the result row says refused before it ran, by the user', async () => {
    const outcome = await runInteractiveScenario(interactiveScenarioNamed('deny'), root);

    expect(outcome.unusedSteps).toBe(0);
    expect(outcome.exitStatuses).toEqual([0]);
    expect(outcome.screens[0]).toContain('What should Claude do instead?');
    const events = outcome.hooks.map((h) => h.payload.hook_event_name).filter((name) => name !== 'MessageDisplay');
    expect(events).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PermissionRequest', 'SessionEnd']);
    const projects = join(outcome.home, '.claude', 'projects');
    const [transcript] = readdirSync(projects, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl'));
    const entries = readFileSync(join(projects, transcript), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(parseTranscriptLine)
      .flatMap((parsed) => (parsed.ok === true ? [parsed.entry] : []));
    const verdicts = entries.flatMap((entry) => toolResults(entry).map((block) => ({ beforeRun: entry.toolDenialBeforeRun, ...toolVerdict(block, entry) })));
    expect(verdicts).toEqual([{ beforeRun: true, outcome: 'denied', blockedBy: 'user' }]);
  }, 180_000);
});
