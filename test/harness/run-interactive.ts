import { setTimeout as sleep } from 'node:timers/promises';
import type { InteractiveClaude } from './interactive.js';
import { runInteractiveSession, sessionDirs, type DriveContext, type InteractiveOutcome } from './interactive-session.js';
import { sessionScriptOf, type InteractiveScenario, type InteractiveTurn } from './interactive-scenarios.js';
import { expectationOf, type SessionExpectation } from './scenarios.js';

// Plays an interactive scenario: per turn, switch mode, type the prompt, answer what Claude Code asks,
// wait until the turn is over; a resumed turn quits and picks the session in a new CLI's /resume.

export interface InteractiveScenarioOutcome extends InteractiveOutcome {
  turns: InteractiveTurn[];
  expectation: SessionExpectation;
  /** The screen at the end of each turn (what the user saw). */
  screens: string[];
}

/** The TUI shows this while a turn is running. */
const BUSY = /esc to interrupt/i;

/** A turn is over when the model has been asked for its steps and the TUI is idle again. */
async function waitForTurnEnd(claude: InteractiveClaude, context: DriveContext, steps: number): Promise<string> {
  const deadline = Date.now() + 60_000;
  const answered = () => context.requests.filter((r) => r.handledAs.kind === 'step').length;
  while (answered() < steps) {
    if (Date.now() > deadline) throw new Error(`the model got ${answered()} of ${steps} requests:\n${await claude.screen()}`);
    await sleep(150);
  }
  await claude.waitFor(BUSY, { absent: true, timeoutMs: 60_000 });
  // Stop hooks and the transcript's last rows follow the idle screen by a moment.
  await sleep(1000);
  return claude.screen();
}

async function quit(claude: InteractiveClaude): Promise<void> {
  await claude.submit('/exit');
  await claude.waitForExit();
}

/** A new `claude`, then `/resume` and the most recent session (the picker lists it first). */
async function resumeInNewCli(context: DriveContext, text: string): Promise<InteractiveClaude> {
  const claude = await context.restart();
  await claude.submit('/resume');
  await claude.waitFor(text);
  await claude.press('Enter');
  await claude.waitFor(/Resume Session|to search/i, { absent: true });
  return claude;
}

export async function runInteractiveScenario(scenario: InteractiveScenario, root: string, options: { otlpUrl?: string } = {}): Promise<InteractiveScenarioOutcome> {
  const turns = scenario.turns({ projectDir: sessionDirs(root).projectDir });
  const screens: string[] = [];
  const outcome = await runInteractiveSession({
    root,
    steps: turns.flatMap((turn) => turn.steps),
    settings: scenario.settings,
    projectFiles: scenario.projectFiles,
    otlpUrl: options.otlpUrl,
    async drive(first, context) {
      let claude = first;
      let steps = 0;
      for (const [i, turn] of turns.entries()) {
        if (turn.resume) {
          await quit(claude);
          claude = await resumeInNewCli(context, turns[i - 1].prompt);
        }
        if (turn.mode) await claude.cycleModeTo(turn.mode);
        await claude.submit(turn.prompt);
        await turn.answer?.(claude);
        steps += turn.steps.length;
        screens.push(await waitForTurnEnd(claude, context, steps));
      }
      await quit(claude);
    },
  });
  return { ...outcome, turns, expectation: expectationOf(sessionScriptOf(turns)), screens };
}
