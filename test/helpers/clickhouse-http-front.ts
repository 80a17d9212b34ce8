// FOR TESTS ONLY: a small ClickHouse HTTP interface in front of the embedded ClickHouse engine (chdb), so the
// gateway's real clickhouse exporter (clickhouse-go v2 over `http://`) and `ccotel report --store URL`
// (@clickhouse/client) can write and read a real ClickHouse where no ClickHouse server package exists. It is no
// server to deploy: one process, one engine, loopback only, no users or passwords checked.
//
// What it takes, as a ClickHouse server does (https://clickhouse.com/docs/interfaces/http):
//   - GET /ping → "Ok.";
//   - a query in the `query` URL parameter (then the body is data appended to it) or in the body;
//     `param_<name>` values for {name:Type} placeholders; `default_format`; `database` (only the one it serves);
//   - `decompress=1`: the body is in ClickHouse's compressed-block framing (LZ4, ZSTD or none, checksums checked);
//     `Content-Encoding: gzip|deflate|br` bodies too;
//   - `compress=1`: the answer is framed the same way (LZ4);
//   - `client_protocol_version` > 0 with Native answers: blocks carry the block info and per-column serialization
//     byte that revision asks for (clickhouse-go reads its hello, DESCRIBE and ping answers so). Only blocks whose
//     columns are String or fixed-width numbers are converted; others get a clear error;
//   - INSERT … FORMAT Native with a body (what clickhouse-go's batches send): the engine reads the block from a
//     temporary file (`file(…, 'Native')`);
//   - every other setting in the URL is ignored (the engine's defaults apply).
// Errors answer 500 with `X-ClickHouse-Exception-Code` and "Code: N. DB::Exception: …", as the server does.
//
// Tables, views and summaries are made by the SQL files given with --schema, each run whole as the Kubernetes
// schema Job runs it (clickhouse-client --multiquery < file); by default the single-node files of schemas/sql.
//
// Run alone (chdb holds one engine per process): test/helpers/clickhouse-http-front-cli.ts.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { Session } from 'chdb';
import { decodeFrames, encodeFrames } from './clickhouse-compressed-block.js';

const repoRoot = resolve(import.meta.dirname, '..', '..');
export const SINGLE_NODE_SCHEMAS = [join(repoRoot, 'schemas', 'sql', 'otel_tables.sql'), join(repoRoot, 'schemas', 'sql', 'ccotel_summaries.sql')];

/** The revision from which a Native column carries a "custom serialization" byte (ClickHouse's constant). */
const REVISION_WITH_CUSTOM_SERIALIZATION = 54454;
/** Block info as the TCP protocol writes it: field 1 is_overflows = false, field 2 bucket_num = -1, end. */
const BLOCK_INFO = Buffer.from([1, 0, 2, 0xff, 0xff, 0xff, 0xff, 0]);
const FIXED_WIDTH: Record<string, number> = { UInt8: 1, Int8: 1, Bool: 1, UInt16: 2, Int16: 2, UInt32: 4, Int32: 4, Float32: 4, UInt64: 8, Int64: 8, Float64: 8, DateTime: 4 };
const NATIVE_INSERT = /^\s*(INSERT\s+INTO\s+[\s\S]+?)\s+FORMAT\s+Native\s*$/i;

class FrontError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface ClickHouseFront {
  url: string;
  close(): Promise<void>;
}

export interface FrontOptions {
  /** The engine's data directory (kept across restarts: a restarted front finds its tables and rows). */
  dataDir: string;
  port?: number;
  schemaFiles?: string[];
  database?: string;
}

