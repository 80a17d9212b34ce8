// OTLP/JSON as the collector's file exporter writes it (one ExportRequest per line), flattened
// into spans, log records and metric data points with their resource attributes, for assertions.
import { existsSync, readFileSync } from 'node:fs';

export interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: { values?: KeyValue[] };
}
export interface KeyValue {
  key: string;
  value: AnyValue;
}

export interface ExportedSpan {
  traceId: string;
  spanId: string;
  name: string;
  attributes: Record<string, AnyValue>;
  events: { name: string; attributes: Record<string, AnyValue> }[];
  resource: Record<string, AnyValue>;
}
export interface ExportedLog {
  traceId: string;
  body: AnyValue | undefined;
  severityNumber: number;
  attributes: Record<string, AnyValue>;
  resource: Record<string, AnyValue>;
}
export interface ExportedPoint {
  metric: string;
  attributes: Record<string, AnyValue>;
  resource: Record<string, AnyValue>;
}
export interface ExportedData {
  spans: ExportedSpan[];
  logs: ExportedLog[];
  points: ExportedPoint[];
}

export function attributeMap(list: KeyValue[] | undefined): Record<string, AnyValue> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, kv.value]));
}

/** Builds an OTLP/JSON attribute list from plain values. */
export function attributes(values: Record<string, string | number | boolean>): KeyValue[] {
  return Object.entries(values).map(([key, value]) => {
    if (typeof value === 'string') return { key, value: { stringValue: value } };
    if (typeof value === 'boolean') return { key, value: { boolValue: value } };
    return { key, value: Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value } };
  });
}

/* eslint-disable @typescript-eslint/no-explicit-any -- walking untyped JSON lines */
function flatten(request: any, into: ExportedData): void {
  for (const rs of request.resourceSpans ?? []) {
    const resource = attributeMap(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        into.spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          name: span.name,
          attributes: attributeMap(span.attributes),
          events: (span.events ?? []).map((event: any) => ({ name: event.name, attributes: attributeMap(event.attributes) })),
          resource,
        });
      }
    }
  }
  for (const rl of request.resourceLogs ?? []) {
    const resource = attributeMap(rl.resource?.attributes);
    for (const sl of rl.scopeLogs ?? []) {
      for (const record of sl.logRecords ?? []) {
        into.logs.push({
          traceId: record.traceId ?? '',
          body: record.body,
          severityNumber: record.severityNumber ?? 0,
          attributes: attributeMap(record.attributes),
          resource,
        });
      }
    }
  }
  for (const rm of request.resourceMetrics ?? []) {
    const resource = attributeMap(rm.resource?.attributes);
    for (const sm of rm.scopeMetrics ?? []) {
      for (const metric of sm.metrics ?? []) {
        const data = metric.sum ?? metric.gauge ?? metric.histogram ?? metric.exponentialHistogram ?? metric.summary;
        for (const point of data?.dataPoints ?? []) {
          into.points.push({ metric: metric.name, attributes: attributeMap(point.attributes), resource });
        }
      }
    }
  }
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/** Reads the complete lines the file exporter wrote so far. */
/** The files the test overlay's exporters write for CCOTEL_FILE_EXPORT_PATH=`path`: logs and metrics, then traces. */
export const exportFiles = (path: string): string[] => [path, `${path}.traces`];

export function readExport(path: string): ExportedData {
  const data: ExportedData = { spans: [], logs: [], points: [] };
  for (const file of exportFiles(path).filter((name) => existsSync(name))) {
    const lines = readFileSync(file, 'utf8').split('\n');
    // Only the last line may be incomplete (no newline yet); the next read sees it whole.
    const complete = lines.slice(0, -1);
    for (const line of complete) {
      if (line.trim() !== '') flatten(JSON.parse(line), data);
    }
  }
  return data;
}

/** Polls the export file until `done` holds, or fails after timeoutMs with what was seen. */
export async function waitForExport(path: string, done: (data: ExportedData) => boolean, timeoutMs = 20_000): Promise<ExportedData> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const data = readExport(path);
    if (done(data)) return data;
    if (Date.now() > deadline) {
      throw new Error(
        `export file ${path} incomplete after ${timeoutMs} ms: ${data.spans.length} spans, ${data.logs.length} logs, ${data.points.length} points`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
