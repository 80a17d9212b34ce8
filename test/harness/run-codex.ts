import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { descendsFrom } from '../../sidecar/src/records/process-scan.js';
import { scanProcesses } from '../../sidecar/src/sources/process-watcher.js';

// Runs the real Codex CLI (`codex exec`) offline: CODEX_HOME in a temp dir whose config.toml points the model
// provider at the scripted Responses API (responses-server.ts), in a temp project, without sandbox (the tool's
// commands are the scenario's own, and a sandbox needs kernel features a container may lack).

export interface CodexRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export const CODEX_MODEL = 'gpt-5.1-codex';

/** Writes `$codexHome/config.toml` so every request goes to `baseUrl`. */
export function writeCodexConfig(codexHome: string, baseUrl: string): void {
  mkdirSync(codexHome, { recursive: true });
  const lines = [
    `model = "${CODEX_MODEL}"`,
    'model_provider = "x"',
    'approval_policy = "never"',
    '',
    '[model_providers.x]',
    'name = "scripted"',
    `base_url = "${baseUrl}"`,
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
  ];
  writeFileSync(join(codexHome, 'config.toml'), lines.join('\n'));
}

export interface CodexExec {
  binary: string;
  codexHome: string;
  cwd: string;
  prompt: string;
  /** Resume this thread (`codex exec resume <id>`) instead of starting one. */
  resume?: string;
  /** Fork this thread (`codex exec fork <id>`, 0.171 on) into a new one. */
  fork?: string;
  timeoutMs?: number;
  /**
   * Interrupt the run (SIGINT, as Ctrl-C) this long after its command runs: once Codex has printed that the command
   * started and a process of it is seen under Codex (on a loaded machine the print came first, the interrupt found
   * no command yet, and Codex recorded a call that never ran).
   */
  interruptAfterMs?: number;
}

/** Whether a command Codex started runs under `codexPid` (a process whose environment names a Codex thread). */
function runsCommand(codexPid: number): boolean {
  const scan = scanProcesses();
  return [...scan.processes.values()].some((process) => process.pid !== codexPid && descendsFrom(scan, process.pid, codexPid));
}

export function runCodex(run: CodexExec): Promise<CodexRun> {
  const args = ['exec', ...(run.resume ? ['resume', run.resume] : []), ...(run.fork ? ['fork', run.fork] : []), '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', run.prompt];
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: run.codexHome, CODEX_HOME: run.codexHome, TMPDIR: process.env.TMPDIR, LANG: 'C.UTF-8', RUST_LOG: 'error' };
  return new Promise((resolve, reject) => {
    const child = spawn(run.binary, args, { cwd: run.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let interrupt: NodeJS.Timeout | undefined;
    const interruptOnceRunning = (delayMs: number) => {
      interrupt = setTimeout(() => {
        if (runsCommand(child.pid!)) interrupt = setTimeout(() => child.kill('SIGINT'), delayMs);
        else interruptOnceRunning(delayMs);
      }, 50);
    };
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (run.interruptAfterMs !== undefined && interrupt === undefined && /"type":"item\.started","item":\{[^}]*"type":"command_execution"/.test(stdout)) {
        interruptOnceRunning(run.interruptAfterMs);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), run.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      clearTimeout(interrupt);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Every rollout file under `$codexHome/sessions`, oldest first by name (they are named by start time). */
export function rolloutFiles(codexHome: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names.sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.startsWith('rollout-') && name.endsWith('.jsonl')) found.push(path);
    }
  };
  walk(join(codexHome, 'sessions'));
  return found;
}

/** The thread id `codex exec --json` printed (its `thread.started` event). */
export function threadIdOf(stdout: string): string | undefined {
  for (const line of stdout.split('\n')) {
    try {
      const event = JSON.parse(line) as { type?: string; thread_id?: string };
      if (event.type === 'thread.started' && event.thread_id) return event.thread_id;
    } catch {
      // not an event line
    }
  }
  return undefined;
}
