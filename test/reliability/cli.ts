// Run the built CLI (`npm run build` first) as a child process with its own HOME, state and config dirs.
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { gunzipSync } from 'node:zlib';

/** The built CLI; CCOTEL_TEST_CLI names another build (e.g. an older commit's, to see a test fail there). */
export const CLI = resolve(process.env.CCOTEL_TEST_CLI ?? 'dist/sidecar/src/cli.js');

export function assertBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
}

/** An isolated environment: nothing of the real home is read. */
export function cliEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    // The test run's own temporary directory (test/global-tmp.ts): a sidecar whose state dir refuses its status puts
    // it in <tmp>/ccotel-<uid>, which must not outlive the run in the system's.
    TMPDIR: process.env.TMPDIR,
    CLAUDE_CONFIG_DIR: join(home, 'claude'),
    CCOTEL_STATE_DIR: join(home, 'state'),
    CCOTEL_DATA_DIR: join(home, 'data'),
    CCOTEL_CONFIG: 'none',
    CCOTEL_RAW_TTL_DAYS: '0',
    // Not this machine's managed policy (/etc/claude-code).
    CCOTEL_MANAGED_SETTINGS_DIR: join(home, 'managed-settings'),
    // The receiver's default port is one per machine: a test that wants it names a free one.
    CCOTEL_NATIVE_TELEMETRY_PORT: '0',
    ...extra,
  };
}

export interface ProcessResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * A child run to its end without blocking this process: a test worker blocked for a minute (a synchronous
 * child on a loaded machine) misses its runner's replies, and vitest fails the run.
 */
export function runProcess(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000, started?: (child: ChildProcess) => void): Promise<ProcessResult> {
  return new Promise((resolveRun) => {
    const child = execFile(command, args, { env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 256 << 20 }, (error, stdout, stderr) => {
      const status = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolveRun({ status, stdout, stderr });
    });
    started?.(child);
  });
}

/** The built CLI, run to its end (see runProcess). */
export function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<ProcessResult> {
  return runProcess(process.execPath, [CLI, ...args], env, timeoutMs);
}

/** Start `ccotel run` (of `cli`, by default the built one); stderr is collected in `output`. */
export function startRun(args: string[], env: NodeJS.ProcessEnv, cli = CLI): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [cli, 'run', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += String(chunk)));
  child.stderr!.on('data', (chunk) => (output += String(chunk)));
  const exited = new Promise<number | null>((resolveExit) => child.on('exit', (code) => resolveExit(code)));
  return { child, output: () => output, exited };
}

/** Stop a `ccotel run` started by startRun (if it was) the way Ctrl-C does; its exit code. */
export async function stopRun(run: ReturnType<typeof startRun> | undefined): Promise<number | null | undefined> {
  run?.child.kill('SIGTERM');
  return run?.exited;
}

/** The transcript source of `ccotel status --json` (the first checkpoint set). */
export interface TranscriptStatus {
  running: boolean;
  watcher?: string;
  sink: { state: string };
  filesFollowed: number;
  bytesBehind: number;
}

/** Undefined also when `ccotel status` gave no answer (e.g. timed out on a loaded machine): callers poll again. */
export async function transcriptStatus(env: NodeJS.ProcessEnv, store: string): Promise<TranscriptStatus | undefined> {
  const result = await runCli(['status', '--json', '--store', store], env);
  return result.status === 0 ? JSON.parse(result.stdout).sources[0] : undefined;
}

/** One number from `ccotel query … --format TSV`. */
export async function queryNumber(sql: string, env: NodeJS.ProcessEnv, store: string): Promise<number> {
  const result = await runCli(['query', sql, '--format', 'TSV', '--store', store], env);
  if (result.status !== 0) throw new Error(`query failed: ${result.stderr}`);
  return Number(result.stdout.trim());
}

/** A client of the query endpoint a running `ccotel run` serves for its embedded store (from the lock file). */
export function endpointClient(store: string): ClickHouseClient {
  const lock = JSON.parse(readFileSync(join(store, 'ccotel.lock'), 'utf8')) as { endpoint: { url: string; token: string } };
  // No kept-alive sockets: one the endpoint closed meanwhile would fail the next poll with ECONNRESET.
  return createClient({ url: lock.endpoint.url, username: 'ccotel', password: lock.endpoint.token, keep_alive: { enabled: false } });
}

export interface OtlpStub {
  url: string;
  /** Request bodies received so far (decompressed). */
  bodies: Buffer[];
  close(): void;
}

/** An OTLP/HTTP receiver that accepts everything (an empty protobuf answer means success) and keeps the bodies. */
export async function startOtlpStub(): Promise<OtlpStub> {
  const bodies: Buffer[] = [];
  const server = createServer((request, response) => {
    void buffer(request).then((body) => {
      bodies.push(request.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body);
      response.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, close: () => server.close() };
}

/** Peak resident set (VmHWM) of a running process, in MB. */
export function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match![1]) / 1024;
}
