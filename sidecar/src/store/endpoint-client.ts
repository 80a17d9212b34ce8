// The report's reads through a running sidecar's query endpoint, without `@clickhouse/client`: loading that client
// (42 CommonJS modules) cost `ccotel report` ~0.07 s of CPU, a quarter of its answer (issue 36). The report calls only
// `query` with JSONEachRow and `json()` on its result (report/select.ts), so this sends what the client would send
// for that — the SQL with ` FORMAT JSONEachRow`, `param_*` and settings as URL parameters, the token as Basic
// authentication, the headers it is given — with the client's own formatting of parameters and parsing of errors (two of its modules that
// require nothing else), and reads the rows the same way.
import type { ClickHouseClient, QueryParams } from '@clickhouse/client';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import type { TaggingClient } from './kept-answers.js';

const require = createRequire(import.meta.url);
const { formatQueryParams } = require('@clickhouse/client/dist/common/data_formatter/format_query_params.js') as { formatQueryParams(options: { value: unknown }): string };
const { parseError } = require('@clickhouse/client/dist/common/error/error.js') as { parseError(input: string): Error };

export interface EndpointAddress {
  url: string;
  token: string;
  database: string;
}

/** The URL parameters of `params`, as `@clickhouse/client` builds them (utils/url.ts `toSearchParams`). */
function searchParams(params: QueryParams, database: string): URLSearchParams {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params.query_params ?? {})) search.append(`param_${key}`, formatQueryParams({ value }));
  for (const [key, value] of Object.entries(params.clickhouse_settings ?? {})) {
    if (value !== undefined) search.append(key, typeof value === 'boolean' ? (value ? '1' : '0') : String(value));
  }
  if (database !== 'default') search.append('database', database);
  return search;
}

interface Response {
  status: number;
  text: string;
  /** The answer's tag (ETag), when the endpoint gives one. */
  tag?: string;
}

function post(address: EndpointAddress, params: QueryParams, headers: Record<string, string> = {}): Promise<Response> {
  const body = `${params.query.trim().replace(/;+$/, '')} \nFORMAT JSONEachRow`;
  const url = new URL(`/?${searchParams(params, address.database)}`, address.url);
  return new Promise((resolveResponse, reject) => {
    const sent = request(url, {
      method: 'POST',
      headers: { ...params.http_headers, ...headers, Authorization: `Basic ${Buffer.from(`ccotel:${address.token}`).toString('base64')}`, 'Content-Length': Buffer.byteLength(body) },
    }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = response.statusCode ?? 0;
        if (status === 200 || status === 304) resolveResponse({ status, text, tag: /^"([^"]*)"$/.exec(response.headers.etag ?? '')?.[1] });
        else reject(parseError(text));
      });
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

/** A client whose `query` (JSONEachRow only), `stillAnswers` and `close` are what `report` needs of the endpoint. */
export function endpointClient(address: EndpointAddress): ClickHouseClient & TaggingClient {
  const client: Pick<ClickHouseClient, 'close'> & TaggingClient = {
    query: async (params: QueryParams) => {
      if (params.format !== 'JSONEachRow') throw new Error(`endpointClient reads JSONEachRow, not ${params.format}`);
      const { text, tag } = await post(address, params);
      const rows = text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as unknown);
      return { json: async <T>() => rows as T[], tag };
    },
    // If-None-Match: the endpoint says 304 when the tagged answer still stands, else it answers anew (and keeps that).
    stillAnswers: async (params, tag) => (await post(address, params, { 'If-None-Match': `"${tag}"` })).status === 304,
    close: async () => {},
  };
  return client as unknown as ClickHouseClient & TaggingClient;
}
