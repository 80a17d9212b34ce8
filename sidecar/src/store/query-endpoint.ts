// While `ccotel run` owns an embedded store (chdb allows one process per data directory), other commands
// reach it through this endpoint: loopback only, protected by a random token, speaking the part of the
// ClickHouse HTTP interface `@clickhouse/client` uses for reading (ping, query/exec, `param_*`, settings
// as URL parameters, errors in ClickHouse's own text form). So `report` and `query` run the same client
// code against a server, a directory, or a running sidecar. Queries run on a read-only session of their
// own (reader.ts); the endpoint bounds what a peer can hold: connections, time to send a request, body
// size (also after decompression) and queries at once.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { BodyError, readBody } from '../request-body.js';
import { connectionCap, guardedServer, HEADERS_TIMEOUT_MS, type ConnectionLimits } from '../connection-guard.js';
import { storeState } from './answer-cache.js';
import { KEEP_ANSWER_HEADER, KeptAnswers } from './kept-answers.js';
import { writeLock, type Store } from './open-store.js';
import { DEFAULT_READER_LIMITS, openReader, type ReaderLimits, type StoreReader } from './reader.js';

export interface QueryEndpoint {
  url: string;
  token: string;
  close(): Promise<void>;
}

export interface EndpointLimits extends ReaderLimits, ConnectionLimits {
  maxBodyBytes: number;
}

export const DEFAULT_ENDPOINT_LIMITS: EndpointLimits = {
  ...DEFAULT_READER_LIMITS,
  maxConnections: connectionCap(),
  headersTimeoutMs: HEADERS_TIMEOUT_MS,
  maxBodyBytes: 16 << 20,
};

/** URL parameters of the ClickHouse HTTP interface that are not settings (`default_format` is the output format when the SQL names none). */
const NOT_SETTINGS = new Set(['query', 'default_format', 'database', 'query_id', 'session_id', 'session_timeout', 'session_check', 'role', 'user', 'password', 'quota_key', 'compress', 'decompress']);
/** Settings of the HTTP layer, not of the engine: this endpoint handles them itself (or has nothing to do). */
const HTTP_SETTINGS = new Set(['enable_http_compression', 'wait_end_of_query', 'send_progress_in_http_headers', 'http_headers_progress_interval_ms', 'http_response_buffer_size', 'http_zlib_compression_level']);

const AUTHENTICATION_FAILED = 'Code: 516. DB::Exception: ccotel: Authentication failed: wrong token for the query endpoint. (AUTHENTICATION_FAILED)\n';

type EndpointError = Error & { code?: string; type?: string; status?: number };

function endpointError(message: string, fields: { code: string; type: string; status: number }): EndpointError {
  return Object.assign(new Error(message), fields);
}

