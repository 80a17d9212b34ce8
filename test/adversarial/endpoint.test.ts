// Issue 13, rows 2–5, and issue 28, row 1 (in process): a token holder of the query endpoint, or a user of
// `ccotel query` on an embedded store, gets read-only SQL on the store and nothing more: no file, URL, process,
// dictionary or model. Everything on loopback, every query bounded.
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runQuery } from '../../sidecar/src/commands/query.js';
import { openStore, type Store } from '../../sidecar/src/store/open-store.js';
import { DEFAULT_ENDPOINT_LIMITS, serveStore, type QueryEndpoint } from '../../sidecar/src/store/query-endpoint.js';

/**
 * Issue 28, row 1: each family of functions that reaches outside the store, called as a scalar function, as a
 * table function in DESCRIBE (which readonly lets through: it infers a schema from the file or URL), and inside
 * EXPLAIN, whose query tree folds constants (the file's content). `secret` is a file the engine could read.
 */
function outsideReaches(secret: string, lock: string, peerUrl: string): Record<string, string[]> {
  return {
    files: [
      `SELECT file('${secret}')`,
      `SELECT length(file('${secret}'))`,
      `SELECT file('${lock}')`,
      `SELECT arrayMap(path -> file(path), ['${secret}'])`,
      `SELECT * APPLY(file) FROM (SELECT '${secret}' AS path)`,
      `SELECT COLUMNS('path') APPLY(path -> file(path)) FROM (SELECT '${secret}' AS path)`,
      `EXPLAIN QUERY TREE SELECT file('${secret}')`,
      `DESCRIBE file('${secret}', 'CSVWithNames')`,
      `DESCRIBE fileCluster('default', '${secret}', 'LineAsString')`,
      "DESCRIBE filesystem('/etc')",
      `DESCRIBE icebergLocal('${secret}')`,
    ],
    urls: [
      `DESCRIBE url('${peerUrl}', 'CSV')`,
      `DESCRIBE s3('${peerUrl}', 'CSV')`,
      `DESCRIBE urlCluster('default', '${peerUrl}', 'CSV')`,
      `DESCRIBE azureBlobStorage('${peerUrl}', 'c', 'b')`,
      `DESCRIBE hdfs('hdfs://127.0.0.1:1/x', 'CSV')`,
      "DESCRIBE remote('127.0.0.1', system.one)",
      "DESCRIBE mysql('127.0.0.1:1', 'd', 't', 'u', 'p')",
      "DESCRIBE postgresql('127.0.0.1:1', 'd', 't', 'u', 'p')",
    ],
    processes: ["DESCRIBE executable('id', 'LineAsString')", "SELECT * FROM executable('id', 'LineAsString', 'x String')"],
    dictionaries: ["SELECT dictGet('d', 'a', 1)", "SELECT dictHas('d', 1)", "DESCRIBE dictionary('d')"],
    models: ["SELECT catboostEvaluate('/nonexistent.bin', 1)", 'SELECT * FROM system.models', "SELECT naiveBayesClassifier('m', 'text')"],
    input: ["DESCRIBE input('x String')"],
  };
}

const LIMITS = { ...DEFAULT_ENDPOINT_LIMITS, maxExecutionSeconds: 1, maxResultBytes: 1 << 20, maxBodyBytes: 1 << 20, maxConcurrentQueries: 2 };

