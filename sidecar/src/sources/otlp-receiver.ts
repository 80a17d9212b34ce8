// The agent's own telemetry, received: an OTLP/HTTP receiver on loopback (Claude Code's exporter with
// OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf or http/json), /v1/traces, /v1/metrics and /v1/logs, gzip or not; or, with
// a token, on another address for other hosts' sidecars (receiver-access.ts).
// What it receives is handed to `deliver` (the pipeline's processors and sinks) and answered only once that
// resolves, so a request is acknowledged only when it is stored: a store that fails gets a 503, which OTLP
// exporters retry. Answers follow OTLP/HTTP: 200 with an ExportXServiceResponse in the request's encoding
// (partial success when some points have no table), 400 for a body that is not a request, 413 for one too
// large, 415 for another encoding, 401 without the token; errors carry a google.rpc.Status.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectionCap, guardedServer, HEADERS_TIMEOUT_MS, type ConnectionLimits } from '../connection-guard.js';
import { batchSize, type TelemetryBatch } from '../model.js';
import { BodyError, readBody } from '../request-body.js';
import { decodeOtlpProtobuf } from './otlp-protobuf.js';
import { authorized, isLoopback, urlOf } from './receiver-access.js';
import { receivedLogs, receivedMetrics, receivedSpans, type Received } from './otlp-received.js';

type Signal = 'traces' | 'metrics' | 'logs';

const SIGNALS: Record<string, { signal: Signal; convert: (request: unknown) => Received; rejectedField: string }> = {
  '/v1/traces': { signal: 'traces', convert: receivedSpans, rejectedField: 'rejectedSpans' },
  '/v1/metrics': { signal: 'metrics', convert: receivedMetrics, rejectedField: 'rejectedDataPoints' },
  '/v1/logs': { signal: 'logs', convert: receivedLogs, rejectedField: 'rejectedLogRecords' },
};

export interface ReceiverLimits extends ConnectionLimits {
  maxBodyBytes: number;
}

/** Claude Code's batches are small (its exporters send every few seconds); the Collector's receiver allows 20 MiB. */
export const DEFAULT_RECEIVER_LIMITS: ReceiverLimits = { maxConnections: connectionCap(), headersTimeoutMs: HEADERS_TIMEOUT_MS, maxBodyBytes: 16 << 20 };

export interface ReceiverStats {
  /** Requests stored, and their items, by signal; requests refused (400, 404, 413, 415, 503…). */
  requests: Record<Signal, number>;
  items: Record<Signal, number>;
  refused: number;
  /** Epoch ms of the last request stored. */
  lastStoredMs?: number;
}

export interface TelemetryReceiver {
  url: string;
  port: number;
  readonly stats: ReceiverStats;
  close(): Promise<void>;
}

export interface ReceiverOptions {
  /** 0: a free port. */
  port: number;
  /** Default 127.0.0.1; any other than loopback needs a `token`. */
  host?: string;
  /** Required of every request (`Authorization: Bearer <token>`) when set. */
  token?: string;
  /** Resolves once every sink accepted the batch. */
  deliver: (batch: TelemetryBatch) => Promise<void>;
  limits?: ReceiverLimits;
  log?: (message: string) => void;
}

type Encoding = 'protobuf' | 'json';

