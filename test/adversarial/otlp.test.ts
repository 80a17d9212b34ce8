// Issue 13, rows 12 and 13: a collector (or what answers in its place) that says 413, redirects, or
// answers with a huge body. Loopback only; every batch small and every wait bounded.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LogRecord } from '../../sidecar/src/model.js';
import { OTLP_SINK_DEFAULTS, OtlpSink } from '../../sidecar/src/sinks/otlp-sink.js';
import { MAX_ANSWER_BYTES, resolveTargets, sendRequest } from '../../sidecar/src/sinks/otlp-transport.js';

interface Seen {
  path: string;
  headers: IncomingHttpHeaders;
  bytes: number;
}

/** A loopback HTTP server whose answer the test decides; it records what it was sent. */
async function server(answer: (request: IncomingMessage, body: Buffer, response: ServerResponse) => void): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const http: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ path: request.url ?? '', headers: request.headers, bytes: body.length });
      answer(request, body, response);
    });
  });
  await new Promise<void>((resolveListen) => http.listen(0, '127.0.0.1', () => resolveListen()));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolveClose) => (http.closeAllConnections(), http.close(() => resolveClose()))),
  };
}

function logs(count: number): LogRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `log-${i}`,
    timeMs: 1_700_000_000_000,
    eventName: 'ccotel.prompt.submitted',
    severity: 'INFO',
    traceId: '',
    spanId: '',
    body: 'x'.repeat(200),
    attributes: {},
  }));
}

let dir: string;
let closers: Array<() => Promise<void>>;

beforeEach(() => {
  for (const key of Object.keys(process.env)) if (key.startsWith('OTEL_')) delete process.env[key];
  dir = mkdtempSync(join(tmpdir(), 'ccotel-adv-otlp-'));
  closers = [];
});

afterEach(async () => {
  for (const close of closers.reverse()) await close();
  rmSync(dir, { recursive: true, force: true });
});

async function sinkFor(url: string, spillAfterMs = 2_000): Promise<OtlpSink> {
  const sink = new OtlpSink({
    ...OTLP_SINK_DEFAULTS,
    targets: await resolveTargets(url),
    resource: { 'service.name': 'ccotel' },
    queueDir: join(dir, 'queue'),
    spillAfterMs,
    initialBackoffMs: 20,
    maxBackoffMs: 100,
    closeTimeoutMs: 1_000,
    log: () => {},
  });
  closers.push(() => sink.close());
  return sink;
}

describe('OTLP against a hostile or odd collector', () => {
  it('row 12: a 413 splits the request until the collector takes it; nothing is dropped', async () => {
    const full = logs(1000);
    // Anything over a tenth of the full request is "too large".
    const collector = await server((_request, body, response) => response.writeHead(body.length > 25_000 ? 413 : 200).end());
    closers.push(collector.close);
    const sink = await sinkFor(collector.url);
    await sink.write({ spans: [], logs: full, metrics: [] });
    expect(sink.stats.dropped.logs).toBe(0);
    expect(sink.stats.sent.logs).toBe(1000);
    expect(collector.seen.some((request) => request.bytes > 25_000)).toBe(true);
  });

  it('row 12: a 413 for a request read back from the disk queue splits it too', async () => {
    let down = true;
    const collector = await server((_request, body, response) => response.writeHead(down ? 503 : body.length > 25_000 ? 413 : 200).end());
    closers.push(collector.close);
    const sink = await sinkFor(collector.url, 100);
    await sink.write({ spans: [], logs: logs(1000), metrics: [] });
    expect(sink.stats.spilled.logs).toBe(1000);
    down = false;
    const deadline = Date.now() + 60_000;
    while (sink.stats.sent.logs < 1000 && Date.now() < deadline) await new Promise((resolveWait) => setTimeout(resolveWait, 50));
    expect(sink.stats.sent.logs).toBe(1000);
    expect(sink.stats.dropped.logs).toBe(0);
  });

  it('row 12: a 307 or 308 is followed once, with the same body', async () => {
    for (const status of [307, 308]) {
      // The move stays on the same origin: one server answers both.
      const sameOrigin = await server((request, _body, response) =>
        request.url?.startsWith('/moved') ? response.writeHead(200).end() : response.writeHead(status, { Location: `/moved${status}${request.url}` }).end(),
      );
      closers.push(sameOrigin.close);
      const sink = await sinkFor(sameOrigin.url);
      await sink.write({ spans: [], logs: logs(3), metrics: [] });
      expect(sink.stats.sent.logs, `HTTP ${status}`).toBe(3);
      expect(sameOrigin.seen.map((request) => request.path)).toEqual(['/v1/logs', `/moved${status}/v1/logs`]);
      expect(sameOrigin.seen[1].bytes).toBe(sameOrigin.seen[0].bytes);
    }
  });

  it('row 12: a redirect to another origin does not carry the configured headers; a second redirect is not followed', async () => {
    const elsewhere = await server((_request, _body, response) => response.writeHead(200).end());
    closers.push(elsewhere.close);
    const collector = await server((_request, _body, response) => response.writeHead(307, { Location: `${elsewhere.url}/v1/logs` }).end());
    closers.push(collector.close);
    process.env.OTEL_EXPORTER_OTLP_HEADERS = 'authorization=Bearer not-a-real-token';
    const targets = await resolveTargets(collector.url);
    const outcome = await sendRequest('logs', targets.logs, new Uint8Array([1, 2, 3]));
    expect(outcome.kind).toBe('accepted');
    expect(collector.seen[0].headers.authorization).toBe('Bearer not-a-real-token');
    expect(elsewhere.seen[0].headers.authorization).toBeUndefined();

    const loop = await server((request, _body, response) => response.writeHead(308, { Location: `${request.url}x` }).end());
    closers.push(loop.close);
    const looped = await sendRequest('logs', (await resolveTargets(loop.url)).logs, new Uint8Array([1]));
    expect(looped).toMatchObject({ kind: 'rejected' });
    expect(loop.seen).toHaveLength(2);
  });

  it('row 13: a 2xx answer of 300 MB is read up to a small cap, then the connection is dropped (RSS grows < 64 MB)', async () => {
    let written = 0;
    const chunk = Buffer.alloc(1 << 20, 0x0a);
    const collector = await server((_request, _body, response) => {
      response.writeHead(200, { 'Content-Type': 'application/x-protobuf' });
      const pump = () => {
        while (written < 300 << 20 && !response.destroyed) {
          written += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        response.end();
      };
      pump();
    });
    closers.push(collector.close);
    const rssBefore = process.memoryUsage().rss;
    const outcome = await sendRequest('logs', (await resolveTargets(collector.url)).logs, new Uint8Array([1]));
    expect(outcome.kind).toBe('accepted');
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 << 20);
    // The peer could only fill the socket buffers before the sidecar hung up.
    expect(written).toBeLessThan(64 << 20);
    expect(MAX_ANSWER_BYTES).toBeLessThanOrEqual(64 * 1024);
  });
});
