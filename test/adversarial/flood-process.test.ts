// Issue 28, rows 3 and 4, against the real `ccotel run --ui` (build first) under a 1024 descriptor limit: a
// local user without the token or the cookie floods both ports with idle connections, held or reconnecting
// as soon as they are closed. The process keeps well under its limit, reads a transcript written meanwhile,
// and real clients get through.
import { createClient } from '@clickhouse/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLock } from '../../sidecar/src/store/open-store.js';
import { assertBuilt, CLI, cliEnv, endpointClient, runCli } from '../reliability/cli.js';
import { appendTurns, sessionPath, waitFor } from '../reliability/transcripts.js';

const FD_LIMIT = 1024;
/** Reconnections of a flood at most (each takes a loopback round trip): the loop ends even if the test hangs. */
const MAX_RECONNECTS = 2_000_000;

const openFds = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;

interface Flood {
  /** Connections the server has closed so far. */
  closed(): number;
  stop(): void;
}

// A flood runs in a process of its own, as another user's would: in the test's process its thousands of reconnects
// queued ahead of the test's own client, which then sent its request late (the client's delay, not the server's).
const FLOOD = `
const { connect } = require('node:net');
const [port, count, reconnect, max] = process.argv.slice(1).map(Number);
const sockets = new Set();
let closed = 0;
const open = () => {
  const socket = connect(port, '127.0.0.1');
  sockets.add(socket);
  socket.on('error', () => {});
  socket.on('close', () => {
    sockets.delete(socket);
    closed++;
    if (reconnect && closed < max) open();
  });
};
for (let i = 0; i < count; i++) open();
setInterval(() => process.send(closed), 20);
process.on('disconnect', () => process.exit(0));
`;

