// Issue 30: `ccotel run` stopped cleanly (SIGINT) seconds after the sessions it follows ended, long before the idle
// time (30 min), must have stored what backfill of the same files stores: every answer, the last one of each session
// included, and every turn. With the real Claude Code 2.1.332 offline (three `claude -p` sessions, no hooks
// installed: its cost-state row ends each run), and with rows of a release that writes no row after a run's last
// answer (before 2.1.3xx: no cost-state, no hook rows), where only the stop can tell the turn is over.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startModelServer, type Step } from '../harness/model-server.js';
import { claudeBinaryProblem, runClaude } from '../harness/run-claude.js';
import { bash, usage } from '../harness/script-steps.js';
import { skipWithout } from '../helpers/real-parts.js';
import { assertBuilt, cliEnv, runCli, startRun } from '../reliability/cli.js';
import { appendTurns, sessionPath, waitFor } from '../reliability/transcripts.js';

const SESSIONS = 3;
const root = mkdtempSync(join(tmpdir(), 'ccotel-live-stop-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe.skipIf(skipWithout(claudeBinaryProblem()))('a clean stop of `run` following real print-mode sessions without hooks', () => {
  it('stores the last answer and turn of every session, as backfill of the same files does', async () => {
    assertBuilt();
    const home = join(root, 'home');
    const projectDir = join(home, 'project');
    mkdirSync(projectDir, { recursive: true });
    const env = cliEnv(home, { CLAUDE_CONFIG_DIR: join(home, '.claude'), CCOTEL_IDLE_MS: String(30 * 60_000) });
    const counts = (store: string) => storedCounts(store, env);
    const live = join(root, 'live-store');
    await runCli(['backfill', '--store', live], env); // makes the store `run` writes to
    const run = startRun(['--store', live], env);
    const steps: Step[] = [];
    for (let s = 0; s < SESSIONS; s++) steps.push({ toolCalls: [bash(`echo session-${s}`, 'success')], usage: usage(900 + s, 11 + s) }, { text: `Done ${s}.`, usage: usage(950 + s, 7 + s) });
    const server = await startModelServer(steps);
    let stopped: number | null;
    try {
      await waitFor('run following', () => run.output().includes('queries served on'), 90_000);
      for (let s = 0; s < SESSIONS; s++) {
        const result = await runClaude({ home, projectDir, prompt: `Session ${s}: echo.`, allowedTools: ['Bash'], modelUrl: server.url, timeoutMs: 120_000 });
        expect(result.json?.is_error, result.stdout + result.stderr).toBe(false);
      }
      await new Promise((resolveWait) => setTimeout(resolveWait, 10_000));
    } finally {
      await server.close();
      run.child.kill('SIGINT');
      stopped = await run.exited;
    }
    expect(stopped, run.output()).toBe(0);
    const backfilled = join(root, 'backfill-store');
    await runCli(['backfill', '--store', backfilled], env);
    const expected = [2 * SESSIONS, SESSIONS, 11 + 12 + 13 + 7 + 8 + 9];
    expect(await counts(backfilled), 'backfill: chats, turns, output tokens').toEqual(expected);
    expect(await counts(live), 'run stopped cleanly: chats, turns, output tokens').toEqual(expected);
  }, 600_000);
});

describe('a clean stop of `run` following sessions of a release without end rows', () => {
  it('stores the last answer and turn of every session, as backfill of the same files does', async () => {
    assertBuilt();
    const home = join(root, 'rows');
    const env = cliEnv(home, { CCOTEL_IDLE_MS: String(30 * 60_000) });
    const live = join(home, 'live-store');
    await runCli(['backfill', '--store', live], env);
    const run = startRun(['--store', live], env);
    let stopped: number | null;
    try {
      await waitFor('run following', () => run.output().includes('queries served on'), 90_000);
      // Dated now: no session is idle when the stop comes.
      for (let s = 0; s < SESSIONS; s++) appendTurns(sessionPath(join(home, 'claude'), `ended-${s}`), `ended-${s}`, 0, 1, Date.now() - 10_000);
      await new Promise((resolveWait) => setTimeout(resolveWait, 5_000));
    } finally {
      run.child.kill('SIGINT');
      stopped = await run.exited;
    }
    expect(stopped, run.output()).toBe(0);
    const backfilled = join(home, 'backfill-store');
    await runCli(['backfill', '--store', backfilled], env);
    // Two answers of 5 output tokens per session (test/reliability/transcripts.ts).
    const expected = [2 * SESSIONS, SESSIONS, 10 * SESSIONS];
    expect(await storedCounts(backfilled, env), 'backfill: chats, turns, output tokens').toEqual(expected);
    expect(await storedCounts(live, env), 'run stopped cleanly: chats, turns, output tokens').toEqual(expected);
  }, 300_000);
});

describe('`run` following sessions of a release without end rows, with a Stop hook', () => {
  it("stores each session's last answer and turn within seconds of its Stop hook, long before the idle time", async () => {
    assertBuilt();
    const home = join(root, 'stop-hook');
    const env = cliEnv(home, { CCOTEL_IDLE_MS: String(30 * 60_000) });
    const store = join(home, 'store');
    await runCli(['backfill', '--store', store], env);
    const run = startRun(['--store', store], env);
    try {
      await waitFor('run following', () => run.output().includes('queries served on'), 90_000);
      const spool = join(home, 'state', 'spool');
      mkdirSync(spool, { recursive: true, mode: 0o700 });
      for (let s = 0; s < SESSIONS; s++) {
        const sessionId = `stopped-${s}`;
        const transcript = sessionPath(join(home, 'claude'), sessionId);
        appendTurns(transcript, sessionId, 0, 1, Date.now() - 10_000);
        // As ccotel-hook.sh names a spool file: <fired-at ns, 20 digits>-<pid>-<8 hex>.json.
        const name = `${(BigInt(Date.now()) * 1_000_000n + BigInt(s)).toString().padStart(20, '0')}-${4000 + s}-0000000${s}.json`;
        writeFileSync(join(spool, name), JSON.stringify({ session_id: sessionId, hook_event_name: 'Stop', transcript_path: transcript, cwd: '/home/dev/project', stop_hook_active: false }), { mode: 0o600 });
      }
      const startedMs = Date.now();
      await waitFor('every turn and answer stored', async () => {
        const result = await runCli(['query', "SELECT count() FROM otel_traces WHERE SpanName = 'invoke_agent claude-code' OR SpanName LIKE 'chat %'", '--format', 'TSV', '--store', store], env);
        return result.status === 0 && Number(result.stdout.trim()) === 3 * SESSIONS;
      }, 60_000);
      console.log(`Stop hook → every turn stored: ${Date.now() - startedMs} ms (idle time 30 min)`);
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
    }
  }, 300_000);
});

/** Chat spans, turns and output tokens in a store. */
async function storedCounts(store: string, env: NodeJS.ProcessEnv): Promise<number[]> {
  const sql = "SELECT countIf(SpanName LIKE 'chat %') AS chats, countIf(SpanName = 'invoke_agent claude-code') AS turns, sumIf(toUInt64OrZero(SpanAttributes['gen_ai.usage.output_tokens']), SpanName LIKE 'chat %') AS output FROM otel_traces";
  const result = await runCli(['query', sql, '--format', 'TSV', '--store', store], env);
  expect(result.status, result.stderr).toBe(0);
  return result.stdout.trim().split('\t').map(Number);
}
