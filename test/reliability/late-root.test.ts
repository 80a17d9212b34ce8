// On a fresh host the sidecar (or its service) may start before Claude Code has ever run: no
// `projects` dir, not even its config dir. `ccotel run` must follow the transcripts written once they
// appear, without a restart. The time from the transcript being written to its rows being stored is printed
// (the goal is 2 s).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { assertBuilt, cliEnv, endpointClient, startRun } from './cli.js';
import { appendTurns, sessionPath, waitFor } from './transcripts.js';

describe('transcript roots that appear after start (slow: the real CLI)', () => {
  const home = mkdtempSync(join(tmpdir(), 'ccotel-late-root-'));
  let sidecar: ReturnType<typeof startRun> | undefined;

  afterAll(async () => {
    sidecar?.child.kill('SIGTERM');
    await sidecar?.exited;
    rmSync(home, { recursive: true, force: true });
  });

  it('follows a CLAUDE_CONFIG_DIR and a ~/.claude created after start, and a root deleted and created again', async () => {
    assertBuilt();
    // CLAUDE_CONFIG_DIR two levels below anything that exists; HOME exists but has no .claude.
    const configDir = join(home, 'later', 'claude');
    const env = cliEnv(home, { CLAUDE_CONFIG_DIR: configDir });
    const store = join(home, 'store');
    sidecar = startRun(['--store', store, '--idle', '600000'], env);
    await waitFor('the query endpoint', () => sidecar!.output().includes('queries served on'), 90_000);
    const client = endpointClient(store);
    const sessions = async () => {
      const result = await client.query({ query: "SELECT uniqExact(SpanAttributes['session.id']) AS n FROM otel_traces WHERE SpanName = 'execute_tool Bash'", format: 'JSONEachRow' });
      return Number((await result.json<{ n: string }>())[0].n);
    };
    const startMs = Date.now() - 60_000;
    const latenciesMs: number[] = [];
    const writeAndWait = async (configRoot: string, session: string, expected: number) => {
      mkdirSync(join(configRoot, 'projects'), { recursive: true });
      appendTurns(sessionPath(configRoot, session), session, 0, 1, startMs);
      const writtenMs = Date.now();
      await waitFor(`${session} under ${configRoot}`, async () => (await sessions()) === expected, 30_000);
      latenciesMs.push(Date.now() - writtenMs);
    };
    await writeAndWait(configDir, 'late-1', 1);
    await writeAndWait(join(home, '.claude'), 'late-2', 2);
    rmSync(join(configDir, 'projects'), { recursive: true });
    await writeAndWait(configDir, 'late-3', 3);
    await client.close();
    console.log(`late roots: transcript written → stored ${latenciesMs.join(', ')} ms`);
    expect(sidecar.output()).toContain('not there yet');
    expect(sidecar.output()).toMatch(/transcript root .* appeared/);
  }, 300_000);
});
