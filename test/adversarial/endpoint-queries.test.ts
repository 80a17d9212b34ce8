// Issue 28, row 7: the queries the endpoint admits run at once, and each is answered by its time limit, whether
// the engine stops it or not. The endpoint runs in a process of its own (serve-store.ts, of the build under
// test) started with UV_THREADPOOL_SIZE=8 (five reader sessions and three threads for the rest: threadpool.ts),
// a 3 s limit (a light query held back by four heavy ones waits for them: over 2 s) and five queries at once.
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, CLI, cliEnv, startRun } from '../reliability/cli.js';
import { waitFor } from '../reliability/transcripts.js';

const LIMIT_MS = 3000;
const LIMITS = { maxExecutionSeconds: LIMIT_MS / 1000, maxConcurrentQueries: 5 };
const HEAVY = 'SELECT count() FROM numbers(1000000000000) WHERE sipHash64(number) = 0';
/** Function calls on one row: the engine checks its time limit between blocks, so this runs ~10-17 s, far past it. */
const UNSTOPPED = "SELECT editDistance(repeat('a', 65000), repeat('b', 65000)) + editDistance(repeat('c', 65000), repeat('d', 65000))";

describe('queries at once on the query endpoint (issue 28 row 7)', () => {
  let server: ChildProcess;
  let client: ClickHouseClient;

  beforeAll(async () => {
    assertBuilt();
    server = spawn(process.execPath, [join(dirname(CLI), '..', '..', 'test', 'adversarial', 'serve-store.js'), JSON.stringify(LIMITS)], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, UV_THREADPOOL_SIZE: '8' },
    });
    const [line] = (await once(createInterface({ input: server.stdout! }), 'line')) as [string];
    const endpoint = JSON.parse(line) as { url: string; token: string };
    client = createClient({ url: endpoint.url, username: 'ccotel', password: endpoint.token, request_timeout: 60_000, max_open_connections: 10 });
  });

  afterAll(async () => {
    await client?.close();
    server.stdin!.end();
    const exited = once(server, 'exit');
    if (!(await Promise.race([exited.then(() => true), sleep(30_000).then(() => false)]))) server.kill('SIGKILL');
  });

  /** How long the query took to be answered, and how: 'ok' or the error's type. */
  async function timed(query: string): Promise<{ ms: number; outcome: string }> {
    const start = Date.now();
    const outcome = await client.query({ query, format: 'JSONEachRow' }).then(
      async (result) => (await result.json(), 'ok'),
      (error: { type?: string }) => error.type ?? String(error),
    );
    return { ms: Date.now() - start, outcome };
  }

  it('four heavy queries run at once, each stopped within its limit + 1 s, and a light one is answered within 2 s meanwhile', async () => {
    const heavy = [1, 2, 3, 4].map(() => timed(HEAVY));
    await sleep(200);
    const light = await timed('SELECT 1');
    expect(light).toMatchObject({ outcome: 'ok' });
    expect(light.ms).toBeLessThanOrEqual(2000);
    for (const answer of await Promise.all(heavy)) {
      expect(answer.outcome).toBe('TIMEOUT_EXCEEDED');
      expect(answer.ms).toBeLessThanOrEqual(LIMIT_MS + 1000);
    }
  });

  it('a query the engine does not stop is answered with a timeout at its limit; its session is used again only once the engine returns', async () => {
    const answer = await timed(UNSTOPPED);
    expect(answer.outcome).toBe('TIMEOUT_EXCEEDED');
    expect(answer.ms).toBeLessThanOrEqual(LIMIT_MS + 1000);
    // The engine still runs it: five queries of a second share four sessions, so the last waits for a first one.
    const sleeps = () => Promise.all([1, 2, 3, 4, 5].map(() => timed('SELECT sleep(1)')));
    const meanwhile = await sleeps();
    expect(meanwhile.every((each) => each.outcome === 'ok')).toBe(true);
    expect(Math.max(...meanwhile.map((each) => each.ms)), JSON.stringify(meanwhile)).toBeGreaterThanOrEqual(2000);
    // Then it comes back: all five at once.
    let slowest = Infinity;
    for (const deadline = Date.now() + 60_000; slowest >= 2000 && Date.now() < deadline; ) slowest = Math.max(...(await sleeps()).map((each) => each.ms));
    expect(slowest).toBeLessThan(2000);
  });
});

describe('the ccotel command sizes the thread pool for the endpoint', () => {
  const LAUNCHER = join(dirname(CLI), '..', '..', '..', 'sidecar', 'bin', 'ccotel.cjs');
  const runUntilServing = async (cli: string) => {
    const home = mkdtempSync(join(tmpdir(), 'ccotel-threadpool-'));
    const env = cliEnv(home);
    delete env.UV_THREADPOOL_SIZE;
    const run = startRun(['--store', join(home, 'store')], env, cli);
    try {
      await waitFor('the endpoint', () => /queries served on \S+ \(\d+ at once\)/.test(run.output()), 90_000);
      return /\((\d+) at once\)/.exec(run.output())![1];
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
      rmSync(home, { recursive: true, force: true });
    }
  };

  it('`ccotel run` answers 4 queries at once; the module alone, on Node 20\'s default pool, 1', async () => {
    expect(await runUntilServing(LAUNCHER)).toBe('4');
    expect(await runUntilServing(CLI)).toBe('1');
  });
});
