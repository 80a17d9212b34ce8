import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SECRET_KINDS, findLeaks, plantSecret } from '../../../test/generators/secrets.js';
import type { LogRecord, TelemetryBatch } from '../model.js';
import { CapProcessor, ELLIPSIS, capText } from './cap.js';
import { MASK_MARKER, MaskProcessor } from './mask.js';
import { createSecretDetector } from './secret-detector.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function log(body: string, attributes: LogRecord['attributes'] = {}): LogRecord {
  return { id: 'log-1', timeMs: 1_700_000_000_000, eventName: 'ccotel.prompt.submitted', severity: 'INFO', traceId: '', spanId: '', body, attributes };
}

describe('capText', () => {
  it('keeps short text and cuts long text to the maximum, ellipsis included, keeping the original length', () => {
    expect(capText('short', 10)).toEqual({ text: 'short', originalLength: 5, truncated: false });
    const long = 'x'.repeat(5000);
    const capped = capText(long, 4096);
    expect(capped).toEqual({ text: 'x'.repeat(4096 - ELLIPSIS.length) + ELLIPSIS, originalLength: 5000, truncated: true });
  });

  it('never splits a surrogate pair, at any cut', () => {
    const text = 'a😀b🚀🚀c'.repeat(20);
    for (let max = 2; max < text.length; max++) {
      const { text: capped } = capText(text, max);
      expect(capped.length).toBeLessThanOrEqual(max);
      expect(LONE_SURROGATE.test(capped)).toBe(false);
      expect(Buffer.from(capped, 'utf8').toString('utf8')).toBe(capped);
    }
  });

  it('never splits a mask marker, at any cut', () => {
    const text = Array.from({ length: 10 }, (_, i) => `word ${i} [REDACTED:github-token:${randomBytes(3).toString('hex')}] `).join('');
    for (let max = 2; max < text.length; max++) {
      const { text: capped } = capText(text, max);
      expect(capped.length).toBeLessThanOrEqual(max);
      // The text has '[' only in markers: one left after removing the whole markers is half a marker.
      expect(capped.replace(new RegExp(MASK_MARKER.source, 'g'), '')).not.toContain('[');
    }
  });
});

describe('CapProcessor', () => {
  it('caps every long string, records the original length and a truncation point per field', async () => {
    const long = 'y'.repeat(300);
    const batch: TelemetryBatch = {
      spans: [{
        traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), parentSpanId: '', name: 'n'.repeat(300), kind: 'internal', startMs: 1, endMs: 2,
        status: 'error', statusMessage: long, attributes: { 'ccotel.tool.output': long, 'ccotel.agent.id': long, 'gen_ai.usage.input_tokens': 12 },
        events: [{ name: 'PostToolUse', timeMs: 1, attributes: { 'hook.payload': long } }],
      }],
      logs: [log(long)],
      metrics: [],
    };
    const output = await new CapProcessor(100).process(batch);
    const [span] = output.spans;
    expect(span.attributes['ccotel.tool.output']).toHaveLength(100);
    expect(span.attributes).toMatchObject({ 'ccotel.tool.output.original_length': 300, 'status_message.original_length': 300, 'ccotel.agent.id': long, 'gen_ai.usage.input_tokens': 12 });
    expect(span.statusMessage).toHaveLength(100);
    expect(span.name).toBe(batch.spans[0].name);
    expect(span.events[0].attributes).toMatchObject({ 'hook.payload.original_length': 300 });
    expect(output.logs[0].body).toHaveLength(100);
    expect(output.logs[0].attributes['body.original_length']).toBe(300);
    const fields = output.metrics.filter((m) => m.name === 'ccotel.truncations' && m.unit === '{field}').map((m) => m.attributes.field).sort();
    expect(fields).toEqual(['body', 'ccotel.tool.output', 'hook.payload', 'status_message']);
    expect(batch.logs[0].body).toBe(long);
  });

  it('rejects a maximum that is not a positive integer', () => {
    expect(() => new CapProcessor(0)).toThrow(/at least/);
    expect(() => new CapProcessor(Number.NaN)).toThrow(/integer/);
  });

  it('after masking, leaves no readable part of a secret that straddles the cap boundary', async () => {
    const mask = new MaskProcessor(createSecretDetector(), randomBytes(32));
    const max = 200;
    const planted = SECRET_KINDS.map(plantSecret);
    // Each secret's first random part starts a few characters before the cut.
    const logs = planted.map((p, i) => {
      const at = p.text.indexOf(p.secrets[0]);
      return log('p'.repeat(Math.max(0, max - 6 - at)) + p.text, { n: i });
    });
    const output = await new CapProcessor(max).process(await mask.process({ spans: [], logs, metrics: [] }));
    for (const [i, p] of planted.entries()) {
      const body = output.logs.find((l) => l.eventName !== 'ccotel.secret.detected' && l.attributes.n === i)!.body;
      expect({ kind: p.kind, leaks: findLeaks(body, p.secrets) }).toEqual({ kind: p.kind, leaks: [] });
      expect(body.length).toBeLessThanOrEqual(max);
    }
  });
});