function encodingOf(request: IncomingMessage): Encoding | undefined {
  const type = String(request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  return undefined;
}

/** Listen on `host` (127.0.0.1):`port`; rejects when the port is taken, or beyond loopback without a token. */
export async function startTelemetryReceiver(options: ReceiverOptions): Promise<TelemetryReceiver> {
  const limits = options.limits ?? DEFAULT_RECEIVER_LIMITS;
  const host = options.host ?? '127.0.0.1';
  if (!isLoopback(host) && !options.token) throw new Error(`receiving on ${host}, beyond loopback, needs a token (receiver_token_file or CCOTEL_RECEIVER_TOKEN)`);
  const stats: ReceiverStats = { requests: { traces: 0, metrics: 0, logs: 0 }, items: { traces: 0, metrics: 0, logs: 0 }, refused: 0 };
  const allowed = (request: IncomingMessage) => options.token === undefined || authorized(request.headers.authorization, options.token);
  // An export in progress keeps its connection while the store takes it; anything else may be closed for a newcomer.
  const trusted = (request: IncomingMessage) => request.method === 'POST' && SIGNALS[pathOf(request)] !== undefined && encodingOf(request) !== undefined && allowed(request);
  const server = guardedServer(limits, trusted, (request, response) => {
    if (!allowed(request)) {
      stats.refused++;
      request.resume();
      reply(response, encodingOf(request) ?? 'json', 401, status(16, 'a valid token is required: Authorization: Bearer <token>'));
      return;
    }
    handle(request, response, options, limits, stats).catch((error: Error) => {
      stats.refused++;
      reply(response, encodingOf(request) ?? 'json', 500, status(13, error.message));
    });
  });
  await new Promise<void>((resolveListen, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(options.port, host, () => resolveListen());
  });
  server.on('error', () => {});
  const { port } = server.address() as AddressInfo;
  return {
    url: urlOf({ host, port }),
    port,
    stats,
    close: () =>
      new Promise<void>((resolveClose) => {
        server.close(() => resolveClose());
        server.closeAllConnections();
      }),
  };
}

function pathOf(request: IncomingMessage): string {
  return (request.url ?? '').split('?')[0];
}

async function handle(request: IncomingMessage, response: ServerResponse, options: ReceiverOptions, limits: ReceiverLimits, stats: ReceiverStats): Promise<void> {
  const route = SIGNALS[pathOf(request)];
  const encoding = encodingOf(request);
  const refuse = (code: number, rpcCode: number, message: string) => {
    stats.refused++;
    request.resume();
    reply(response, encoding ?? 'json', code, status(rpcCode, message));
  };
  // google.rpc codes: 3 INVALID_ARGUMENT, 5 NOT_FOUND, 8 RESOURCE_EXHAUSTED, 12 UNIMPLEMENTED, 14 UNAVAILABLE, 16 UNAUTHENTICATED.
  if (!route) return refuse(404, 5, `no OTLP signal at ${pathOf(request)}: /v1/traces, /v1/metrics or /v1/logs`);
  if (request.method !== 'POST') return refuse(405, 12, 'OTLP/HTTP exports are POSTed');
  if (!encoding) return refuse(415, 3, 'OTLP/HTTP bodies are application/x-protobuf or application/json');
  let received: Received;
  try {
    const body = await readBody(request, limits.maxBodyBytes);
    const decoded = encoding === 'protobuf' ? decodeOtlpProtobuf(route.signal, body) : JSON.parse(body.toString('utf8'));
    received = route.convert(decoded);
  } catch (error) {
    if (error instanceof BodyError && error.status === 413) return refuse(413, 8, error.message);
    return refuse(400, 3, `not an OTLP ${route.signal} request: ${(error as Error).message}`);
  }
  const items = batchSize(received.batch);
  if (items > 0) {
    try {
      await options.deliver(received.batch);
    } catch (error) {
      options.log?.(`received ${route.signal} not stored, the sender is told to retry: ${(error as Error).message}`);
      return refuse(503, 14, 'the store did not take the data; retry');
    }
  }
  stats.requests[route.signal]++;
  stats.items[route.signal] += items;
  stats.lastStoredMs = Date.now();
  reply(response, encoding, 200, exportResponse(received, route.rejectedField));
}

/** The two fields every message sent here has: a varint (field 1) and a string (field 2), each when set. */
interface Answer {
  number?: number;
  text?: string;
  /** JSON names of the two fields, and the object they go in (`partialSuccess`) if any. */
  json: [string, string, string?];
}

function status(code: number, message: string): Answer {
  return { number: code, text: message, json: ['code', 'message'] };
}

function exportResponse(received: Received, rejectedField: string): Answer {
  if (received.rejected === 0) return { json: [rejectedField, 'errorMessage', 'partialSuccess'] };
  return { number: received.rejected, text: received.rejectedWhy, json: [rejectedField, 'errorMessage', 'partialSuccess'] };
}

function reply(response: ServerResponse, encoding: Encoding, code: number, answer: Answer): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  if (!response.req.complete) response.shouldKeepAlive = false;
  const set = answer.number !== undefined || answer.text !== undefined;
  let body: Buffer;
  if (encoding === 'json') {
    const [numberName, textName, wrapper] = answer.json;
    // int64 fields are strings in proto3 JSON; google.rpc.Status.code is an int32.
    const fields = set ? { [numberName]: wrapper ? String(answer.number ?? 0) : (answer.number ?? 0), [textName]: answer.text ?? '' } : undefined;
    body = Buffer.from(JSON.stringify(wrapper ? (fields ? { [wrapper]: fields } : {}) : fields));
  } else {
    const inner = set ? Buffer.concat([varintField(1, answer.number ?? 0), stringField(2, answer.text ?? '')]) : Buffer.alloc(0);
    body = answer.json[2] ? (set ? lengthField(1, inner) : Buffer.alloc(0)) : inner;
  }
  response.writeHead(code, { 'Content-Type': encoding === 'json' ? 'application/json' : 'application/x-protobuf' }).end(body);
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = BigInt(value);
  do {
    const low = Number(rest & 0x7fn);
    rest >>= 7n;
    bytes.push(rest > 0n ? low | 0x80 : low);
  } while (rest > 0n);
  return Buffer.from(bytes);
}

const varintField = (number: number, value: number) => Buffer.concat([varint(number << 3), varint(value)]);
const lengthField = (number: number, payload: Buffer) => Buffer.concat([varint((number << 3) | 2), varint(payload.length), payload]);
const stringField = (number: number, text: string) => lengthField(number, Buffer.from(text, 'utf8'));
