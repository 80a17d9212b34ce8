// One OTLP/HTTP protobuf POST and what its answer means: accepted, worth retrying (and when), or rejected
// for good. Endpoints, headers, timeout, compression and TLS files come from the standard
// OTEL_EXPORTER_OTLP_* variables, read by the official exporter's own configuration code, so they mean
// exactly what they mean for any OpenTelemetry SDK. Retrying and queueing are the caller's (otlp-sink.ts).
import { convertLegacyHttpOptions } from '@opentelemetry/otlp-exporter-base/node-http';
import http from 'node:http';
import https from 'node:https';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { partialRejection, type PartialRejection, type Signal } from './otlp-convert.js';

const gzipAsync = promisify(gzip);

export const SIGNALS: readonly Signal[] = ['traces', 'logs', 'metrics'];
const ENV_NAME = { traces: 'TRACES', logs: 'LOGS', metrics: 'METRICS' } as const;

export interface SignalTarget {
  url: string;
  headers: Record<string, string>;
  compression: 'gzip' | 'none';
  timeoutMs: number;
  agent: http.Agent;
}

export type SendOutcome =
  | { kind: 'accepted'; partial?: PartialRejection }
  | { kind: 'retry'; reason: string; retryAfterMs?: number }
  /** HTTP 413: the same items may pass in smaller requests. */
  | { kind: 'too_large'; reason: string }
  | { kind: 'rejected'; reason: string };

/** Bytes of an answer read: a partial-success message fits many times over; the rest is not held. */
export const MAX_ANSWER_BYTES = 64 * 1024;

export class OtlpConfigError extends Error {
  override name = 'OtlpConfigError';
}

/**
 * Where and how each signal is sent. `endpoint` is the base URL (`--otlp` or OTEL_EXPORTER_OTLP_ENDPOINT):
 * `/v1/<signal>` is appended; a per-signal OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT is used as given. Like the
 * official exporters, this reads process.env.
 */
export async function resolveTargets(endpoint: string): Promise<Record<Signal, SignalTarget>> {
  const env = process.env;
  const targets = {} as Record<Signal, SignalTarget>;
  for (const signal of SIGNALS) {
    const name = ENV_NAME[signal];
    const protocol = env[`OTEL_EXPORTER_OTLP_${name}_PROTOCOL`] ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
    if (protocol && protocol.trim() !== 'http/protobuf') {
      throw new OtlpConfigError(`ccotel exports OTLP/HTTP protobuf only; OTEL_EXPORTER_OTLP_PROTOCOL is "${protocol}" (use http/protobuf and the HTTP port, usually 4318)`);
    }
    const perSignal = env[`OTEL_EXPORTER_OTLP_${name}_ENDPOINT`];
    const url = perSignal ? undefined : `${endpoint.replace(/\/+$/, '')}/v1/${signal}`;
    if (url) assertHttpUrl(url);
    const options = convertLegacyHttpOptions({ url }, name, `v1/${signal}`, { 'Content-Type': 'application/x-protobuf' });
    assertHttpUrl(options.url);
    targets[signal] = {
      url: options.url,
      headers: await options.headers(),
      compression: options.compression,
      timeoutMs: options.timeoutMillis,
      agent: await options.agentFactory(new URL(options.url).protocol),
    };
  }
  return targets;
}

function assertHttpUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new OtlpConfigError(`not a valid OTLP endpoint URL: "${url}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new OtlpConfigError(`OTLP endpoint must be http:// or https://, not "${url}"`);
  }
}

/**
 * Whether an HTTP status is worth sending the same request again. The OTLP spec retries 429, 502, 503
 * and 504. We also keep (and retry) on every other 5xx and on 401/403/404/408: those are a collector or a
 * configuration being wrong for a while (a token being rotated, a proxy in front), and dropping would
 * lose data an operator can still save. Other 4xx say the request itself is bad: resending cannot help.
 */
export function isRetryableStatus(status: number): boolean {
  return status >= 500 || [401, 403, 404, 408, 429].includes(status);
}

