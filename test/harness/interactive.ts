import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

/** Text on the screen, a pattern of it, or a test of the whole screen. */
export type ScreenPattern = string | RegExp | ((screen: string) => boolean);

export interface WaitOptions {
  timeoutMs?: number;
  /** Wait for the text to be gone instead. */
  absent?: boolean;
}

export interface InteractiveClaude {
  /** The visible screen, as plain text. */
  screen(): Promise<string>;
  /** Polls the screen until `pattern` shows (or is gone); throws with the last screen after the timeout. */
  waitFor(pattern: ScreenPattern, options?: WaitOptions): Promise<string>;
  /** tmux key names: `Enter`, `Escape`, `Up`, `BTab` (Shift+Tab), `C-c`… */
  press(...keys: string[]): Promise<void>;
  /** Types text literally (no key names), without Enter. */
  type(text: string): Promise<void>;
  /** Types a prompt (or slash command) and sends it. */
  submit(text: string): Promise<void>;
  /** Answers "Yes" to "Do you want to use this API key?" (when asked) and waits for the prompt box. */
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
/** Generous: the CLI starts in a few seconds on an idle machine, much slower on a loaded one. */
const DEFAULT_WAIT_MS = 60_000;
const API_KEY_PROMPT = 'Do you want to use this API key?';
/** The footer under the prompt box, shown once the TUI takes input. */
const FOOTER = /shift\+tab to cycle|\? for shortcuts/;

/** Runs `command` in a shell that writes its exit status to `statusFile` (renamed into place: whole or absent). */
function recordingExitStatus(command: string[], statusFile: string): string[] {
  const script = '"$@"; echo $? > "$STATUS.part" && mv "$STATUS.part" "$STATUS"';
  return ['env', `STATUS=${statusFile}`, 'sh', '-c', script, 'sh', ...command];
}

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
  const socket = `ccotel-${process.pid}-${randomBytes(4).toString('hex')}`;
  const tmux = (...args: string[]) => run('tmux', ['-L', socket, '-f', '/dev/null', ...args]).then((r) => r.stdout);
  // TERM is the one variable the TUI needs that print mode does not.
  const env = { ...claudeEnv(options), TERM: 'xterm-256color' };
  const command = ['env', '-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), CLAUDE_BINARY, ...(options.args ?? [])];
  const size = ['-x', String(options.columns ?? 150), '-y', String(options.rows ?? 50)];
  // tmux does not always record a dead pane's status (seen under load): a wrapping shell writes it to a file.
  const statusFile = join(tmpdir(), `${socket}.exit-status`);
  await tmux('new-session', '-d', '-s', 'claude', ...size, '-c', options.projectDir, '--', ...recordingExitStatus(command, statusFile));

  const screen = () => tmux('capture-pane', '-p', '-t', 'claude');

  async function waitFor(pattern: ScreenPattern, wait: WaitOptions = {}): Promise<string> {
    const deadline = Date.now() + (wait.timeoutMs ?? DEFAULT_WAIT_MS);
    const matches = (text: string) =>
      typeof pattern === 'string' ? text.includes(pattern) : typeof pattern === 'function' ? pattern(text) : pattern.test(text);
    let last = '';
    for (;;) {
      last = await screen();
      if (matches(last) !== (wait.absent === true)) return last;
      if (Date.now() > deadline) {
        const what = typeof pattern === 'function' ? 'a screen change' : String(pattern);
        throw new Error(`timed out waiting for ${wait.absent ? 'the end of ' : ''}${what} on the Claude Code screen:\n${last}`);
      }
      await sleep(POLL_MS);
    }
  }

  const press = async (...keys: string[]) => void (await tmux('send-keys', '-t', 'claude', ...keys));
  const type = async (text: string) => void (await tmux('send-keys', '-t', 'claude', '-l', text));
  // The shell's `$?`: a CLI ended by a signal reads as 128 + signal.
  const exitStatus = async () => (existsSync(statusFile) ? Number(readFileSync(statusFile, 'utf8').trim()) : undefined);

  return {
    screen,
    waitFor,
    press,
    type,
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
    exitStatus,
    // SessionEnd hooks and the last telemetry export come after the goodbye text.
    async waitForExit(timeoutMs = 2 * DEFAULT_WAIT_MS) {
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
      rmSync(statusFile, { force: true });
    },
  };
}
