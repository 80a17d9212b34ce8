// Sink down for a while: the real CLI (`npm run build` first) follows transcripts that grow while its store
// cannot take them; once the store is back it catches up, and the store holds exactly the reference set.
//  - server: `ccotel run --store http://…` against a ClickHouse HTTP stand-in (this process's embedded store
//    behind the query endpoint's HTTP side, writes allowed: writable-stand-in.ts) seen through a proxy that refuses connections, answers 503, or loses the
//    answers of INSERTs that did run;
//  - embedded: the store directory is held by a real `ccotel backfill` (its lock) when `run` starts.
import type { ClickHouseClient } from '@clickhouse/client';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../sidecar/src/store/open-store.js';
import type { QueryEndpoint } from '../../sidecar/src/store/query-endpoint.js';
import { generateCorpus } from '../generator/corpus.js';
import { assertBuilt, CLI, cliEnv, runCli, startRun, type TranscriptStatus } from './cli.js';
import { compareSpanIds, referenceSpanIds } from './reference.js';
import { startSwitchableProxy, type SwitchableProxy } from './switchable-proxy.js';
import { appendTurns, sessionPath, waitFor } from './transcripts.js';
import { writableStandIn } from './writable-stand-in.js';

const HOUR_AGO = Date.now() - 3_600_000;
const sleep = (ms: number) => new Promise((resolveDelay) => setTimeout(resolveDelay, ms));

async function storedSpanIds(client: ClickHouseClient): Promise<string[]> {
  const result = await client.query({ query: 'SELECT SpanId FROM otel_traces', format: 'JSONEachRow' });
  return (await result.json<{ SpanId: string }>()).map((row) => row.SpanId);
}

/** `ccotel status`, run without blocking: this process serves the store it asks. */
async function sidecarStatus(env: NodeJS.ProcessEnv, store: string): Promise<TranscriptStatus | undefined> {
  return JSON.parse((await runCli(['status', '--json', '--store', store], env)).stdout).sources[0];
}

