// A loopback OTLP/HTTP protobuf receiver that keeps every request body as received (gunzipped when the
// exporter compressed it) and decodes it with the test's own wire reader, so a scan sees exactly what
// went over the wire, not what the exporter meant to send.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { keyValues, Message } from '../collector/otlp-wire.js';

export interface CapturedRequest {
  path: string;
  body: Buffer;
}

type Attributes = Record<string, string | number | boolean>;

export interface DecodedOtlp {
  spans: { name: string; statusMessage: string; attributes: Attributes; events: { name: string; attributes: Attributes }[] }[];
  logs: { eventName: string; body: string; attributes: Attributes }[];
  points: { name: string; attributes: Attributes }[];
}

export class OtlpCapture {
  readonly requests: CapturedRequest[] = [];
  private server?: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const raw = Buffer.concat(chunks);
        const body = request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
        this.requests.push({ path: request.url ?? '', body });
        // An empty Export*ServiceResponse: everything accepted.
        response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Every body as text: protobuf keeps strings as plain UTF-8, so any string sent is in here verbatim. */
  rawText(): string {
    return this.requests.map((request) => request.body.toString('utf8')).join('\n');
  }

  decode(): DecodedOtlp {
    const decoded: DecodedOtlp = { spans: [], logs: [], points: [] };
    for (const { path, body } of this.requests) {
      const request = new Message(body);
      if (path.endsWith('/v1/traces')) {
        for (const span of request.messages(1).flatMap((r) => r.messages(2)).flatMap((s) => s.messages(2))) {
          decoded.spans.push({
            name: span.string(5),
            statusMessage: span.has(15) ? span.message(15).string(2) : '',
            attributes: keyValues(span.messages(9)),
            events: span.messages(11).map((event) => ({ name: event.string(2), attributes: keyValues(event.messages(3)) })),
          });
        }
      } else if (path.endsWith('/v1/logs')) {
        for (const log of request.messages(1).flatMap((r) => r.messages(2)).flatMap((s) => s.messages(2))) {
          decoded.logs.push({ eventName: log.string(12), body: log.has(5) ? log.message(5).string(1) : '', attributes: keyValues(log.messages(6)) });
        }
      } else if (path.endsWith('/v1/metrics')) {
        for (const metric of request.messages(1).flatMap((r) => r.messages(2)).flatMap((s) => s.messages(2))) {
          // sum (7) and gauge (5) points keep attributes in field 7, histogram (9) points in field 9
          const points = [...(metric.has(7) ? metric.message(7).messages(1) : []), ...(metric.has(5) ? metric.message(5).messages(1) : [])]
            .map((point) => point.messages(7))
            .concat(metric.has(9) ? metric.message(9).messages(1).map((point) => point.messages(9)) : []);
          for (const attributes of points) decoded.points.push({ name: metric.string(1), attributes: keyValues(attributes) });
        }
      }
    }
    return decoded;
  }
}