/** Retry-After as milliseconds from now: delay-seconds or an HTTP date (RFC 9110 section 10.2.3). */
export function parseRetryAfter(value: string | undefined, nowMs = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/** POST one request body; never throws: every failure is an outcome. A 307 or 308 is followed once. */
export async function sendRequest(signal: Signal, target: SignalTarget, body: Uint8Array, signalAbort?: AbortSignal): Promise<SendOutcome> {
  const payload = target.compression === 'gzip' ? await gzipAsync(body) : body;
  const wire: Record<string, string | number> = { 'Content-Type': 'application/x-protobuf', 'Content-Length': payload.length };
  if (target.compression === 'gzip') wire['Content-Encoding'] = 'gzip';
  const headers = { ...target.headers, ...wire };
  const first = await post({ url: target.url, headers, agent: target.agent, payload, timeoutMs: target.timeoutMs, signalAbort });
  if (!('location' in first)) return outcomeOf(signal, first);
  let next: URL;
  try {
    next = new URL(first.location, target.url);
  } catch {
    return { kind: 'rejected', reason: `HTTP ${first.status} to an invalid location` };
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:') return { kind: 'rejected', reason: `HTTP ${first.status} to a non-HTTP location` };
  // The configured headers may hold credentials: they go only where they were meant to go.
  const sameOrigin = next.origin === new URL(target.url).origin;
  const redirected = await post({
    url: next.href,
    headers: sameOrigin ? headers : wire,
    agent: sameOrigin ? target.agent : undefined,
    payload,
    timeoutMs: target.timeoutMs,
    signalAbort,
  });
  if ('location' in redirected) return { kind: 'rejected', reason: `HTTP ${redirected.status}: redirected twice` };
  return outcomeOf(signal, redirected);
}

interface Post {
  url: string;
  headers: Record<string, string | number>;
  agent: http.Agent | undefined;
  payload: Uint8Array;
  timeoutMs: number;
  signalAbort?: AbortSignal;
}

type Answer = { status: number; retryAfter?: string; body: Buffer; truncated: boolean } | { status: number; location: string } | { failed: string };

/** One POST; the answer's body is read up to MAX_ANSWER_BYTES, then the connection is dropped. */
function post({ url, headers, agent, payload, timeoutMs, signalAbort }: Post): Promise<Answer> {
  const request = url.startsWith('https:') ? https.request : http.request;
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', headers, agent, signal: signalAbort }, (res) => {
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if ((status === 307 || status === 308) && location) {
        clearTimeout(timer);
        res.destroy();
        resolve({ status, location });
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      const done = (truncated: boolean) => {
        clearTimeout(timer);
        resolve({ status, retryAfter: res.headers['retry-after'], body: Buffer.concat(chunks), truncated });
      };
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk.subarray(0, MAX_ANSWER_BYTES - size));
        size += chunk.length;
        if (size < MAX_ANSWER_BYTES) return;
        res.destroy();
        done(true);
      });
      res.on('error', (error) => resolve({ failed: `response: ${error.message}` }));
      res.on('end', () => done(false));
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ failed: error.code ? `${error.code}: ${error.message}` : error.message });
    });
    req.end(payload);
  });
}

function outcomeOf(signal: Signal, answer: Exclude<Answer, { location: string }>): SendOutcome {
  if ('failed' in answer) return { kind: 'retry', reason: answer.failed };
  const { status, body } = answer;
  if (status >= 200 && status < 300) return { kind: 'accepted', partial: answer.truncated ? undefined : safePartialRejection(signal, body) };
  if (status === 413) return { kind: 'too_large', reason: 'HTTP 413' };
  if (isRetryableStatus(status)) return { kind: 'retry', reason: `HTTP ${status}`, retryAfterMs: parseRetryAfter(answer.retryAfter) };
  return { kind: 'rejected', reason: `HTTP ${status}: ${body.toString('utf8', 0, Math.min(body.length, 300))}` };
}

function safePartialRejection(signal: Signal, answer: Buffer): PartialRejection | undefined {
  try {
    return partialRejection(signal, answer);
  } catch {
    return undefined; // an accepted request with an unreadable answer is still accepted (as the SDK does)
  }
}
