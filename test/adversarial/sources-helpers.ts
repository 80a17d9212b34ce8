// Shared by the sources-* adversarial tests: a temporary HOME with a transcript root, the built CLI
// exporting OTLP-only to a stub (so no embedded engine weighs on the memory figures), and what it wrote.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, cliEnv, peakRssMb, startOtlpStub, startRun, transcriptStatus, type OtlpStub } from '../reliability/cli.js';
import { appendTurns, sessionPath, waitFor } from '../reliability/transcripts.js';

export interface HostileHome {
  home: string;
  env: NodeJS.ProcessEnv;
  /** `<home>/claude/projects`: the transcript root. */
  projects: string;
  stub: OtlpStub;
  /** The transcripts written by `writeSession`, with their turn counts. */
  sessions: Map<string, number>;
  /** Sidecars started for this home: killed by `cleanup` if a failed test left them running. */
  sidecars: ChildProcess[];
  cleanup(): void;
}

export async function hostileHome(prefix: string): Promise<HostileHome> {
  const home = mkdtempSync(join(tmpdir(), `ccotel-${prefix}-`));
  const stub = await startOtlpStub();
  const sidecars: ChildProcess[] = [];
  return {
    home,
    env: cliEnv(home),
    projects: join(home, 'claude', 'projects'),
    stub,
    sessions: new Map(),
    sidecars,
    cleanup: () => {
      for (const child of sidecars) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      stub.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Append `turns` complete turns (an hour old) to session `id` of `project`; returns its path. */
export function writeSession(h: HostileHome, id: string, turns: number, project = '-home-dev-project'): string {
  const from = h.sessions.get(id) ?? 0;
  const path = sessionPath(join(h.home, 'claude'), id, project);
  appendTurns(path, id, from, from + turns, Date.now() - 3_600_000);
  h.sessions.set(id, from + turns);
  return path;
}

/** Whether any OTLP body received holds `marker`. */
export function exported(h: HostileHome, marker: string): boolean {
  return h.stub.bodies.some((body) => body.includes(marker));
}

export const OTLP_ONLY = (h: HostileHome) => ['--store', 'none', '--otlp', h.stub.url];

/** `ccotel run` OTLP-only, once it has caught up on `files` files. */
export async function runCaughtUp(h: HostileHome, files: number, extraArgs: string[] = []): Promise<ReturnType<typeof startRun>> {
  const sidecar = startRun([...OTLP_ONLY(h), ...extraArgs], h.env);
  h.sidecars.push(sidecar.child);
  await waitFor(
    `run to catch up on ${files} files`,
    async () => {
      const source = await transcriptStatus(h.env, 'none');
      return source?.filesFollowed === files && source.bytesBehind === 0 && source.sink.state === 'ok';
    },
    90_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message}; output: ${sidecar.output()}`);
  });
  return sidecar;
}

/** The exit code, or 'hung' (and killed) when the process did not exit within `timeoutMs`. */
async function exitOrKill(child: ChildProcess, exited: Promise<number | null>, timeoutMs: number): Promise<number | null | 'hung'> {
  const timeout = new Promise<'hung'>((resolveTimeout) => setTimeout(() => resolveTimeout('hung'), timeoutMs).unref());
  const code = await Promise.race([exited, timeout]);
  if (code === 'hung') child.kill('SIGKILL');
  return code;
}

/** SIGTERM, then the exit code. */
export function terminate(sidecar: ReturnType<typeof startRun>, timeoutMs = 30_000): Promise<number | null | 'hung'> {
  sidecar.child.kill('SIGTERM');
  return exitOrKill(sidecar.child, sidecar.exited, timeoutMs);
}

/** Run a one-off CLI command to its end (or `timeoutMs`), sampling its peak memory. */
export async function runMeasured(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 120_000): Promise<{ code: number | null | 'hung'; stdout: string; stderr: string; peakRssMb: number }> {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk) => (stderr += String(chunk)));
  let peak = 0;
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, peakRssMb(child.pid!));
    } catch {
      // exited between samples
    }
  }, 50);
  const exited = new Promise<number | null>((resolveExit) => child.on('exit', (code) => resolveExit(code)));
  const code = await exitOrKill(child, exited, timeoutMs);
  clearInterval(sampler);
  return { code, stdout, stderr, peakRssMb: peak };
}
