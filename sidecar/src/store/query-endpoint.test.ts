import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, readLock, type Store } from './open-store.js';
import { KEEP_ANSWER_HEADER } from './kept-answers.js';
import { serveStore, type QueryEndpoint } from './query-endpoint.js';

describe('query endpoint', () => {
  let dir: string;
  let store: Store;
  let endpoint: QueryEndpoint;
  let client: ClickHouseClient;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ccotel-endpoint-'));
    store = await openStore(join(dir, 'store'), { command: 'run', access: 'write' });
    endpoint = await serveStore(store, 'run');
    client = createClient({ url: endpoint.url, username: 'ccotel', password: endpoint.token });
    await store.client.command({ query: 'CREATE TABLE IF NOT EXISTS default.endpoint_t (id UInt32, name String) ENGINE = MergeTree ORDER BY id' });
  });

  afterAll(async () => {
    await client.close();
    await endpoint.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('publishes url and token in the lock file, readable only by the owner', () => {
    const lock = readLock(join(dir, 'store'));
    expect(lock?.endpoint).toEqual({ url: endpoint.url, token: endpoint.token });
    expect(endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(statSync(join(dir, 'store', 'ccotel.lock')).mode & 0o777).toBe(0o600);
  });

  it('answers ping, query with parameters and settings, and exec', async () => {
    expect((await client.ping()).success).toBe(true);
    await store.client.insert({ table: 'default.endpoint_t', values: [{ id: 1, name: 'one' }, { id: 2, name: "it's two" }], format: 'JSONEachRow' });
    const rows = await client.query({
      query: 'SELECT id, name FROM default.endpoint_t WHERE id >= {min:UInt32} AND name IN {names:Array(String)} ORDER BY id',
      query_params: { min: 1, names: ['one', "it's two"] },
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
      format: 'JSONEachRow',
    });
    expect(await rows.json()).toEqual([{ id: 1, name: 'one' }, { id: 2, name: "it's two" }]);
    const exec = await client.exec({ query: 'SELECT count() FROM default.endpoint_t FORMAT TSV' });
    let text = '';
    for await (const chunk of exec.stream) text += String(chunk);
    expect(text.trim()).toBe('2');
  });

  it('answers a question that asks for it from what it kept, and anew once an insert changed the store', async () => {
    const count = async () => {
      const result = await client.query({ query: 'SELECT count() AS n FROM default.endpoint_t', format: 'JSONEachRow', http_headers: { [KEEP_ANSWER_HEADER]: '1' } });
      return ((await result.json()) as { n: string }[])[0].n;
    };
    const before = await count();
    expect(await count()).toBe(before);
    await store.client.insert({ table: 'default.endpoint_t', values: [{ id: 100, name: 'kept?' }], format: 'JSONEachRow' });
    expect(Number(await count())).toBe(Number(before) + 1);
  });

  it('answers in the default_format a plain HTTP client asks for, as ClickHouse does', async () => {
    const response = await fetch(`${endpoint.url}/?default_format=JSONEachRow`, {
      method: 'POST',
      body: 'SELECT toUInt8(1) AS one',
      headers: { authorization: `Basic ${Buffer.from(`ccotel:${endpoint.token}`).toString('base64')}` },
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('{"one":1}\n');
  });

  it('sends large parameter lists as multipart and still binds them', async () => {
    const many = createClient({ url: endpoint.url, username: 'ccotel', password: endpoint.token, use_multipart_params: true } as never);
    const ids = Array.from({ length: 5000 }, (_, i) => `id-${i}`);
    const result = await many.query({ query: 'SELECT toUInt32(length({ids:Array(String)})) AS n', query_params: { ids }, format: 'JSONEachRow' });
    expect(await result.json()).toEqual([{ n: 5000 }]);
    await many.close();
  });

  it('raises ClickHouse errors with their code and type', async () => {
    await expect(client.query({ query: 'SELEC 1', format: 'JSONEachRow' })).rejects.toMatchObject({ code: '62', type: 'SYNTAX_ERROR' });
    await expect(client.query({ query: 'SELECT * FROM default.no_such_table', format: 'JSONEachRow' })).rejects.toMatchObject({ type: 'UNKNOWN_TABLE' });
  });

  it('refuses a wrong token', async () => {
    const intruder = createClient({ url: endpoint.url, username: 'ccotel', password: 'not-the-token' });
    await expect(intruder.query({ query: 'SELECT 1', format: 'JSONEachRow' })).rejects.toMatchObject({ type: 'AUTHENTICATION_FAILED' });
    await intruder.close();
  });
});
