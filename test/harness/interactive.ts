import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CLAUDE_BINARY, claudeBinaryProblem, claudeEnv, type ClaudeRunOptions } from './run-claude.js';
import { startPane, tmuxProblem, type TmuxPane } from './tmux-pane.js';

// Drives the real Claude Code CLI interactively: the TUI runs in a tmux pane (tmux-pane.ts), with the same clean
// environment, model server and telemetry as print mode.

/** Why tmux cannot drive the CLI here, or undefined when it can. */
export async function interactiveProblem(): Promise<string | undefined> {
  const binary = claudeBinaryProblem();
  return binary ?? (await tmuxProblem());
}

/**
 * What a first start would ask and the harness answers once for all: onboarding done, and the project's
 * folder trusted (`~/.claude.json`). The custom API key prompt is left for the session to answer.
 */
export function prepareInteractiveHome(home: string, projectDir: string): void {
  mkdirSync(home, { recursive: true });
  const config = { hasCompletedOnboarding: true, projects: { [projectDir]: { hasTrustDialogAccepted: true } } };
  writeFileSync(join(home, '.claude.json'), JSON.stringify(config, null, 2) + '\n');
}

export interface InteractiveOptions extends Pick<ClaudeRunOptions, 'home' | 'projectDir' | 'modelUrl' | 'otlpUrl' | 'env'> {
  /** Extra CLI arguments (e.g. `--resume <id>`, `--permission-mode default`). */
  args?: string[];
  columns?: number;
  rows?: number;
}

export type { ScreenPattern, WaitOptions } from './tmux-pane.js';

export interface InteractiveClaude extends TmuxPane {
  /** Types a prompt (or slash command) and sends it. */
  submit(text: string): Promise<void>;
  /** Answers "Yes" to "Do you want to use this API key?" (when asked) and waits for the prompt box. */
  acceptApiKey(): Promise<void>;
  /** Shift+Tab until the footer shows `mode` (a pattern of the mode's label). */
  cycleModeTo(mode: RegExp): Promise<void>;
}

const API_KEY_PROMPT = 'Do you want to use this API key?';
/** The footer under the prompt box, shown once the TUI takes input. */
const FOOTER = /shift\+tab to cycle|\? for shortcuts/;

/** The footer line that names the permission mode. */
function modeFooter(screen: string): string {
  return screen.split('\n').findLast((line) => / on( \(|\s·)/.test(line)) ?? '';
}

/** The last line that starts with the prompt mark: the input box while it is shown. */
function lastInputLine(screen: string): string {
  return (screen.split('\n').findLast((line) => line.startsWith('❯')) ?? '').trimEnd();
}

/** Starts `claude` in a fresh tmux pane; the returned handle drives it. */
export async function startInteractive(options: InteractiveOptions): Promise<InteractiveClaude> {
  const problem = await interactiveProblem();
  if (problem) throw new Error(problem);
  // TERM is the one variable the TUI needs that print mode does not.
  const env = { ...claudeEnv(options), TERM: 'xterm-256color' };
  const pane = await startPane({ command: [CLAUDE_BINARY, ...(options.args ?? [])], env, cwd: options.projectDir, label: 'Claude Code', columns: options.columns, rows: options.rows });
  const { screen, waitFor, press, type } = pane;

  return {
    ...pane,
    async submit(text) {
      await type(text);
      await waitFor(text);
      // Enter can be swallowed while the TUI is busy redrawing: press it until the input box lets go of the text.
      for (let tries = 0; tries < 5; tries++) {
        await press('Enter');
        try {
          await waitFor((screen) => lastInputLine(screen) !== `❯ ${text}`, { timeoutMs: 2000 });
          return;
        } catch {
          // still in the box: press again
        }
      }
      throw new Error(`Claude Code did not take the input ${JSON.stringify(text)}:\n${await screen()}`);
    },
    async acceptApiKey() {
      // Asked once per HOME: a later start remembers the answer and shows the prompt box straight away.
      const first = await waitFor((text) => text.includes(API_KEY_PROMPT) || FOOTER.test(text));
      if (!first.includes(API_KEY_PROMPT)) return;
      await press('Up');
      await sleep(200);
      await press('Enter');
      await waitFor(FOOTER);
    },
    async cycleModeTo(mode) {
      for (let presses = 0; presses < 6; presses++) {
        const footer = modeFooter(await screen());
        if (mode.test(footer)) return;
        await press('BTab');
        await waitFor((text) => modeFooter(text) !== footer, { timeoutMs: 10_000 });
      }
      throw new Error(`Shift+Tab never reached ${String(mode)}:\n${await screen()}`);
    },
  };
}