/** Serve `reader` on 127.0.0.1 at a random port; `answers`: those it keeps while the store is unchanged. */
export async function startQueryEndpoint(reader: StoreReader, limits: EndpointLimits = DEFAULT_ENDPOINT_LIMITS, answers?: KeptAnswers): Promise<QueryEndpoint> {
  const token = randomBytes(24).toString('base64url');
  const expectedDigest = digest(token);
  const handler: Handler = { reader, expectedDigest, limits, running: 0, answers };
  // A client with the token keeps its connection while its query runs (up to the query's own limit).
  const server = guardedServer(limits, (request) => authorized(request, expectedDigest), (request, response) => {
    handle(handler, request, response).catch((error: EndpointError) => sendError(response, error));
  });
  await new Promise<void>((resolveListen, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(0, '127.0.0.1', () => resolveListen());
  });
  // Accept errors (EMFILE) after listening are the peer's problem, not the process's.
  server.on('error', () => {});
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
export async function serveStore(store: Store, command: string, limits: EndpointLimits = DEFAULT_ENDPOINT_LIMITS): Promise<QueryEndpoint> {
  const chdbDir = join(store.target, 'chdb');
  const reader = await openReader(chdbDir, limits);
  const endpoint = await startQueryEndpoint(reader, limits, new KeptAnswers((sql) => storeState(chdbDir)(sql)));
  writeLock(store.target, { pid: process.pid, command, endpoint: { url: endpoint.url, token: endpoint.token } });
  return {
    ...endpoint,
    close: async () => {
      await endpoint.close();
      reader.close();
    },
  };
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

interface Handler {
  reader: StoreReader;
  /** The answers kept while the store is unchanged, for the questions that ask for it. */
  answers?: KeptAnswers;
  expectedDigest: Buffer;
  limits: EndpointLimits;
  /** Queries being answered now. */
  running: number;
}

async function handle(handler: Handler, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const { reader, expectedDigest, limits } = handler;
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
  if (handler.running >= limits.maxConcurrentQueries) {
    request.resume();
    throw endpointError(`ccotel: too many queries at once (${limits.maxConcurrentQueries})`, { code: '202', type: 'TOO_MANY_SIMULTANEOUS_QUERIES', status: 503 });
  }
  handler.running++;
  let result: Buffer;
  let tag: string | undefined;
  try {
    const body = await readQueryBody(request, limits.maxBodyBytes);
    const { sql, queryParams } = await statement(url, request, body);
    const format = url.searchParams.get('default_format') || 'TabSeparated';
    const question = { sql, format, params: queryParams, settings: settingsOf(url) };
    const ask = () => reader.query(question);
    const kept = handler.answers && request.headers[KEEP_ANSWER_HEADER] === '1' ? handler.answers : undefined;
    const given = /^"([^"]*)"$/.exec(String(request.headers['if-none-match'] ?? ''))?.[1];
    if (kept && given !== undefined && kept.stillAnswers(question, given)) {
      response.writeHead(304, { ETag: `"${given}"` }).end();
      return;
    }
    ({ answer: result, tag } = kept ? await kept.answer(question, ask) : { answer: await ask() });
  } finally {
    handler.running--;
  }
  const queryId = url.searchParams.get('query_id') || randomUUID();
  const compress = url.searchParams.get('enable_http_compression') === '1' && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
  const headers: Record<string, string> = {
    'Content-Type': 'text/plain; charset=UTF-8',
    'X-ClickHouse-Query-Id': queryId,
    'X-ClickHouse-Summary': JSON.stringify({ result_bytes: String(result.length) }),
    ...(tag === undefined ? {} : { ETag: `"${tag}"` }),
  };
  if (compress) {
    response.writeHead(200, { ...headers, 'Content-Encoding': 'gzip' }).end(gzipSync(result));
    return;
  }
  response.writeHead(200, headers).end(result);
}

/** The body, or the error ClickHouse would send for it (too large: BAD_ARGUMENTS; not gzip: CANNOT_DECOMPRESS). */
async function readQueryBody(request: IncomingMessage, maxBytes: number): Promise<Buffer> {
  try {
    return await readBody(request, maxBytes);
  } catch (error) {
    if (!(error instanceof BodyError)) throw error;
    const [code, type] = error.status === 413 ? ['36', 'BAD_ARGUMENTS'] : ['354', 'CANNOT_DECOMPRESS'];
    throw endpointError(`ccotel: ${error.message}`, { code, type, status: error.status });
  }
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
    const form = await new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData();
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

function settingsOf(url: URL): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const [key, value] of url.searchParams) {
    if (!NOT_SETTINGS.has(key) && !HTTP_SETTINGS.has(key) && !key.startsWith('param_')) settings[key] = value;
  }
  return settings;
}

/** An error the way ClickHouse sends it: status 500, the code in a header, `Code: N. DB::Exception: … (TYPE)`. */
function sendError(response: ServerResponse, error: EndpointError): void {
  if (response.headersSent) {
    response.destroy(error);
    return;
  }
  // A body left unread (too large) is not drained: the connection closes after the answer.
  if (!response.req.complete) response.shouldKeepAlive = false;
  const code = /^\d+$/.test(error.code ?? '') ? error.code! : '1001';
  const type = error.type ?? 'STD_EXCEPTION';
  response
    .writeHead(error.status ?? 500, { 'X-ClickHouse-Exception-Code': code, 'Content-Type': 'text/plain; charset=UTF-8' })
    .end(`Code: ${code}. DB::Exception: ${error.message.trimEnd()} (${type})\n`);
}
