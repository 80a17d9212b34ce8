import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

// A command in a pane of a private tmux server (its own socket, so no other tmux is touched): what an interactive
// CLI (Claude Code's, Codex's TUI) is driven through. A test sends keys and waits for text on the screen; every
// wait is bounded.

const run = promisify(execFile);

/** Text on the screen, a pattern of it, or a test of the whole screen. */
export type ScreenPattern = string | RegExp | ((screen: string) => boolean);

export interface WaitOptions {
  timeoutMs?: number;
  /** Wait for the text to be gone instead. */
  absent?: boolean;
}

export interface TmuxPane {
  /** The visible screen, as plain text. */
  screen(): Promise<string>;
  /** Polls the screen until `pattern` shows (or is gone); throws with the last screen after the timeout. */
  waitFor(pattern: ScreenPattern, options?: WaitOptions): Promise<string>;
  /** tmux key names: `Enter`, `Escape`, `Up`, `BTab` (Shift+Tab), `C-c`… */
  press(...keys: string[]): Promise<void>;
  /** Types text literally (no key names), without Enter. */
  type(text: string): Promise<void>;
  /** The command's exit status once it has exited, undefined while it runs. */
  exitStatus(): Promise<number | undefined>;
  /** Waits for the command to exit by itself. */
  waitForExit(timeoutMs?: number): Promise<number>;
  /** Stops the pane and the private tmux server. */
  kill(): Promise<void>;
}

export interface PaneOptions {
  /** The command and its arguments, run with exactly `env` (nothing inherited). */
  command: string[];
  env: Record<string, string>;
  cwd: string;
  /** Names the program in timeout messages. */
  label: string;
  columns?: number;
  rows?: number;
}

const POLL_MS = 150;
/** Generous: a CLI starts in a few seconds on an idle machine, much slower on a loaded one. */
export const DEFAULT_WAIT_MS = 60_000;

/** Why tmux cannot run here, or undefined when it can. */
export async function tmuxProblem(): Promise<string | undefined> {
  try {
    await run('tmux', ['-V']);
    return undefined;
  } catch {
    return 'tmux is not installed (the interactive harness runs the CLI in a tmux pane)';
  }
}

/** Runs `command` in a shell that writes its exit status to `statusFile` (renamed into place: whole or absent). */
function recordingExitStatus(command: string[], statusFile: string): string[] {
  const script = '"$@"; echo $? > "$STATUS.part" && mv "$STATUS.part" "$STATUS"';
  return ['env', `STATUS=${statusFile}`, 'sh', '-c', script, 'sh', ...command];
}

export async function startPane(options: PaneOptions): Promise<TmuxPane> {
  const socket = `ccotel-${process.pid}-${randomBytes(4).toString('hex')}`;
  const tmux = (...args: string[]) => run('tmux', ['-L', socket, '-f', '/dev/null', ...args]).then((r) => r.stdout);
  const command = ['env', '-i', ...Object.entries(options.env).map(([k, v]) => `${k}=${v}`), ...options.command];
  const size = ['-x', String(options.columns ?? 150), '-y', String(options.rows ?? 50)];
  // tmux does not always record a dead pane's status (seen under load): a wrapping shell writes it to a file.
  const statusFile = join(tmpdir(), `${socket}.exit-status`);
  await tmux('new-session', '-d', '-s', 'cli', ...size, '-c', options.cwd, '--', ...recordingExitStatus(command, statusFile));

  const screen = () => tmux('capture-pane', '-p', '-t', 'cli');
  // The shell's `$?`: a CLI ended by a signal reads as 128 + signal.
  const exitStatus = async () => (existsSync(statusFile) ? Number(readFileSync(statusFile, 'utf8').trim()) : undefined);

  return {
    screen,
    async waitFor(pattern, wait = {}) {
      const deadline = Date.now() + (wait.timeoutMs ?? DEFAULT_WAIT_MS);
      const matches = (text: string) =>
        typeof pattern === 'string' ? text.includes(pattern) : typeof pattern === 'function' ? pattern(text) : pattern.test(text);
      for (;;) {
        const last = await screen();
        if (matches(last) !== (wait.absent === true)) return last;
        if (Date.now() > deadline) {
          const what = typeof pattern === 'function' ? 'a screen change' : String(pattern);
          throw new Error(`timed out waiting for ${wait.absent ? 'the end of ' : ''}${what} on the ${options.label} screen:\n${last}`);
        }
        await sleep(POLL_MS);
      }
    },
    press: async (...keys) => void (await tmux('send-keys', '-t', 'cli', ...keys)),
    type: async (text) => void (await tmux('send-keys', '-t', 'cli', '-l', text)),
    exitStatus,
    async waitForExit(timeoutMs = 2 * DEFAULT_WAIT_MS) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const status = await exitStatus();
        if (status !== undefined) return status;
        if (Date.now() > deadline) throw new Error(`${options.label} did not exit within ${timeoutMs} ms:\n${await screen()}`);
        await sleep(POLL_MS);
      }
    },
    async kill() {
      await tmux('kill-server').catch(() => undefined);
      rmSync(statusFile, { force: true });
    },
  };
}
