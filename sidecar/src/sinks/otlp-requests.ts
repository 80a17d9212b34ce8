// The requests a batch becomes: at most maxItemsPerRequest items each and (unless one item alone is bigger)
// maxRequestBytes, each able to split in two for a collector that answers 413.
import type { TelemetryBatch } from '../model.js';
import type { OtlpEncoder, Signal } from './otlp-convert.js';
import { splitExportRequest } from './otlp-split.js';

export interface Request {
  signal: Signal;
  items: number;
  body: Uint8Array;
  /** The same items in two requests, for a collector that answers 413 (not kept for queued requests). */
  halves?: () => Request[];
}

export interface RequestBuilderOptions {
  encoder: OtlpEncoder;
  maxItemsPerRequest: number;
  maxRequestBytes: number;
  /** Items that cannot be sent (ids that are not OTLP ids): counted and reported by the sink. */
  drop: (signal: Signal, items: number, reason: string, message: string) => void;
}

export class RequestBuilder {
  constructor(private readonly options: RequestBuilderOptions) {}

  /**
   * Requests of at most maxItemsPerRequest items and (unless one item alone is bigger) maxRequestBytes.
   * An item whose ids are not OTLP ids would make the collector refuse its whole request: it is dropped
   * (counted and reported) here instead.
   */
  build(input: TelemetryBatch): Request[] {
    const batch: TelemetryBatch = {
      spans: this.validIds('traces', input.spans, (s) => isId(s.traceId, 32) && isId(s.spanId, 16) && (s.parentSpanId === '' || isId(s.parentSpanId, 16))),
      logs: this.validIds('logs', input.logs, (l) => isOptionalId(l.traceId, 32) && isOptionalId(l.spanId, 16)),
      metrics: this.validIds('metrics', input.metrics, (p) => isOptionalId(p.traceId, 32) && isOptionalId(p.spanId, 16)),
    };
    const requests: Request[] = [];
    const add = <T>(signal: Signal, items: T[], encode: (items: T[]) => Uint8Array) => {
      for (let i = 0; i < items.length; i += this.options.maxItemsPerRequest) {
        this.split(signal, items.slice(i, i + this.options.maxItemsPerRequest), encode, requests);
      }
    };
    add('traces', batch.spans, (spans) => this.options.encoder.traces(spans));
    add('logs', batch.logs, (logs) => this.options.encoder.logs(logs));
    add('metrics', batch.metrics, (points) => this.options.encoder.metrics(points));
    return requests;
  }

  private validIds<T>(signal: Signal, items: T[], valid: (item: T) => boolean): T[] {
    const kept = items.filter(valid);
    if (kept.length < items.length) {
      this.options.drop(signal, items.length - kept.length, 'invalid_id', `${items.length - kept.length} ${signal} items have trace or span ids that are not lowercase hex of the right length; not sent`);
    }
    return kept;
  }

  private split<T>(signal: Signal, items: T[], encode: (items: T[]) => Uint8Array, into: Request[]): void {
    const body = encode(items);
    const half = Math.ceil(items.length / 2);
    const halves = () => {
      const parts: Request[] = [];
      this.split(signal, items.slice(0, half), encode, parts);
      this.split(signal, items.slice(half), encode, parts);
      return parts;
    };
    if (body.length <= this.options.maxRequestBytes || items.length === 1) {
      into.push({ signal, items: items.length, body, ...(items.length > 1 ? { halves } : {}) });
      return;
    }
    into.push(...halves());
  }
}

/** A queued request keeps no items: its encoded body is split instead (otlp-split.ts). */
export function queuedHalves(signal: Signal, items: number, body: Uint8Array): Pick<Request, 'halves'> {
  if (items < 2) return {};
  return {
    halves: () => (splitExportRequest(body) ?? []).map((half) => ({ signal, ...half, ...queuedHalves(signal, half.items, half.body) })),
  };
}

/** A trace (32) or span (16) id as OTLP carries it: lowercase hex, not all zeros. */
function isId(id: string, length: number): boolean {
  return id.length === length && /^[0-9a-f]+$/.test(id) && /[1-9a-f]/.test(id);
}

function isOptionalId(id: string, length: number): boolean {
  return id === '' || isId(id, length);
}
