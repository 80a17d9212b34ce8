import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { CLAUDE_BINARY, claudeBinaryProblem, claudeEnv, type ClaudeRunOptions } from './run-claude.js';

// Drives the real Claude Code CLI interactively: the TUI runs in a pane of a private tmux server (its own
// socket, so no other tmux is touched), with the same clean environment, model server and telemetry as
// print mode. A test sends keys and waits for text on the screen; every wait is bounded.

const run = promisify(execFile);

/** Why tmux cannot drive the CLI here, or undefined when it can. */
export async function interactiveProblem(): Promise<string | undefined> {
  const binary = claudeBinaryProblem();
  if (binary) return binary;
  try {
    await run('tmux', ['-V']);
    return undefined;
  } catch {
    return 'tmux is not installed (the interactive harness runs Claude Code in a tmux pane)';
  }
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

export interface WaitOptions {
  timeoutMs?: number;
  /** Wait for the text to be gone instead. */
  absent?: boolean;
}

export interface InteractiveClaude {
  /** The visible screen, as plain text. */
  screen(): Promise<string>;
  /** Polls the screen until `pattern` shows (or is gone); throws with the last screen after the timeout. */
  waitFor(pattern: string | RegExp, options?: WaitOptions): Promise<string>;
  /** tmux key names: `Enter`, `Escape`, `Up`, `BTab` (Shift+Tab), `C-c`… */
  press(...keys: string[]): Promise<void>;
  /** Types text literally (no key names), without Enter. */
  type(text: string): Promise<void>;
  /** Types a prompt (or slash command) and sends it. */
  submit(text: string): Promise<void>;
  /** Answers "Yes" to "Do you want to use this API key?" and waits for the prompt box. */
  acceptApiKey(): Promise<void>;
  /** Shift+Tab until the footer shows `mode` (a pattern of the mode's label). */
  cycleModeTo(mode: RegExp): Promise<void>;
  /** The CLI's exit status once it has exited, undefined while it runs. */
  exitStatus(): Promise<number | undefined>;
  /** Waits for the CLI to exit by itself (after /exit). */
  waitForExit(timeoutMs?: number): Promise<number>;
  /** Stops the pane and the private tmux server. */
  kill(): Promise<void>;
}

const POLL_MS = 150;
const DEFAULT_WAIT_MS = 30_000;

/** Starts `claude` in a fresh tmux pane; the returned handle drives it. */
export async function startInteractive(options: InteractiveOptions): Promise<InteractiveClaude> {
  const problem = await interactiveProblem();
  if (problem) throw new Error(problem);
  const socket = `ccotel-${process.pid}-${randomBytes(4).toString('hex')}`;
  const tmux = (...args: string[]) => run('tmux', ['-L', socket, '-f', '/dev/null', ...args]).then((r) => r.stdout);
  // TERM is the one variable the TUI needs that print mode does not.
  const env = { ...claudeEnv(options), TERM: 'xterm-256color' };
  const command = ['env', '-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), CLAUDE_BINARY, ...(options.args ?? [])];
  const size = ['-x', String(options.columns ?? 150), '-y', String(options.rows ?? 50)];
  // remain-on-exit keeps the pane (and its exit status) after the CLI quits.
  await tmux('new-session', '-d', '-s', 'claude', ...size, '-c', options.projectDir, '--', ...command, ';', 'set-option', '-g', 'remain-on-exit', 'on');

  const screen = () => tmux('capture-pane', '-p', '-t', 'claude');
  const paneState = async () => (await tmux('display-message', '-p', '-t', 'claude', '#{pane_dead} #{pane_dead_status}')).trim().split(' ');

  async function waitFor(pattern: string | RegExp, wait: WaitOptions = {}): Promise<string> {
    const deadline = Date.now() + (wait.timeoutMs ?? DEFAULT_WAIT_MS);
    const matches = (text: string) => (typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text));
    let last = '';
    for (;;) {
      last = await screen();
      if (matches(last) !== (wait.absent === true)) return last;
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${wait.absent ? 'the end of ' : ''}${String(pattern)} on the Claude Code screen:\n${last}`);
      }
      await sleep(POLL_MS);
    }
  }

  const press = async (...keys: string[]) => void (await tmux('send-keys', '-t', 'claude', ...keys));
  const type = async (text: string) => void (await tmux('send-keys', '-t', 'claude', '-l', text));
  const exitStatus = async () => {
    const [dead, status] = await paneState();
    return dead === '1' ? Number(status) : undefined;
  };

  return {
    screen,
    waitFor,
    press,
    type,
    async submit(text) {
      await type(text);
      // A short pause: the TUI treats text and Enter arriving in one read as a paste.
      await sleep(300);
      await press('Enter');
    },
    async acceptApiKey() {
      await waitFor('Do you want to use this API key?');
      await press('Up');
      await sleep(200);
      await press('Enter');
      await waitFor('Do you want to use this API key?', { absent: true });
    },
    async cycleModeTo(mode) {
      for (let tries = 0; tries < 6; tries++) {
        if (mode.test(await screen())) return;
        await press('BTab');
        await sleep(400);
      }
      await waitFor(mode, { timeoutMs: 2000 });
    },
    exitStatus,
    async waitForExit(timeoutMs = DEFAULT_WAIT_MS) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const status = await exitStatus();
        if (status !== undefined) return status;
        if (Date.now() > deadline) throw new Error(`Claude Code did not exit within ${timeoutMs} ms:\n${await screen()}`);
        await sleep(POLL_MS);
      }
    },
    async kill() {
      await tmux('kill-server').catch(() => undefined);
    },
  };
}
