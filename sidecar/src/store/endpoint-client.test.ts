// The report's light client of the query endpoint sends what `@clickhouse/client` sends for the same query and
// reads the same rows and errors back: the endpoint sees the same request from either.
import { ClickHouseLogLevel, createClient, type ClickHouseClient, type QueryParams } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointClient } from './endpoint-client.js';
import { startQueryEndpoint, type QueryEndpoint } from './query-endpoint.js';
import type { ReadRequest } from './reader.js';

describe('endpointClient', () => {
  let endpoint: QueryEndpoint;
  let official: ClickHouseClient;
  let light: ClickHouseClient;
  const asked: ReadRequest[] = [];

  beforeAll(async () => {
    endpoint = await startQueryEndpoint({
      query: async (request) => {
        asked.push(request);
        if (request.sql.includes('fails')) throw Object.assign(new Error("ccotel: Unknown identifier 'fails'"), { code: '47', type: 'UNKNOWN_IDENTIFIER' });
        return Buffer.from('{"id":1,"name":"it\'s one"}\n{"id":2,"name":"two\\ttabs"}\n');
      },
      close: () => {},
    });
    official = createClient({ url: endpoint.url, username: 'ccotel', password: endpoint.token, database: 'facts', log: { level: ClickHouseLogLevel.OFF } });
    light = endpointClient({ url: endpoint.url, token: endpoint.token, database: 'facts' });
  });

  afterAll(async () => {
    await official.close();
    await endpoint.close();
  });

  /** What the endpoint was asked and what came back, through `client`. */
  async function through(client: ClickHouseClient, params: QueryParams): Promise<{ request: ReadRequest; rows: unknown }> {
    asked.length = 0;
    const rows = await (await client.query(params)).json();
    return { request: asked[0], rows };
  }

  it('asks the same statement, parameters and settings and reads the same rows', async () => {
    const params: QueryParams = {
      query: "SELECT id, name FROM t WHERE tz = {tz:String} AND s IN {sessions:Array(String)} AND n > {n:UInt32};;",
      query_params: { tz: "Europe/Paris\t'quoted'\\", sessions: ['a', "b'c"], n: 3 },
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
      format: 'JSONEachRow',
    };
    const theirs = await through(official, params);
    const ours = await through(light, params);
    expect(ours).toEqual(theirs);
    expect(ours.rows).toEqual([{ id: 1, name: "it's one" }, { id: 2, name: 'two\ttabs' }]);
    expect(ours.request.params).toMatchObject({ tz: "Europe/Paris\\t\\'quoted\\'\\\\", sessions: "['a','b\\'c']", n: '3' });
  });

  it('fails with the error the client would raise: code, type and message', async () => {
    const params: QueryParams = { query: 'SELECT fails', format: 'JSONEachRow' };
    const theirs = await official.query(params).catch((error: unknown) => error);
    const ours = await light.query(params).catch((error: unknown) => error);
    expect(ours).toBeInstanceOf(Error);
    expect(ours).toMatchObject({ message: (theirs as Error).message, code: '47', type: 'UNKNOWN_IDENTIFIER' });
  });

  it('refuses a wrong token as the endpoint does', async () => {
    const wrong = endpointClient({ url: endpoint.url, token: 'not-the-token', database: 'default' });
    await expect(wrong.query({ query: 'SELECT 1', format: 'JSONEachRow' })).rejects.toMatchObject({ code: '516', type: 'AUTHENTICATION_FAILED' });
  });
});