export async function startClickHouseFront(options: FrontOptions): Promise<ClickHouseFront> {
  const database = options.database ?? 'default';
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const spool = join(options.dataDir, 'native-inserts');
  mkdirSync(spool, { recursive: true, mode: 0o700 });
  const session = new Session(join(options.dataDir, 'chdb'));
  for (const file of options.schemaFiles ?? SINGLE_NODE_SCHEMAS) await session.queryAsync(readFileSync(file, 'utf8'));

  // One query at a time: the engine's session is not shared by concurrent queries.
  let tail: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = tail.then(work, work);
    tail = run.catch(() => undefined);
    return run;
  };
  let inserts = 0;

  async function execute(url: URL, body: Buffer): Promise<{ bytes: Buffer; format: string }> {
    const params = url.searchParams;
    const named = params.get('database');
    if (named && named !== database) throw new FrontError(81, `Database ${named} does not exist (this test front serves ${database} only)`);
    const format = params.get('default_format') ?? 'TabSeparated';
    const queryParams = Object.fromEntries([...params].filter(([key]) => key.startsWith('param_')).map(([key, value]) => [key.slice('param_'.length), value]));
    const inUrl = params.get('query');
    const sql = inUrl ?? body.toString('utf8');
    const data = inUrl === null ? Buffer.alloc(0) : body;
    const native = NATIVE_INSERT.exec(sql);
    if (native && data.length > 0) {
      const file = join(spool, `${process.pid}-${++inserts}.native`);
      writeFileSync(file, data, { mode: 0o600 });
      try {
        await serial(() => session.queryAsync(`${native[1]} SELECT * FROM file('${file}', 'Native')`));
      } finally {
        rmSync(file, { force: true });
      }
      return { bytes: Buffer.alloc(0), format };
    }
    const text = data.length > 0 ? `${sql}\n${data.toString('utf8')}` : sql;
    const result = await serial(() =>
      Object.keys(queryParams).length > 0 ? session.queryBindAsync(text, queryParams, { format }) : session.queryAsync(text, { format }),
    );
    return { bytes: Buffer.from(result.bytes()), format };
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://front');
    if (url.pathname === '/ping' || (url.pathname === '/' && request.method === 'GET' && !url.searchParams.has('query'))) {
      response.writeHead(200, { 'Content-Type': 'text/plain' }).end('Ok.\n');
      return;
    }
    const compress = url.searchParams.get('compress') === '1';
    try {
      const body = requestBody(await readAll(request), request.headers['content-encoding'], url.searchParams.get('decompress') === '1');
      const { bytes, format } = await execute(url, body);
      const revision = Number(url.searchParams.get('client_protocol_version') ?? 0);
      const answer = format === 'Native' && revision > 0 && bytes.length > 0 ? nativeAtRevision(bytes, revision) : bytes;
      const out = compress && answer.length > 0 ? encodeFrames(answer) : answer;
      response.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': out.length, 'X-ClickHouse-Format': format }).end(out);
    } catch (error) {
      const code = error instanceof FrontError ? error.code : Number(/Code: (\d+)/.exec(String(error))?.[1] ?? 1002);
      const message = String((error as Error).message ?? error).replace(/^Chdb\w*Error: /, '');
      const text = Buffer.from(`${message.startsWith('Code:') ? message : `Code: ${code}. DB::Exception: ${message}`}\n`);
      const out = compress ? encodeFrames(text) : text;
      response.writeHead(500, { 'Content-Type': 'text/plain', 'X-ClickHouse-Exception-Code': String(code), 'Content-Length': out.length }).end(out);
    }
  }

  // A server takes a URL of up to 1 MiB (http_max_uri_size); Node's own limit, 16 kB of request line and headers,
  // refused the sink's id lookups (2 000 ids in the URL's parameters) before they reached this front.
  const server = createServer({ maxHeaderSize: 1 << 20 }, (request, response) => void handle(request, response));
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(options.port ?? 0, '127.0.0.1', () => done());
  });
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      await closeServer(server);
      await tail;
      session.close();
    },
  };
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((done) => server.close(() => done()));
}

async function readAll(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function requestBody(raw: Buffer, encoding: string | undefined, framed: boolean): Buffer {
  let body = raw;
  if (encoding === 'gzip') body = gunzipSync(raw);
  else if (encoding === 'deflate') body = inflateSync(raw);
  else if (encoding === 'br') body = brotliDecompressSync(raw);
  else if (encoding && encoding !== 'identity') throw new FrontError(1002, `Content-Encoding ${encoding} is not supported by this test front`);
  return framed ? decodeFrames(body) : body;
}

/**
 * The engine writes Native at revision 0; a client that named a revision reads each block with block info first and,
 * from REVISION_WITH_CUSTOM_SERIALIZATION on, a serialization byte after each column's type.
 */
function nativeAtRevision(bytes: Buffer, revision: number): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  const varint = (): number => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = bytes[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
  };
  const string = (): Buffer => {
    const length = varint();
    at += length;
    return bytes.subarray(at - length, at);
  };
  while (at < bytes.length) {
    out.push(BLOCK_INFO);
    const blockStart = at;
    const columns = varint();
    const rows = varint();
    out.push(bytes.subarray(blockStart, at));
    for (let column = 0; column < columns; column++) {
      const headerStart = at;
      string();
      const type = string().toString('utf8');
      out.push(bytes.subarray(headerStart, at));
      if (revision >= REVISION_WITH_CUSTOM_SERIALIZATION) out.push(Buffer.from([0]));
      const dataStart = at;
      if (type === 'String') for (let row = 0; row < rows; row++) string();
      else if (FIXED_WIDTH[type] !== undefined) at += FIXED_WIDTH[type] * rows;
      else throw new FrontError(48, `Native answers at client_protocol_version ${revision} of ${type} columns are not supported by this test front`);
      out.push(bytes.subarray(dataStart, at));
    }
  }
  return Buffer.concat(out);
}
