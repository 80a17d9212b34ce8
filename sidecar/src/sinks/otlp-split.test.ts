import { describe, expect, it } from 'vitest';
import { keyValues, Message } from '../../../test/collector/otlp-wire.js';
import type { LogRecord, MetricPoint, SpanRecord } from '../model.js';
import { OtlpEncoder } from './otlp-convert.js';
import { splitExportRequest } from './otlp-split.js';

const encoder = new OtlpEncoder({ 'service.name': 'ccotel', 'host.name': 'h' }, '0.0.0');
const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

const spans = (count: number): SpanRecord[] =>
  Array.from({ length: count }, (_, i) => ({
    traceId: hex(1, 32), spanId: hex(i + 1, 16), parentSpanId: '', name: `s${i}`, kind: 'internal', startMs: 1_700_000_000_000, endMs: 1_700_000_000_001,
    status: 'ok', statusMessage: '', attributes: { n: i }, events: [],
  }));
const logs = (count: number): LogRecord[] =>
  Array.from({ length: count }, (_, i) => ({ id: `l${i}`, timeMs: 1_700_000_000_000, eventName: 'e', severity: 'INFO', traceId: '', spanId: '', body: `b${i}`, attributes: {} }));
const points = (count: number): MetricPoint[] =>
  Array.from({ length: count }, (_, i) => ({
    id: `p${i}`, name: `ccotel.turns${i}`, unit: '{turn}', description: '', kind: 'sum', timeMs: 1_700_000_000_000, value: i, attributes: {}, traceId: '', spanId: '',
  }));

/** Field values as text; a Buffer has been through its toJSON already, a plain Uint8Array has not. */
function asText(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return String(value);
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  const json = value as { type?: string; data?: number[] } | null;
  return json?.type === 'Buffer' && Array.isArray(json.data) ? Buffer.from(json.data).toString('hex') : value;
}

/** The items of a request (in order) and the resource attributes of each resource entry. */
function inside(body: Uint8Array): { items: string[]; resources: Array<Record<string, unknown>> } {
  const resources = new Message(body).messages(1);
  return {
    items: resources.flatMap((resource) => resource.messages(2).flatMap((scope) => scope.messages(2).map((item) => JSON.stringify([...item.fields], asText)))),
    resources: resources.map((resource) => keyValues(resource.message(1).messages(1))),
  };
}

describe('splitExportRequest', () => {
  it.each([
    ['traces', () => encoder.traces(spans(7))],
    ['logs', () => encoder.logs(logs(7))],
    // Items of a metrics request are metrics: points of one metric stay together.
    ['metrics', () => encoder.metrics(points(7))],
  ])('splits a %s request into two halves that hold every item once, in order, with the resource', (_signal, encode) => {
    const body = encode();
    const [first, second] = splitExportRequest(body)!;
    const whole = inside(body);
    expect(whole.items).toHaveLength(7);
    expect([first.items, second.items]).toEqual([4, 3]);
    expect([...inside(first.body).items, ...inside(second.body).items]).toEqual(whole.items);
    for (const half of [first, second]) expect(inside(half.body).resources).toEqual(whole.resources);
  });

  it('leaves a request of one item unsplit', () => {
    expect(splitExportRequest(encoder.logs(logs(1)))).toBeUndefined();
  });
});