describe('query endpoint under a hostile token holder', () => {
  let dir: string;
  let store: Store;
  let endpoint: QueryEndpoint;
  let client: ClickHouseClient;
  let peer: Server;
  let peerRequests = 0;
  let peerUrl: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ccotel-adv-endpoint-'));
    store = await openStore(join(dir, 'store'), { command: 'run', access: 'write' });
    endpoint = await serveStore(store, 'run', LIMITS);
    client = createClient({ url: endpoint.url, username: 'ccotel', password: endpoint.token, request_timeout: 60_000 });
    await store.client.command({ query: 'CREATE TABLE default.victim (id UInt32) ENGINE = MergeTree ORDER BY id' });
    peer = createServer((_request, response) => {
      peerRequests++;
      response.end('1\n');
    });
    await new Promise<void>((resolveListen) => peer.listen(0, '127.0.0.1', () => resolveListen()));
    peerUrl = `http://127.0.0.1:${(peer.address() as { port: number }).port}/x.csv`;
  });

  afterAll(async () => {
    await client.close();
    await endpoint.close();
    await store.close();
    peer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The sidecar's own session still writes: nothing a reader did reached it. */
  async function writerStillWrites(id: number): Promise<void> {
    await store.client.insert({ table: 'default.victim', values: [{ id }], format: 'JSONEachRow' });
    const rows = await store.client.query({ query: `SELECT toUInt32(count()) AS n FROM default.victim WHERE id = ${id}`, format: 'JSONEachRow' });
    expect(await rows.json()).toEqual([{ n: 1 }]);
  }

  it('row 2: URL settings never reach the writer session; a changed setting is refused', async () => {
    const rows = await client.query({ query: 'SELECT 1 AS one', format: 'JSONEachRow', clickhouse_settings: { readonly: '1' } });
    expect(await rows.json()).toEqual([{ one: 1 }]);
    await writerStillWrites(1);
    await expect(client.query({ query: 'SELECT 1', format: 'JSONEachRow', clickhouse_settings: { readonly: '2' } })).rejects.toMatchObject({ type: 'READONLY' });
    await expect(client.query({ query: 'SELECT 1', format: 'JSONEachRow', clickhouse_settings: { max_execution_time: 1000 } })).rejects.toMatchObject({ type: 'READONLY' });
    await writerStillWrites(2);
  });

  it('row 3: writes, DDL, files, URLs and processes are refused; the store is untouched', async () => {
    const secretFile = join(dir, 'private.txt');
    writeFileSync(secretFile, 'private-marker\n', { mode: 0o600 });
    const outFile = join(dir, 'out.tsv');
    const refused = [
      'DROP TABLE default.victim',
      'TRUNCATE TABLE default.victim',
      'INSERT INTO default.victim VALUES (99)',
      'ALTER TABLE default.victim DELETE WHERE 1',
      'CREATE TABLE default.intruder (id UInt32) ENGINE = Memory',
      `SELECT * FROM file('${secretFile}', 'LineAsString')`,
      `SELECT * FROM url('${peerUrl}', 'CSV', 'x UInt8')`,
      `SELECT * FROM s3('${peerUrl}', 'CSV', 'x UInt8')`,
      "SELECT * FROM remote('127.0.0.1', system.one)",
      "SELECT * FROM executable('id', 'LineAsString', 'x String')",
      `SELECT 1 INTO OUTFILE '${outFile}'`,
      `INSERT INTO FUNCTION file('${outFile}', 'TSV', 'x UInt8') SELECT 1`,
      "SET readonly = 0",
      "KILL QUERY WHERE 1",
      "SYSTEM STOP MERGES",
      'SELECT 1; DROP TABLE default.victim',
      'SELECT 1 SETTINGS max_execution_time = 1000',
    ];
    for (const query of refused) {
      const attempt = client.exec({ query }).then(async (result) => {
        for await (const chunk of result.stream) void chunk;
      });
      await expect(attempt, query).rejects.toThrow();
    }
    expect(existsSync(outFile)).toBe(false);
    expect(peerRequests).toBe(0);
    await writerStillWrites(3);
  });

  describe('issue 28 row 1: nothing outside the store is reachable', () => {
    it.each(['files', 'urls', 'processes', 'dictionaries', 'models', 'input'])('%s', async (family) => {
      const secret = join(dir, 'private.txt');
      writeFileSync(secret, 'private-marker,x\n', { mode: 0o600 });
      for (const query of outsideReaches(secret, join(store.target, 'ccotel.lock'), peerUrl)[family]) {
        const attempt = client.exec({ query: `${query} FORMAT TSV` }).then(async (result) => {
          let text = '';
          for await (const chunk of result.stream) text += String(chunk);
          return text;
        });
        await expect(attempt, query).rejects.toMatchObject({ type: 'READONLY', message: expect.stringMatching(/outside the store/) });
      }
      expect(peerRequests).toBe(0);
    });
  });

  it('row 3: the read-only statements a reader needs all run', async () => {
    for (const query of ['SELECT count() FROM default.victim', 'SHOW TABLES', 'DESCRIBE TABLE default.victim', 'EXPLAIN SELECT 1', 'EXISTS TABLE default.victim']) {
      const result = await client.exec({ query: `${query} FORMAT TSV` });
      let text = '';
      for await (const chunk of result.stream) text += String(chunk);
      expect(text.length, query).toBeGreaterThan(0);
    }
  });

  it('row 4: a long query is stopped by the execution time limit, and the writer runs meanwhile', async () => {
    const long = client.query({ query: 'SELECT count() FROM numbers(1000000000000) WHERE sipHash64(number) = 0', format: 'JSONEachRow' });
    await writerStillWrites(4);
    await expect(long).rejects.toMatchObject({ type: 'TIMEOUT_EXCEEDED' });
  });

  it('row 4: queries beyond the concurrency limit are refused at once', async () => {
    const long = () => client.query({ query: 'SELECT count() FROM numbers(1000000000000) WHERE sipHash64(number) = 0', format: 'JSONEachRow' }).then(() => 'done', (error: { type?: string }) => error.type);
    const outcomes = await Promise.all([long(), long(), long()]);
    expect(outcomes.filter((type) => type === 'TOO_MANY_SIMULTANEOUS_QUERIES').length).toBeGreaterThanOrEqual(1);
    expect(outcomes.filter((type) => type === 'TIMEOUT_EXCEEDED').length).toBeGreaterThanOrEqual(1);
  });

  it('row 4: a result beyond the size limit is refused, not built', async () => {
    await expect(client.query({ query: 'SELECT * FROM system.numbers LIMIT 100000000', format: 'JSONEachRow' })).rejects.toMatchObject({ type: 'TOO_MANY_ROWS_OR_BYTES' });
  });

  it('row 5: a body over the limit, or one that inflates over it, is refused with 413', async () => {
    const send = (body: Buffer, headers: Record<string, string>) =>
      new Promise<number | string>((resolveStatus) => {
        const post = request(`${endpoint.url}/?query=`, { method: 'POST', headers: { 'X-ClickHouse-Key': endpoint.token, ...headers } }, (response) => {
          response.resume();
          resolveStatus(response.statusCode ?? 0);
        });
        post.on('error', (error: NodeJS.ErrnoException) => resolveStatus(error.code ?? 'error'));
        post.end(body);
      });
    // Refused from its Content-Length: the answer is 413, or the connection is cut while the body is still going out.
    expect([413, 'ECONNRESET', 'EPIPE']).toContain(await send(Buffer.alloc(2 << 20, 0x20), {}));
    const bomb = gzipSync(Buffer.alloc(64 << 20, 0x20));
    expect(bomb.length).toBeLessThan(LIMITS.maxBodyBytes);
    expect(await send(bomb, { 'Content-Encoding': 'gzip' })).toBe(413);
    expect(await send(Buffer.from('SELECT 1'), {})).toBe(200);
  });

  it('what held: a missing or wrong token gets 401, and the endpoint listens on loopback only', async () => {
    expect(endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (const password of ['', 'wrong', `${endpoint.token}x`]) {
      const intruder = createClient({ url: endpoint.url, username: 'ccotel', password });
      await expect(intruder.query({ query: 'SELECT 1', format: 'JSONEachRow' })).rejects.toMatchObject({ type: 'AUTHENTICATION_FAILED' });
      await intruder.close();
    }
  });
});

describe('`ccotel query` on an embedded store it opens itself', () => {
  it('runs read-only SQL and refuses the rest, with the endpoint rules', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ccotel-adv-query-'));
    try {
      const storeDir = join(dir, 'store');
      // A reader needs a store: only a writer (run, backfill) makes one.
      await (await openStore(storeDir, { command: 'test', access: 'write' })).close();
      let text = '';
      const out = new Writable({ write: (chunk, _encoding, done) => ((text += String(chunk)), done()) });
      await runQuery('SELECT count() FROM otel_traces', 'TSV', { store: storeDir }, out);
      expect(text.trim()).toBe('0');
      for (const sql of ['DROP TABLE otel_traces', `SELECT * FROM file('${join(dir, 'x')}', 'LineAsString')`, `SELECT 1 INTO OUTFILE '${join(dir, 'y')}'`]) {
        await expect(runQuery(sql, 'TSV', { store: storeDir }, out), sql).rejects.toThrow(/readonly|read-only/i);
      }
      // Issue 28, row 1: every family the endpoint refuses.
      const secret = join(dir, 'private.txt');
      writeFileSync(secret, 'private-marker,x\n', { mode: 0o600 });
      for (const sql of Object.values(outsideReaches(secret, join(storeDir, 'ccotel.lock'), 'http://127.0.0.1:1/x.csv')).flat()) {
        await expect(runQuery(sql, 'TSV', { store: storeDir }, out), sql).rejects.toThrow(/outside the store/);
      }
      expect(text).not.toContain('private-marker');
      expect(existsSync(join(dir, 'y'))).toBe(false);
      text = '';
      await runQuery('EXISTS TABLE otel_traces', 'TSV', { store: storeDir }, out);
      expect(text.trim()).toBe('1');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