/** `count` idle connections to `port`; with `reconnect`, each one the server closes is opened again at once. */
function flood(port: number, count: number, reconnect: boolean): Flood {
  let closed = 0;
  const child = spawn(process.execPath, ['-e', FLOOD, String(port), String(count), reconnect ? '1' : '0', String(MAX_RECONNECTS)], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  child.on('message', (reported) => (closed = Number(reported)));
  return {
    closed: () => closed,
    stop: () => child.kill('SIGKILL'),
  };
}

/** A GET on a connection of its own (a kept-alive one could be closed under us), in at most 10 s. */
function status(url: string, cookie: string): Promise<number | string> {
  return new Promise((resolveStatus) => {
    get(url, { agent: false, headers: { cookie }, timeout: 10_000 }, (response) => {
      response.resume();
      resolveStatus(response.statusCode ?? 0);
    })
      .on('timeout', function (this: { destroy(): void }) {
        this.destroy();
      })
      .on('error', (error: NodeJS.ErrnoException) => resolveStatus(error.code ?? 'error'));
  });
}

describe('ccotel run --ui under floods of idle connections (fd limit 1024)', () => {
  let home: string;
  let store: string;
  let run: ChildProcess;
  let output = '';
  let exited = false;
  let endpoint: { url: string; token: string };
  let uiBase: string;
  let cookie: string;

  beforeAll(async () => {
    assertBuilt();
    home = mkdtempSync(join(tmpdir(), 'ccotel-adv-fd-'));
    store = join(home, 'store');
    run = spawn('sh', ['-c', `ulimit -n ${FD_LIMIT} && exec "$0" "$@"`, process.execPath, CLI, 'run', '--ui', '--store', store, '--idle', '600000'], {
      env: cliEnv(home),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    run.stderr!.on('data', (chunk) => (output += String(chunk)));
    run.on('exit', () => (exited = true));
    await waitFor('the web view', () => /login\?code=/.test(output), 90_000);
    endpoint = readLock(store)!.endpoint!;
    const loginUrl = /http:\/\/127\.0\.0\.1:\d+\/login\?code=[\w-]+/.exec(output)![0];
    uiBase = new URL(loginUrl).origin;
    const login = await fetch(loginUrl, { redirect: 'manual' });
    cookie = login.headers.get('set-cookie')!.split(';')[0];
  }, 120_000);

  afterAll(() => {
    if (!exited) run.kill('SIGKILL');
    rmSync(home, { recursive: true, force: true });
  });

  async function answered(): Promise<boolean> {
    const client = createClient({ url: endpoint.url, username: 'ccotel', password: endpoint.token, request_timeout: 10_000, keep_alive: { enabled: false } });
    try {
      const rows = await client.query({ query: 'SELECT 1 AS one', format: 'JSONEachRow' });
      return JSON.stringify(await rows.json()) === '[{"one":1}]';
    } catch {
      return false;
    } finally {
      await client.close();
    }
  }

  async function cliAnswers(): Promise<boolean> {
    const result = await runCli(['query', 'SELECT 41 + 1', '--format', 'TSV', '--store', store], cliEnv(home), 60_000);
    if (result.status !== 0) console.log(`ccotel query failed: ${result.stderr}`);
    return result.stdout.trim() === '42';
  }

  it('II.3: 1000 idle connections on each port leave the process well under its limit, and a transcript written meanwhile is read', async () => {
    const before = openFds(run.pid!);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, openFds(run.pid!))), 20);
    const floods = [flood(Number(new URL(uiBase).port), 1000, false), flood(Number(new URL(endpoint.url).port), 1000, false)];
    try {
      // Each server keeps its share of the budget (at most 200 here) and closes the rest at once.
      await waitFor('the surplus connections to be closed', () => floods.every((each) => each.closed() >= 800), 30_000).catch(() => {});
      const held = openFds(run.pid!);
      clearInterval(sampler);
      console.log(`II.3: descriptors ${before} before, ${held} (peak ${peak}) with 2 × 1000 idle connections (limit ${FD_LIMIT})`);
      expect(exited).toBe(false);
      expect(peak).toBeLessThan(FD_LIMIT / 2);
      const session = 'fd-flood';
      appendTurns(sessionPath(join(home, 'claude'), session), session, 0, 1, Date.now() - 60_000);
      const client = endpointClient(store);
      try {
        const stored = async () => {
          const result = await client.query({ query: `SELECT count() AS n FROM otel_traces WHERE SpanAttributes['session.id'] = '${session}'`, format: 'JSONEachRow' });
          return Number((await result.json<{ n: string }>())[0].n) > 0;
        };
        await waitFor('the transcript written during the flood to be stored', () => stored().catch(() => false), 30_000);
      } finally {
        await client.close();
      }
      expect(output).not.toMatch(/EMFILE/);
    } finally {
      clearInterval(sampler);
      for (const each of floods) each.stop();
    }
  }, 120_000);

  // 40 (the issue's) filled the old cap of 32, with one query in five through `ccotel query`. 200 are more than a
  // server holds here (128): the flood then has one of its own closed every ~0.2 ms, so a newcomer has ~25 ms to
  // send its request, and a client process that a loaded machine deschedules in between can lose (about 1
  // `ccotel query` in 36 measured): those queries are the client's, which sends at once.
  it.each([
    [40, 5],
    [200, 0],
  ])('II.4: with %i reconnecting idle sockets held on each port, real queries and the web view get through', async (count, cliEvery) => {
    const floods = [flood(Number(new URL(endpoint.url).port), count, true), flood(Number(new URL(uiBase).port), count, true)];
    try {
      await new Promise((resolveDelay) => setTimeout(resolveDelay, 1_000));
      let queries = 0;
      let pages = 0;
      for (let i = 0; i < 30; i++) {
        if (cliEvery > 0 && i % cliEvery === 0 ? await cliAnswers() : await answered()) queries++;
        if ((await status(`${uiBase}/api/meta`, cookie)) === 200) pages++;
      }
      // `report` and `status` read through the endpoint too.
      const others = cliEvery > 0 ? await Promise.all([['report', '--json'], ['status', '--json']].map((args) => runCli([...args, '--store', store], cliEnv(home), 60_000))) : [];
      for (const result of others) expect(result.status, result.stderr).toBe(0);
      console.log(`II.4, ${count} sockets: ${queries}/30 queries, ${pages}/30 pages answered; the floods were closed ${floods.map((each) => each.closed()).join(' and ')} times`);
      expect(floods.every((each) => each.closed() < MAX_RECONNECTS)).toBe(true); // still flooding at the end
      expect(queries).toBeGreaterThanOrEqual(29);
      expect(pages).toBeGreaterThanOrEqual(29);
    } finally {
      for (const each of floods) each.stop();
    }
  }, 300_000);
});
