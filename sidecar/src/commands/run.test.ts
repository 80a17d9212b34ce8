import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cliEnv, queryNumber, runCli, startRun } from '../../../test/reliability/cli.js';
import { appendTurns, sessionPath, turnLines, waitFor } from '../../../test/reliability/transcripts.js';

describe('ccotel run (the built CLI as a child process)', () => {
  let home: string;
  let env: NodeJS.ProcessEnv;
  let store: string;
  let sidecar: ReturnType<typeof startRun>;
  const turns = () => queryNumber("SELECT count() FROM otel_traces WHERE SpanName = 'invoke_agent claude-code'", env, store);

  beforeAll(async () => {
    assertBuilt();
    home = mkdtempSync(join(tmpdir(), 'ccotel-run-'));
    env = cliEnv(home);
    store = join(home, 'store');
    appendTurns(sessionPath(join(home, 'claude'), 'session-1'), 'session-1', 0, 3, Date.now() - 3_600_000);
    sidecar = startRun(['--store', store, '--idle', '1000'], env);
    await waitFor('the endpoint', () => sidecar.output().includes('queries served on'), 90_000);
  });

  afterAll(async () => {
    if (sidecar.child.exitCode === null) sidecar.child.kill('SIGKILL');
    rmSync(home, { recursive: true, force: true });
  });

  it('answers query and report through its endpoint while it runs', async () => {
    await waitFor('3 turns', async () => (await turns()) === 3, 90_000);
    appendTurns(sessionPath(join(home, 'claude'), 'session-1'), 'session-1', 3, 5, Date.now() - 3_600_000);
    await waitFor('5 turns', async () => (await turns()) === 5, 90_000);
    const report = await runCli(['report', '--json', '--store', store], env);
    expect(report.status).toBe(0);
    expect(JSON.parse(report.stdout)).toBeTypeOf('object');
  });

  it('shows status: files followed, nothing behind, sink ok', async () => {
    await waitFor('status written', async () => {
      const report = JSON.parse((await runCli(['status', '--json', '--store', store], env)).stdout);
      return report.sources[0]?.sink.state === 'ok' && report.sources[0].filesFollowed === 1;
    }, 60_000);
    const report = JSON.parse((await runCli(['status', '--json', '--store', store], env)).stdout);
    expect(report.sources[0]).toMatchObject({ source: 'transcripts', running: true, filesFollowed: 1, bytesBehind: 0, store });
    expect(report.sources[0].lastEventTime).toMatch(/^\d{4}-/);
    expect(report.linesSkipped).toEqual({});
  });

  it('puts a hook that fired just before its transcript row on the tool span, not aside as a late record', async () => {
    const startMs = Date.now() - 3_600_000;
    const lines = turnLines({ sessionId: 'session-1', index: 5, startMs });
    const toolUseId = /"tool_use","id":"(toolu_[^"]+)"/.exec(lines.join('\n'))![1];
    // Claude Code fires PostToolUse, then writes the result row: the spool file lands first, by a hair.
    const spool = join(home, 'state', 'spool');
    mkdirSync(spool, { recursive: true, mode: 0o700 });
    const payload = { session_id: 'session-1', hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_input: { command: 'echo 5' }, tool_response: { stdout: '5' }, tool_use_id: toolUseId };
    writeFileSync(join(spool, `${String(BigInt(startMs) * 1_000_000n).padStart(20, '0')}-1-abc.json`), JSON.stringify(payload));
    appendTurns(sessionPath(join(home, 'claude'), 'session-1'), 'session-1', 5, 6, startMs);
    const events = async () => (await runCli(['query', `SELECT arrayStringConcat(Events.Name, ',') FROM otel_traces WHERE SpanAttributes['tool_use_id'] = '${toolUseId}'`, '-f', 'TSV', '--store', store], env)).stdout.trim();
    await waitFor('the tool span', async () => (await events()) !== '', 90_000);
    expect((await events()).split(',')).toContain('PostToolUse');
    await waitFor('the turn closed by the idle time', async () => (await turns()) === 6, 90_000);
  });

  it('refuses a second run on the same store with a clear error', async () => {
    const second = await runCli(['run', '--store', store], env, 60_000);
    expect(second.status).toBe(1);
    expect(second.stderr).toContain('only one `ccotel run` can own a store');
  });

  it('stops cleanly on SIGTERM: exit 0, lock released, status not running', async () => {
    sidecar.child.kill('SIGTERM');
    expect(await sidecar.exited).toBe(0);
    expect(existsSync(join(store, 'ccotel.lock'))).toBe(false);
    const report = JSON.parse((await runCli(['status', '--json', '--store', store], env)).stdout);
    expect(report.sources[0]).toMatchObject({ running: false, filesFollowed: 1, bytesBehind: 0 });
    expect(await turns()).toBe(6);
  });
});