describe('sink down (slow: the real CLI)', () => {
  const work = mkdtempSync(join(tmpdir(), 'ccotel-sink-down-'));
  const cleanups: (() => Promise<unknown> | unknown)[] = [];

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  it('server refusing, answering 503, losing INSERT answers: nothing lost, nothing twice, catches up when back', async () => {
    assertBuilt();
    const home = join(work, 'server');
    const env = cliEnv(home);
    const claude = join(home, 'claude');
    const store: Store = await openStore(join(work, 'server-store'), { command: 'test', access: 'write' });
    cleanups.push(() => store.close());
    const endpoint: QueryEndpoint = await writableStandIn(store.client);
    cleanups.push(() => endpoint.close());
    const proxy: SwitchableProxy = await startSwitchableProxy(endpoint.url);
    cleanups.push(() => proxy.close());
    const storeUrl = proxy.url.replace('://', `://ccotel:${endpoint.token}@`);
    const turnRoots = async () => {
      const result = await store.client.query({ query: "SELECT count() AS n FROM otel_traces WHERE SpanName = 'invoke_agent claude-code'", format: 'JSONEachRow' });
      return Number((await result.json<{ n: string }>())[0].n);
    };

    // Down when the sidecar starts: it waits for the store.
    appendTurns(sessionPath(claude, 'session-a'), 'session-a', 0, 2, HOUR_AGO);
    await proxy.setMode('refused');
    const sidecar = startRun(['--store', storeUrl, '--idle', '1000'], env);
    cleanups.push(() => sidecar.child.kill('SIGKILL'));
    await waitFor('run to wait for the store', () => sidecar.output().includes('store not available'), 30_000);
    await proxy.setMode('up');
    await waitFor('the first 2 turns', async () => (await turnRoots()) === 2, 30_000);

    // INSERTs that run but whose answers are lost: every retry must drop what is stored already.
    await proxy.setMode('lost');
    appendTurns(sessionPath(claude, 'session-b'), 'session-b', 0, 3, HOUR_AGO);
    await waitFor('INSERT answers lost', () => proxy.failedRequests >= 2, 30_000);

    // 503 while the transcripts grow: nothing is written, the sink retries and says so.
    await proxy.setMode('503');
    appendTurns(sessionPath(claude, 'session-a'), 'session-a', 2, 5, HOUR_AGO);
    appendTurns(sessionPath(claude, 'session-b'), 'session-b', 3, 4, HOUR_AGO);
    const failedBefore = proxy.failedRequests;
    await waitFor('two failed deliveries', () => proxy.failedRequests >= failedBefore + 2, 30_000);
    await waitFor('status to show the sink retrying', async () => (await sidecarStatus(env, storeUrl))?.sink.state === 'retrying', 15_000);
    const rootsWhileDown = await turnRoots();
    await sleep(1_000);
    expect(await turnRoots()).toBe(rootsWhileDown);

    // Connection refused, and a new session file meanwhile.
    await proxy.setMode('refused');
    appendTurns(sessionPath(claude, 'session-c', '-home-dev-other'), 'session-c', 0, 2, HOUR_AGO);
    appendTurns(sessionPath(claude, 'session-a'), 'session-a', 5, 6, HOUR_AGO);
    await sleep(2_000);
    expect(sidecar.child.exitCode).toBeNull();

    await proxy.setMode('up');
    const reference = await referenceSpanIds(claude);
    await waitFor('the store to catch up', async () => new Set(await storedSpanIds(store.client)).size >= reference.size, 60_000).catch(() => {});
    await sleep(1_500); // anything still arriving would be a duplicate or an extra
    expect(compareSpanIds(await storedSpanIds(store.client), reference)).toEqual({ missing: 0, extra: 0, duplicates: 0 });
    expect(await turnRoots()).toBe(6 + 4 + 2);
    expect(sidecar.child.exitCode).toBeNull();
    expect(sidecar.output()).not.toContain(endpoint.token); // the store URL is logged without its password
  }, 180_000);

  it('embedded store held by a backfill when run starts: run waits, then catches up exactly', async () => {
    assertBuilt();
    const home = join(work, 'embedded');
    const env = cliEnv(home);
    const claude = join(home, 'claude');
    const store = join(home, 'store');
    await generateCorpus({ seed: 7, root: claude, hostLayout: 'single-root', sessions: 6 });
    appendTurns(sessionPath(claude, 'session-a'), 'session-a', 0, 2, HOUR_AGO);

    // A real backfill takes the store's lock; it is paused while it holds it, so run surely finds it busy.
    mkdirSync(store, { recursive: true });
    const backfill = spawn(process.execPath, [CLI, 'backfill', '--store', store], { env, stdio: 'ignore' });
    const backfillExit = new Promise<number | null>((resolveExit) => backfill.on('exit', (code) => resolveExit(code)));
    cleanups.push(() => backfill.kill('SIGKILL'));
    const lockPath = join(store, 'ccotel.lock');
    await waitFor('the backfill to take the lock', () => existsSync(lockPath) && readFileSync(lockPath, 'utf8').includes('"backfill"'), 30_000);
    backfill.kill('SIGSTOP');

    const sidecar = startRun(['--store', store, '--idle', '1000'], env);
    cleanups.push(() => sidecar.child.kill('SIGKILL'));
    await waitFor('run to wait for the store', () => sidecar.output().includes('store not available'), 30_000);
    expect(sidecar.output()).toContain('ccotel backfill');
    appendTurns(sessionPath(claude, 'session-a'), 'session-a', 2, 4, HOUR_AGO);
    appendTurns(sessionPath(claude, 'session-b'), 'session-b', 0, 2, HOUR_AGO);
    await sleep(1_000);
    expect(sidecar.child.exitCode).toBeNull();

    backfill.kill('SIGCONT');
    expect(await backfillExit).toBe(0);
    const reference = await referenceSpanIds(claude);
    const stored = async () => {
      const result = await runCli(['query', 'SELECT SpanId FROM otel_traces', '--format', 'TSV', '--store', store], env);
      return result.status === 0 ? result.stdout.split('\n').filter(Boolean) : [];
    };
    await waitFor('the store to catch up', async () => new Set(await stored()).size >= reference.size, 90_000).catch(() => {});
    await sleep(1_500);
    expect(compareSpanIds(await stored(), reference)).toEqual({ missing: 0, extra: 0, duplicates: 0 });
    expect(sidecar.output()).toContain('queries served on');
  }, 180_000);
});
