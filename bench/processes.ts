// What the benchmarks that time ccotel's commands share: a command timed from outside (wall, CPU, peak memory), and
// `ccotel run` serving a store on its endpoint while other commands ask it.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const repo = resolve(import.meta.dirname, '..', '..');
export const cli = join(repo, 'dist', 'sidecar', 'src', 'cli.js');
export const ccusage = join(repo, 'node_modules', 'ccusage', 'src', 'cli.js');

export interface Timed {
  seconds: number;
  /** User + system CPU of the process and its children (ccusage's launcher runs a native binary). */
  cpuSeconds: number;
  maxRssMb: number;
  stdout: string;
}

/** Run a command under /usr/bin/time for wall, CPU and peak memory. */
export function timed(command: string, commandArgs: string[], env: NodeJS.ProcessEnv): Timed {
  const started = performance.now();
  const result = spawnSync('/usr/bin/time', ['-f', '%U %S %M', command, ...commandArgs], { env, encoding: 'utf8', maxBuffer: 1 << 30 });
  const seconds = (performance.now() - started) / 1000;
  if (result.status !== 0) throw new Error(`${command} ${commandArgs.join(' ')} failed: ${result.stderr}`);
  const [user, system, rssKb] = result.stderr.trim().split('\n').pop()!.split(' ').map(Number);
  return { seconds, cpuSeconds: user + system, maxRssMb: rssKb / 1024, stdout: result.stdout };
}

const clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

/** CPU seconds (user + system) a running process has used so far. */
export function processCpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}

export interface RunningSidecar {
  pid: number;
  /** The store's query endpoint, as the lock file publishes it. */
  url: string;
  token: string;
  /** The environment `run` was started with: other commands given it find the same state. */
  env: NodeJS.ProcessEnv;
}

/**
 * `work` while `ccotel run` owns `store` and serves it on its loopback endpoint. The sidecar follows an empty
 * transcript root, so it only serves.
 */
export async function withRunningSidecar<T>(store: string, env: NodeJS.ProcessEnv, work: (sidecar: RunningSidecar) => Promise<T>): Promise<T> {
  const quiet = { ...env, CLAUDE_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'ccotel-bench-empty-')), CCOTEL_STATE_DIR: mkdtempSync(join(tmpdir(), 'ccotel-bench-state-')) };
  const sidecar = spawn(process.execPath, [cli, 'run', '--store', store], { env: quiet, stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    await new Promise<void>((resolveServing, reject) => {
      let output = '';
      sidecar.stderr.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('queries served on')) resolveServing();
      });
      sidecar.once('exit', () => reject(new Error(`ccotel run exited: ${output}`)));
    });
    const { url, token } = (JSON.parse(readFileSync(join(store, 'ccotel.lock'), 'utf8')) as { endpoint: { url: string; token: string } }).endpoint;
    return await work({ pid: sidecar.pid!, url, token, env: quiet });
  } finally {
    sidecar.kill('SIGTERM');
    await new Promise((resolveExit) => sidecar.once('exit', resolveExit));
    for (const dir of [quiet.CLAUDE_CONFIG_DIR, quiet.CCOTEL_STATE_DIR]) rmSync(dir, { recursive: true, force: true });
  }
}
