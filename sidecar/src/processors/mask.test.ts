import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SECRET_KINDS, findLeaks, plantSecret } from '../../../test/generators/secrets.js';
import type { LogRecord, MetricPoint, SpanRecord, TelemetryBatch } from '../model.js';
import { MASK_MARKER, MaskProcessor, fingerprintOf, maskText } from './mask.js';
import { createSecretDetector } from './secret-detector.js';

const detector = createSecretDetector();

function span(attributes: SpanRecord['attributes'], extra: Partial<SpanRecord> = {}): SpanRecord {
  return {
    traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), parentSpanId: '', name: 'execute_tool Bash', kind: 'internal',
    startMs: 1_700_000_000_000, endMs: 1_700_000_001_000, status: 'ok', statusMessage: '', attributes, events: [], ...extra,
  };
}

function log(body: string, attributes: LogRecord['attributes'] = {}): LogRecord {
  return { id: 'log-1', timeMs: 1_700_000_000_500, eventName: 'ccotel.shell.command', severity: 'INFO', traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), body, attributes };
}

function point(attributes: MetricPoint['attributes']): MetricPoint {
  return { id: 'point-1', name: 'ccotel.tool.calls', unit: '{call}', description: '', kind: 'sum', timeMs: 1_700_000_000_000, value: 1, attributes, traceId: '', spanId: '' };
}

describe('maskText', () => {
  it('replaces each finding with its rule and the HMAC fingerprint of the secret', () => {
    const key = randomBytes(32);
    const text = 'a SECRET1 b SECRET2 c';
    const masked = maskText(text, [{ rule: 'x-token', start: 2, end: 9 }, { rule: 'y-key', start: 12, end: 19 }], key);
    const hmac = (s: string) => createHmac('sha256', key).update(s).digest('hex').slice(0, 6);
    expect(masked).toBe(`a [REDACTED:x-token:${hmac('SECRET1')}] b [REDACTED:y-key:${hmac('SECRET2')}] c`);
    expect(masked.match(new RegExp(MASK_MARKER.source, 'g'))).toHaveLength(2);
  });

  it('gives a repeated secret the same fingerprint, plain or JSON-escaped, and another key another one', async () => {
    const key = randomBytes(32);
    const planted = plantSecret('private-key-short');
    const texts = [planted.text, `again: ${planted.text}`, JSON.stringify({ content: planted.text })];
    const findings = await detector.detect(texts);
    const fingerprints = texts.map((text, i) => maskText(text, findings[i], key).match(/\[REDACTED:private-key:([0-9a-f]{6})\]/)![1]);
    expect(new Set(fingerprints).size).toBe(1);
    const secret = texts[0].slice(findings[0][0].start, findings[0][0].end);
    expect(fingerprints[0]).toBe(fingerprintOf(secret, key));
    expect(fingerprintOf(secret, randomBytes(32))).not.toBe(fingerprints[0]);
  });
});

