// Issue 37 with the real Claude Code 2.1.332 offline: `ccotel run` follows a session whose project rules change
// between its two turns (`claude -p`, then `claude -p --resume`). Each turn's root span carries the fingerprint of
// the rules in force when it started, the change is recorded between them, and the rules of each fingerprint are
// one query away.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startModelServer } from '../harness/model-server.js';
import { claudeBinaryProblem, runClaude } from '../harness/run-claude.js';
import { skipWithout } from '../helpers/real-parts.js';
import { assertBuilt, cliEnv, runCli, startRun } from '../reliability/cli.js';
import { waitFor } from '../reliability/transcripts.js';

const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
const root = mkdtempSync(join(tmpdir(), 'ccotel-settings-claude-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe.skipIf(skipWithout(claudeBinaryProblem()))('the rules in force on a real session whose rules change between turns', () => {
  it('gives each turn the fingerprint of its rules, and records the change between them', async () => {
    assertBuilt();
    const home = join(root, 'home');
    const projectDir = join(home, 'project');
    mkdirSync(projectDir, { recursive: true });
    const store = join(root, 'store');
    const env = cliEnv(home, { CLAUDE_CONFIG_DIR: join(home, '.claude'), CCOTEL_IDLE_MS: '3000' });
    const rows = async (sql: string): Promise<string[][]> => {
      const result = await runCli(['query', sql, '--format', 'TSV', '--store', store], env);
      return result.status === 0 ? result.stdout.trim().split('\n').filter(Boolean).map((line) => line.split('\t')) : [];
    };
    const turns = () => rows("SELECT SpanAttributes['ccotel.settings.fingerprint'] FROM otel_traces WHERE SpanName = 'invoke_agent claude-code' ORDER BY Timestamp");

    await runCli(['backfill', '--store', store], env); // makes the store `run` writes to
    const run = startRun(['--store', store], env);
    const server = await startModelServer([{ text: 'first answer', usage }, { text: 'second answer', usage }]);
    try {
      const first = await runClaude({ home, projectDir, prompt: 'first turn', modelUrl: server.url, timeoutMs: 120_000 });
      expect(first.json?.is_error, first.stdout + first.stderr).toBe(false);
      await waitFor('the first turn stored', async () => (await turns()).length === 1, 60_000);

      mkdirSync(join(projectDir, '.claude'));
      writeFileSync(join(projectDir, '.claude', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash(npm test:*)'], deny: ['WebFetch'] } }));
      const changes = () => rows("SELECT LogAttributes['ccotel.settings.scope'], LogAttributes['ccotel.settings.sessions'] FROM otel_logs WHERE EventName = 'ccotel.settings.changed'");
      await waitFor('the change recorded', async () => (await changes()).length === 1, 30_000);
      expect(await changes()).toEqual([['project', first.json!.session_id]]);

      const second = await runClaude({ home, projectDir, prompt: 'second turn', modelUrl: server.url, resume: first.json!.session_id, timeoutMs: 120_000 });
      expect(second.json?.is_error, second.stdout + second.stderr).toBe(false);
      await waitFor('the second turn stored', async () => (await turns()).length === 2, 60_000);
    } finally {
      await server.close();
      run.child.kill('SIGTERM');
      await run.exited;
    }
    const [[before], [after]] = await turns();
    expect(before).toMatch(/^[0-9a-f]{16}$/);
    expect(after).toMatch(/^[0-9a-f]{16}$/);
    expect(after).not.toBe(before);
    // What was allowed when the second turn ran: one query from its span to the rules.
    const [[rules]] = await rows(`SELECT LogAttributes['ccotel.settings.rules'] FROM otel_logs WHERE EventName = 'ccotel.settings.effective' AND LogAttributes['ccotel.settings.fingerprint'] = '${after}'`);
    expect(JSON.parse(rules).sets).toEqual({ 'permissions.allow': ['Bash(npm test:*)'], 'permissions.deny': ['WebFetch'] });

    // `report settings` tells the same: the session's rules and the change while it ran.
    const session = (await rows("SELECT DISTINCT SpanAttributes['session.id'] FROM otel_traces"))[0][0];
    const reported = await runCli(['report', 'settings', '--session', session, '--json', '--store', store], env);
    expect(reported.status, reported.stderr).toBe(0);
    const report = JSON.parse(reported.stdout) as { rules: { fingerprint: string }[]; changes: { scope: string; sessions: string[]; changes: string }[] };
    expect(report.rules.map((row) => row.fingerprint)).toEqual([after]);
    expect(report.changes).toMatchObject([{ scope: 'project', sessions: [session], changes: 'permissions.allow added Bash(npm test:*)\npermissions.deny added WebFetch' }]);
    const table = await runCli(['report', 'settings', '--session', session, '--store', store], env);
    expect(table.stdout).toContain('permissions.deny: WebFetch');
  }, 400_000);
});
