// While `ccotel run` owns an embedded store (chdb allows one process per data directory), other commands
// reach it through this endpoint: loopback only, protected by a random token, speaking the part of the
// ClickHouse HTTP interface `@clickhouse/client` uses (ping, query/exec/command, insert, `param_*`,
// settings as URL parameters, errors in ClickHouse's own text form). So `report` and `query` run the
// same client code against a server, a directory, or a running sidecar.
import type { ClickHouseClient } from '@clickhouse/client';
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import { writeLock, type Store } from './open-store.js';
import { buffer } from 'node:stream/consumers';

export interface QueryEndpoint {
  url: string;
  token: string;
  close(): Promise<void>;
}

/** URL parameters of the ClickHouse HTTP interface that are not settings. */
const NOT_SETTINGS = new Set(['query', 'database', 'query_id', 'session_id', 'session_timeout', 'session_check', 'role', 'user', 'password', 'quota_key', 'compress', 'decompress']);

const AUTHENTICATION_FAILED = 'Code: 516. DB::Exception: ccotel: Authentication failed: wrong token for the query endpoint. (AUTHENTICATION_FAILED)\n';

/** Serve `client` on 127.0.0.1 at a random port. */
export async function startQueryEndpoint(client: ClickHouseClient): Promise<QueryEndpoint> {
  const token = randomBytes(24).toString('base64url');
  const expectedDigest = digest(token);
  const server = createServer((request, response) => {
    handle(client, expectedDigest, request, response).catch((error: Error) => sendError(response, error));
  });
  // The client keeps sockets alive; close() must not wait for them.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolveListen, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(0, '127.0.0.1', () => resolveListen());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    close: () =>
      new Promise<void>((resolveClose) => {
        server.close(() => resolveClose());
        server.closeAllConnections();
      }),
  };
}

/** Serve an embedded store and publish the endpoint in its lock file, where `openStore` finds it. */
export async function serveStore(store: Store, command: string): Promise<QueryEndpoint> {
  const endpoint = await startQueryEndpoint(store.client);
  writeLock(store.target, { pid: process.pid, command, endpoint: { url: endpoint.url, token: endpoint.token } });
  return endpoint;
}

/** Fixed-length digests, so the comparison takes the same time whatever the guess. */
function digest(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

function authorized(request: IncomingMessage, expectedDigest: Buffer): boolean {
  let password = request.headers['x-clickhouse-key'];
  const header = request.headers.authorization;
  if (header?.startsWith('Basic ')) {
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
    password = decoded.slice(decoded.indexOf(':') + 1);
  }
  return typeof password === 'string' && timingSafeEqual(digest(password), expectedDigest);
}

async function handle(client: ClickHouseClient, expectedDigest: Buffer, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  if (url.pathname === '/ping') {
    response.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8' }).end('Ok.\n');
    return;
  }
  if (!authorized(request, expectedDigest)) {
    request.resume();
    response.writeHead(401, { 'X-ClickHouse-Exception-Code': '516', 'Content-Type': 'text/plain; charset=UTF-8' }).end(AUTHENTICATION_FAILED);
    return;
  }
  const body = await readBody(request);
  const { sql, queryParams } = await statement(url, request, body);
  const settings = settingsOf(url);
  const queryId = url.searchParams.get('query_id') || randomUUID();
  const result = await client.exec({
    query: bindParameters(sql, queryParams),
    query_id: queryId,
    clickhouse_settings: { default_format: 'TabSeparated', ...settings },
  });
  const compress = settings.enable_http_compression === '1' && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
  const headers: Record<string, string> = {
    'Content-Type': 'text/plain; charset=UTF-8',
    'X-ClickHouse-Query-Id': queryId,
    'X-ClickHouse-Summary': JSON.stringify(result.summary ?? {}),
  };
  if (compress) {
    const chunks: Buffer[] = [];
    for await (const chunk of result.stream) chunks.push(chunk as Buffer);
    response.writeHead(200, { ...headers, 'Content-Encoding': 'gzip' }).end(gzipSync(Buffer.concat(chunks)));
    return;
  }
  response.writeHead(200, headers);
  await pipeline(result.stream, response);
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const body = await buffer(request);
  return request.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
}

/**
 * The SQL and its parameters, as ClickHouse reads them: the `query` URL parameter followed by the body
 * (insert data, or the whole query), or the parts of a multipart form (large `param_*` values).
 */
async function statement(url: URL, request: IncomingMessage, body: Buffer): Promise<{ sql: string; queryParams: Record<string, string> }> {
  const fields = new Map<string, string>();
  for (const [key, value] of url.searchParams) fields.set(key, value);
  let text = body.toString('utf8');
  const contentType = request.headers['content-type'] ?? '';
  if (contentType.startsWith('multipart/form-data')) {
    const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
    for (const [key, value] of form) fields.set(key, String(value));
    text = '';
  }
  const queryParams: Record<string, string> = {};
  for (const [key, value] of fields) if (key.startsWith('param_')) queryParams[key.slice('param_'.length)] = value;
  const head = fields.get('query') ?? '';
  const sql = head && text ? `${head}\n${text}` : head || text;
  if (sql.trim() === '') throw Object.assign(new Error('Empty query'), { code: '62', type: 'SYNTAX_ERROR' });
  return { sql, queryParams };
}

/**
 * HTTP parameters arrive as text in ClickHouse's escaped format, which chdb's own binder would escape a
 * second time; `SET param_x = '<that text>'` hands them to the engine exactly as a server reads them.
 */
function bindParameters(sql: string, queryParams: Record<string, string>): string {
  const sets = Object.entries(queryParams).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw Object.assign(new Error(`Bad parameter name: ${name}`), { code: '36', type: 'BAD_ARGUMENTS' });
    return `SET param_${name} = '${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'; `;
  });
  return sets.join('') + sql;
}

function settingsOf(url: URL): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const [key, value] of url.searchParams) {
    if (!NOT_SETTINGS.has(key) && !key.startsWith('param_')) settings[key] = value;
  }
  return settings;
}

/** An error the way ClickHouse sends it: status 500, the code in a header, `Code: N. DB::Exception: … (TYPE)`. */
function sendError(response: ServerResponse, error: Error & { code?: string; type?: string }): void {
  if (response.headersSent) {
    response.destroy(error);
    return;
  }
  const code = /^\d+$/.test(error.code ?? '') ? error.code! : '1001';
  const type = error.type ?? 'STD_EXCEPTION';
  response
    .writeHead(500, { 'X-ClickHouse-Exception-Code': code, 'Content-Type': 'text/plain; charset=UTF-8' })
    .end(`Code: ${code}. DB::Exception: ${error.message.trimEnd()} (${type})\n`);
}
