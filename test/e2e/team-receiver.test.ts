// Issue 33: a small team's receiver. One `ccotel run --listen 127.0.0.2:PORT` with a token (a file of mode 600) keeps
// the embedded store; two sidecars of their own HOMEs (two hosts, told apart by host.name) follow recorded
// transcripts with `--store none --otlp` to it, sending the token in OTEL_EXPORTER_OTLP_HEADERS. The store then
// holds the sessions of both; a request without the token or with another gets 401 and leaves nothing; and `run`
// will not listen beyond loopback without a token. Loopback addresses only: nothing here is reachable from outside.
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { assertBuilt, cliEnv, endpointClient, runCli, startRun, stopRun } from '../reliability/cli.js';
import { waitFor } from '../reliability/transcripts.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'real');
const MEMBERS = [{ host: 'member-a', scenario: 'bash-success' }, { host: 'member-b', scenario: 'file-tools' }];

/** The session ids of a recorded scenario's transcripts (their file names). */
const sessionsOf = (scenario: string) =>
  readdirSync(join(FIXTURES, scenario, 'projects'), { recursive: true, encoding: 'utf8' }).filter((path) => path.endsWith('.jsonl') && !path.includes('subagents')).map((path) => basename(path, '.jsonl'));

describe("a team's receiver: other hosts' sidecars into one embedded store, with a token", () => {
  const dir = mkdtempSync(join(tmpdir(), 'ccotel-team-'));
  const runs: ReturnType<typeof startRun>[] = [];
  afterAll(async () => {
    for (const run of runs) await stopRun(run);
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores what both sidecars send, refuses a missing or wrong token, and will not listen beyond loopback without one', async () => {
    assertBuilt();
    const token = randomBytes(32).toString('hex');
    const tokenFile = join(dir, 'receiver-token');
    writeFileSync(tokenFile, token, { mode: 0o600 });
    const port = await freePort();
    const url = `http://127.0.0.2:${port}`;
    const store = join(dir, 'store');
    const team = startRun(['--store', store, '--listen', `127.0.0.2:${port}`], cliEnv(join(dir, 'team'), { CCOTEL_RECEIVER_TOKEN_FILE: tokenFile }));
    runs.push(team);
    await waitFor('the team receiver', () => team.output().includes(`received on ${url}`), 90_000);

    for (const { host, scenario } of MEMBERS) {
      const home = join(dir, host);
      mkdirSync(join(home, 'claude'), { recursive: true });
      cpSync(join(FIXTURES, scenario, 'projects'), join(home, 'claude', 'projects'), { recursive: true });
      const env = cliEnv(home, { OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer%20${token}`, OTEL_RESOURCE_ATTRIBUTES: `host.name=${host}` });
      runs.push(startRun(['--store', 'none', '--otlp', url], env));
    }

    const client = endpointClient(store);
    const sessionsByHost = async () => {
      const rows = await (await client.query({
        query: `SELECT DISTINCT ResourceAttributes['host.name'] AS host, SpanAttributes['session.id'] AS session FROM otel_traces WHERE ServiceName = 'ccotel' AND startsWith(SpanName, 'chat ')`,
        format: 'JSONEachRow',
      })).json<{ host: string; session: string }>();
      const byHost: Record<string, string[]> = {};
      for (const row of rows) (byHost[row.host] ??= []).push(row.session);
      return byHost;
    };
    const expected = Object.fromEntries(MEMBERS.map(({ host, scenario }) => [host, sessionsOf(scenario).sort()]));
    await waitFor('the sessions of both hosts in the team store', async () => {
      const stored = await sessionsByHost();
      return MEMBERS.every(({ host }) => (stored[host] ?? []).length >= expected[host].length);
    }, 120_000);
    const stored = await sessionsByHost();
    expect(Object.fromEntries(Object.entries(stored).map(([host, sessions]) => [host, sessions.sort()]))).toEqual(expected);

    // Without the token, or with another: 401, and nothing of it stored.
    const marker = `not-from-the-team-${randomBytes(4).toString('hex')}`;
    const logs = JSON.stringify({ resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ scope: { name: 'intruder' }, logRecords: [{ timeUnixNano: `${BigInt(Date.now()) * 1_000_000n}`, body: { stringValue: marker } }] }] }] });
    for (const authorization of [undefined, `Bearer ${randomBytes(32).toString('hex')}`, `Bearer ${token.slice(1)}`]) {
      const answer = await fetch(`${url}/v1/logs`, { method: 'POST', body: logs, headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) } });
      expect(answer.status).toBe(401);
    }
    const intruders = await (await client.query({ query: `SELECT count() AS n FROM otel_logs WHERE Body = '${marker}'`, format: 'JSONEachRow' })).json<{ n: string }>();
    expect(Number(intruders[0].n)).toBe(0);
    await client.close();

    // Beyond loopback with no token, `run` refuses before it opens anything (it never listens).
    const refused = await runCli(['run', '--store', join(dir, 'other-store'), '--listen', `0.0.0.0:${port}`], cliEnv(join(dir, 'no-token')));
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/beyond loopback: give the receiver a token/);
  }, 300_000);
});
