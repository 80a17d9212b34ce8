// `ccotel run` (the built CLI, a child process) following a made-up user's HOME live, with ccotel's hooks and
// shell integration installed there the way a user installs them, and what it found read back by SQL.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { installCcotelIntegration } from '../e2e/scenario-runs.js';
import { assertBuilt, runCli, startRun } from '../reliability/cli.js';

/** One `ccotel.failure_mode.detected` record, with the fields a detection names. */
export interface DetectionRow {
  mode: string;
  sessionId: string;
  toolUseId: string;
  pid: number | undefined;
  port: number | undefined;
  cause: string;
  commandLine: string;
}

export interface LiveSidecar {
  home: string;
  store: string;
  detections(): Promise<DetectionRow[]>;
  /** `ccotel.session.state_changed` records: session id → states in order. */
  sessionStates(): Promise<Map<string, string[]>>;
  stop(): Promise<void>;
}

/** Short, so scenarios do not wait on it; events ask for scans of their own besides. */
export const SCAN_INTERVAL_MS = 1_000;

export interface LiveSidecarOptions {
  /** The made-up user's HOME is `<root>/home`. */
  root: string;
  /** Default: a new embedded store in `<root>/store`. */
  store?: string;
  /** ccotel's config file; default: none. */
  configFile?: string;
}

export async function startLiveSidecar({ root, store = join(root, 'store'), configFile = 'none' }: LiveSidecarOptions): Promise<LiveSidecar> {
  assertBuilt();
  const home = join(root, 'home');
  // No transcript root yet: Claude Code makes ~/.claude/projects at its first run, after the sidecar started.
  mkdirSync(home, { recursive: true });
  installCcotelIntegration(home);
  const env = { PATH: process.env.PATH, HOME: home, CCOTEL_CONFIG: configFile };
  const run = startRun(['--store', store, '--scan-interval', String(SCAN_INTERVAL_MS)], env);
  for (let waited = 0; !run.output().includes('queries served on'); waited += 100) {
    if (run.child.exitCode !== null || waited > 60_000) throw new Error(`ccotel run did not come up:\n${run.output()}`);
    await sleep(100);
  }
  const query = async <T>(sql: string): Promise<T[]> => {
    const result = await runCli(['query', sql, '-f', 'JSONEachRow', '--store', store], env);
    if (result.status !== 0) throw new Error(`ccotel query failed: ${result.stderr}`);
    return result.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as T);
  };
  return {
    home,
    store,
    async detections() {
      const rows = await query<Record<string, string>>(
        `SELECT LogAttributes['mode'] AS mode, LogAttributes['session.id'] AS sessionId, LogAttributes['tool_use_id'] AS toolUseId,
           LogAttributes['process.pid'] AS pid, LogAttributes['network.local.port'] AS port, LogAttributes['cause'] AS cause,
           LogAttributes['process.command_line'] AS commandLine
         FROM otel_logs WHERE EventName = 'ccotel.failure_mode.detected' ORDER BY Timestamp LIMIT 1 BY LogAttributes['ccotel.record.id']`,
      );
      const number = (value: string) => (value === '' ? undefined : Number(value));
      return rows.map((row) => ({ ...row, pid: number(row.pid), port: number(row.port) }) as DetectionRow);
    },
    async sessionStates() {
      const rows = await query<{ sessionId: string; state: string }>(
        `SELECT LogAttributes['session.id'] AS sessionId, LogAttributes['state'] AS state FROM otel_logs
         WHERE EventName = 'ccotel.session.state_changed' ORDER BY Timestamp LIMIT 1 BY LogAttributes['ccotel.record.id']`,
      );
      const states = new Map<string, string[]>();
      for (const row of rows) states.set(row.sessionId, [...(states.get(row.sessionId) ?? []), row.state]);
      return states;
    },
    async stop() {
      if (run.child.exitCode === null) run.child.kill('SIGTERM');
      await run.exited;
    },
  };
}
