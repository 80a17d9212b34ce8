import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { text } from 'node:stream/consumers';
import type { AnyValue, KeyValue } from '../collector/otlp-json.js';

// A loopback OTLP/HTTP JSON receiver for Claude Code's native telemetry. It keeps every export
// request body exactly as received (the fixtures' oracle) and offers flat views for assertions.

export type Signal = 'traces' | 'metrics' | 'logs';

export interface OtlpExport {
  signal: Signal;
  receivedAt: number;
  /** The request body exactly as received. */
  raw: string;
  body: unknown;
}

type Attributes = Record<string, unknown>;

export interface FlatSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  status?: { code?: number; message?: string };
  attributes: Attributes;
  resource: Attributes;
}

export interface FlatLogRecord {
  eventName: string;
  timeUnixNano: string;
  attributes: Attributes;
  resource: Attributes;
}

export interface FlatMetricPoint {
  name: string;
  unit: string;
  temporality?: number;
  value: number;
  attributes: Attributes;
  resource: Attributes;
}

export interface OtlpReceiver {
  url: string;
  exports: OtlpExport[];
  spans(): FlatSpan[];
  logRecords(): FlatLogRecord[];
  metricPoints(): FlatMetricPoint[];
  close(): Promise<void>;
}

function anyValue(v: AnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(anyValue);
  if (v.kvlistValue) return attributes(v.kvlistValue.values);
  return undefined;
}

export function attributes(kvs: KeyValue[] | undefined): Attributes {
  return Object.fromEntries((kvs ?? []).map((kv) => [kv.key, anyValue(kv.value)]));
}

/* eslint-disable @typescript-eslint/no-explicit-any -- OTLP JSON is walked structurally here */
export function flattenSpans(bodies: unknown[]): FlatSpan[] {
  return bodies.flatMap((body: any) =>
    (body?.resourceSpans ?? []).flatMap((rs: any) =>
      (rs.scopeSpans ?? []).flatMap((ss: any) =>
        (ss.spans ?? []).map(
          (s: any): FlatSpan => ({
            name: s.name,
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            startTimeUnixNano: String(s.startTimeUnixNano),
            endTimeUnixNano: String(s.endTimeUnixNano),
            status: s.status,
            attributes: attributes(s.attributes),
            resource: attributes(rs.resource?.attributes),
          }),
        ),
      ),
    ),
  );
}

export function flattenLogs(bodies: unknown[]): FlatLogRecord[] {
  return bodies.flatMap((body: any) =>
    (body?.resourceLogs ?? []).flatMap((rl: any) =>
      (rl.scopeLogs ?? []).flatMap((sl: any) =>
        (sl.logRecords ?? []).map((r: any): FlatLogRecord => {
          const attrs = attributes(r.attributes);
          return {
            eventName: String(r.eventName || attrs['event.name'] || anyValue(r.body) || ''),
            timeUnixNano: String(r.timeUnixNano),
            attributes: attrs,
            resource: attributes(rl.resource?.attributes),
          };
        }),
      ),
    ),
  );
}

export function flattenMetrics(bodies: unknown[]): FlatMetricPoint[] {
  return bodies.flatMap((body: any) =>
    (body?.resourceMetrics ?? []).flatMap((rm: any) =>
      (rm.scopeMetrics ?? []).flatMap((sm: any) =>
        (sm.metrics ?? []).flatMap((m: any) => {
          const data = m.sum ?? m.gauge ?? m.histogram;
          return (data?.dataPoints ?? []).map(
            (p: any): FlatMetricPoint => ({
              name: m.name,
              unit: m.unit ?? '',
              temporality: data.aggregationTemporality,
              value: Number(p.asDouble ?? p.asInt ?? p.sum ?? 0),
              attributes: attributes(p.attributes),
              resource: attributes(rm.resource?.attributes),
            }),
          );
        }),
      ),
    ),
  );
}
/* eslint-enable @typescript-eslint/no-explicit-any */

const PATHS: Record<string, Signal> = { '/v1/traces': 'traces', '/v1/metrics': 'metrics', '/v1/logs': 'logs' };

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const exports: OtlpExport[] = [];

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const signal = PATHS[(req.url ?? '').split('?')[0]];
    if (req.method !== 'POST' || !signal) {
      res.writeHead(404).end();
      return;
    }
    if (!String(req.headers['content-type'] ?? '').includes('json')) {
      // The harness asks for http/json; anything else means the exporter was misconfigured.
      res.writeHead(415, { 'content-type': 'text/plain' }).end('only OTLP/HTTP JSON is accepted');
      return;
    }
    const raw = await text(req);
    try {
      exports.push({ signal, receivedAt: Date.now(), raw, body: JSON.parse(raw) });
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('body is not JSON');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const bodies = (signal: Signal) => exports.filter((e) => e.signal === signal).map((e) => e.body);

  return {
    url: `http://127.0.0.1:${port}`,
    exports,
    spans: () => flattenSpans(bodies('traces')),
    logRecords: () => flattenLogs(bodies('logs')),
    metricPoints: () => flattenMetrics(bodies('metrics')),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