describe('MaskProcessor', () => {
  const key = randomBytes(32);
  const processor = new MaskProcessor(detector, key);

  function batchWithSecrets() {
    const secrets = Array.from({ length: 8 }, (_, i) => plantSecret(i % 2 ? 'github-token' : 'password-assignment'));
    const context = { 'session.id': 'session-1', tool_use_id: 'toolu_01', 'ccotel.source.file': '/t/s.jsonl' };
    const batch: TelemetryBatch = {
      spans: [span(
        { ...context, 'ccotel.tool.input': secrets[0].text },
        { statusMessage: secrets[1].text, events: [{ name: 'PreToolUse', timeMs: 1_700_000_000_100, attributes: { 'hook.payload': secrets[2].text } }] },
      )],
      logs: [log(secrets[3].text, { ...context, 'process.command_line': secrets[4].text })],
      metrics: [point({ 'gen_ai.tool.name': secrets[5].text })],
    };
    return { batch, secrets };
  }

  it('masks every string field kind of a batch and leaves the input untouched', async () => {
    const { batch, secrets } = batchWithSecrets();
    const before = structuredClone(batch);
    const output = await processor.process(batch);
    expect(batch).toEqual(before);
    const used = secrets.slice(0, 6);
    expect(findLeaks(JSON.stringify(output), used.flatMap((s) => s.secrets))).toEqual([]);
    const [outSpan] = output.spans;
    for (const masked of [outSpan.attributes['ccotel.tool.input'], outSpan.statusMessage, outSpan.events[0].attributes['hook.payload'], output.logs[0].body, output.logs[0].attributes['process.command_line'], output.metrics[0].attributes['gen_ai.tool.name']]) {
      expect(masked).toMatch(MASK_MARKER);
    }
  });

  it('copies only the items it masks: the others are passed on as they are', async () => {
    const { batch } = batchWithSecrets();
    const clean = { spans: [span({ 'session.id': 'session-2' })], logs: [log('ls -la')], metrics: [point({ 'gen_ai.tool.name': 'Bash' })] };
    const input = { spans: [...batch.spans, ...clean.spans], logs: [...batch.logs, ...clean.logs], metrics: [...batch.metrics, ...clean.metrics] };
    const output = await processor.process(input);
    expect([output.spans[0], output.logs[0], output.metrics[0]].map((item, i) => item === [batch.spans[0], batch.logs[0], batch.metrics[0]][i])).toEqual([false, false, false]);
    expect(output.spans[1]).toBe(clean.spans[0]);
    expect(output.logs[1]).toBe(clean.logs[0]);
    expect(output.metrics[1]).toBe(clean.metrics[0]);
  });

  it('reports each detection as a point and a log record with context but without the value', async () => {
    const { batch, secrets } = batchWithSecrets();
    const output = await processor.process(batch);
    const detections = output.logs.filter((l) => l.eventName === 'ccotel.secret.detected');
    const redactions = output.metrics.filter((m) => m.name === 'ccotel.redactions');
    expect(detections).toHaveLength(6);
    expect(redactions).toHaveLength(6);
    expect(redactions.every((m) => m.unit === '{secret}' && m.kind === 'sum' && m.value === 1 && typeof m.attributes.rule === 'string')).toBe(true);
    const fromToolInput = detections.find((d) => d.attributes['ccotel.secret.field'] === 'ccotel.tool.input')!;
    expect(fromToolInput.attributes).toMatchObject({ 'session.id': 'session-1', tool_use_id: 'toolu_01', 'ccotel.source.file': '/t/s.jsonl' });
    expect(fromToolInput.attributes['ccotel.secret.fingerprint']).toMatch(/^[0-9a-f]{6}$/);
    expect(output.spans[0].attributes['ccotel.tool.input']).toContain(`:${fromToolInput.attributes['ccotel.secret.fingerprint']}]`);
    expect(findLeaks(JSON.stringify([detections, redactions]), secrets.flatMap((s) => s.secrets))).toEqual([]);
  });

  it('derives the same record ids from the same input, distinct per detection', async () => {
    const { batch } = batchWithSecrets();
    const ids = async () => (await processor.process(batch)).logs.filter((l) => l.eventName === 'ccotel.secret.detected').map((l) => l.id);
    const first = await ids();
    expect(await ids()).toEqual(first);
    expect(new Set(first).size).toBe(first.length);
  });

  it('masks an id that holds a secret, the same way in every field, and leaves real ids alone', async () => {
    const token = plantSecret('github-token').secrets[0];
    const output = await processor.process({ spans: [], logs: [log('', { 'ccotel.agent.id': token, request_id: token, 'session.id': '05b888cf-8409-4c10-934d-c39bb1e5f264' })], metrics: [] });
    const { attributes } = output.logs[0];
    expect(attributes['ccotel.agent.id']).toMatch(/^\[REDACTED:github-token:[0-9a-f]{6}\]$/);
    expect(attributes.request_id).toBe(attributes['ccotel.agent.id']);
    expect(attributes['session.id']).toBe('05b888cf-8409-4c10-934d-c39bb1e5f264');
    expect(JSON.stringify(output)).not.toContain(token);
  });

  it('leaves masked text as it is when it is masked again', async () => {
    const texts = SECRET_KINDS.map((kind) => plantSecret(kind).text);
    const once = await processor.maskStrings(texts);
    expect(await processor.maskStrings(once)).toEqual(once);
  });

  it('masks strings outside telemetry, such as dead-letter lines', async () => {
    const planted = plantSecret('slack-token');
    const masked = await processor.maskString(`skipped line: ${planted.text}`);
    expect(masked).toMatch(/^skipped line: SLACK_BOT=\[REDACTED:slack-token:[0-9a-f]{6}\]/);
  });
});
