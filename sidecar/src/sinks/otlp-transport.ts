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
  | { kind: 'rejected'; reason: string };

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

/** POST one request body; never throws: every failure is an outcome. */
export async function sendRequest(signal: Signal, target: SignalTarget, body: Uint8Array, signalAbort?: AbortSignal): Promise<SendOutcome> {
  const payload = target.compression === 'gzip' ? await gzipAsync(body) : body;
  const headers: Record<string, string | number> = {
    ...target.headers,
    'Content-Type': 'application/x-protobuf',
    'Content-Length': payload.length,
  };
  if (target.compression === 'gzip') headers['Content-Encoding'] = 'gzip';
  const request = target.url.startsWith('https:') ? https.request : http.request;
  return new Promise((resolve) => {
    const req = request(target.url, { method: 'POST', headers, agent: target.agent, signal: signalAbort }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', (error) => resolve({ kind: 'retry', reason: `response: ${error.message}` }));
      res.on('end', () => {
        clearTimeout(timer);
        const status = res.statusCode ?? 0;
        const answer = Buffer.concat(chunks);
        if (status >= 200 && status < 300) {
          resolve({ kind: 'accepted', partial: safePartialRejection(signal, answer) });
        } else if (isRetryableStatus(status)) {
          resolve({ kind: 'retry', reason: `HTTP ${status}`, retryAfterMs: parseRetryAfter(res.headers['retry-after']) });
        } else {
          resolve({ kind: 'rejected', reason: `HTTP ${status}: ${answer.toString('utf8', 0, Math.min(answer.length, 300))}` });
        }
      });
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${target.timeoutMs} ms`)), target.timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ kind: 'retry', reason: error.code ? `${error.code}: ${error.message}` : error.message });
    });
    req.end(payload);
  });
}

function safePartialRejection(signal: Signal, answer: Buffer): PartialRejection | undefined {
  try {
    return partialRejection(signal, answer);
  } catch {
    return undefined; // an accepted request with an unreadable answer is still accepted (as the SDK does)
  }
}
