// Issue 13, rows 1 and 5, and issue 28, row 6, against the real `ccotel run` (build first): a local peer floods
// the query endpoint with idle connections under a 1024 file descriptor limit, sends a 300 MB body with the
// token, or four queries of 16 MiB at once. The process stays up, its descriptors and memory stay bounded,
// and it answers queries afterwards.
import { createClient } from '@clickhouse/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLock } from '../../sidecar/src/store/open-store.js';
import { assertBuilt, CLI, cliEnv } from '../reliability/cli.js';
import { waitFor } from '../reliability/transcripts.js';

/** Peak resident memory of a process, from /proc (kB → bytes). */
function peakRss(pid: number): number {
  return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
}

function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

describe('ccotel run under a flood of connections and a huge body (fd limit 1024)', () => {
  let home: string;
  let run: ChildProcess;
  let exited = false;
  let endpoint: { url: string; token: string };

  beforeAll(async () => {
    assertBuilt();
    home = mkdtempSync(join(tmpdir(), 'ccotel-adv-flood-'));
    const store = join(home, 'store');
    run = spawn('sh', ['-c', 'ulimit -n 1024 && exec "$0" "$@"', process.execPath, CLI, 'run', '--store', store], {
      env: cliEnv(home),
      stdio: 'ignore',
    });
    run.on('exit', () => (exited = true));
    await waitFor('the query endpoint', () => readLock(store)?.endpoint !== undefined, 90_000);
    endpoint = readLock(store)!.endpoint!;
  });

  afterAll(() => {
    if (!exited) run.kill('SIGKILL');
    rmSync(home, { recursive: true, force: true });
  });

  async function answers(): Promise<boolean> {
    const client = createClient({ url: endpoint.url, username: 'ccotel', password: endpoint.token, request_timeout: 60_000 });
    try {
      const rows = await client.query({ query: 'SELECT 1 AS one', format: 'JSONEachRow' });
      return JSON.stringify(await rows.json()) === '[{"one":1}]';
    } finally {
      await client.close();
    }
  }

  it('row 1: 1000 idle connections neither kill the process nor hold 1000 descriptors', async () => {
    const { port } = new URL(endpoint.url);
    const sockets: Socket[] = [];
    let closedByServer = 0;
    for (let i = 0; i < 1000; i++) {
      const socket = connect(Number(port), '127.0.0.1');
      socket.on('error', () => {});
      socket.on('close', () => closedByServer++);
      sockets.push(socket);
    }
    await waitFor('the surplus connections to be closed', () => closedByServer >= 800, 90_000);
    expect(exited).toBe(false);
    expect(openFds(run.pid!)).toBeLessThan(400);
    // The idle ones it kept are dropped once their headers are late; then queries are served again.
    await waitFor('every idle connection to be dropped', () => closedByServer === 1000, 90_000);
    expect(await answers()).toBe(true);
    for (const socket of sockets) socket.destroy();
  });

  /** POST `body` as the query with the token: the status, or the error that cut the connection. */
  function post(body: Buffer | string): Promise<number | string> {
    return new Promise((resolveStatus) => {
      const sent = request(`${endpoint.url}/?query=`, { method: 'POST', headers: { 'X-ClickHouse-Key': endpoint.token } }, (response) => {
        response.resume();
        resolveStatus(response.statusCode ?? 0);
      });
      sent.on('error', (error: NodeJS.ErrnoException) => resolveStatus(error.code ?? 'error'));
      sent.end(body);
    });
  }

  it('issue 28 row 6: four 16 MiB queries at once, flat and deeply nested, are refused without parsing them (peak RSS grows <= 256 MB)', async () => {
    const before = peakRss(run.pid!);
    const size = (16 << 20) - 1024; // under the body limit
    const flat = `SELECT ${'1+'.repeat(size / 2 - 8)}1`;
    const nested = `SELECT ${'('.repeat(size / 2 - 8)}1${')'.repeat(size / 2 - 8)}`;
    const statuses = await Promise.all([post(flat), post(nested), post(flat), post(nested)]);
    expect(statuses.every((status) => status !== 200), String(statuses)).toBe(true);
    expect(exited).toBe(false);
    expect(peakRss(run.pid!) - before).toBeLessThanOrEqual(256 << 20);
    expect(await answers()).toBe(true);
  });

  it('row 5: a 300 MB body with the token is refused without holding it (peak RSS grows < 64 MB)', async () => {
    const before = peakRss(run.pid!);
    const chunk = Buffer.alloc(1 << 20, 0x20);
    const status = await new Promise<number | string>((resolveStatus) => {
      const post = request(`${endpoint.url}/?query=`, { method: 'POST', headers: { 'X-ClickHouse-Key': endpoint.token } }, (response) => {
        response.resume();
        resolveStatus(response.statusCode ?? 0);
      });
      post.on('error', (error: NodeJS.ErrnoException) => resolveStatus(error.code ?? 'error'));
      let sent = 0;
      const pump = () => {
        while (sent < 300 && post.write(chunk)) sent++;
        if (sent >= 300) post.end();
        else post.once('drain', () => (sent++, pump()));
      };
      pump();
    });
    // The answer is 413, or the connection is cut while the peer is still sending.
    expect([413, 'ECONNRESET', 'EPIPE']).toContain(status);
    expect(exited).toBe(false);
    expect(peakRss(run.pid!) - before).toBeLessThan(64 << 20);
    expect(await answers()).toBe(true);
  });
});
