// Issue 13, rows 19 and 20: secrets where masking did not look (id fields, hook event names) and a skipped
// line cut before masking. Everything through the processors the sidecar builds from its configuration.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../sidecar/src/config.js';
import { buildPipeline, buildProcessors } from '../../sidecar/src/build-pipeline.js';
import { ingestFile } from '../../sidecar/src/ingest.js';
import type { Sink, TelemetryBatch } from '../../sidecar/src/model.js';
import { encodeHookRecord } from '../../sidecar/src/processors/encode/hooks.js';
import { findLeaks, plantSecret, type SecretKind } from '../generators/secrets.js';

let dir: string;
const envWith = (extra: Record<string, string> = {}) => ({
  HOME: dir,
  CCOTEL_STATE_DIR: join(dir, 'state'),
  CCOTEL_DATA_DIR: join(dir, 'data'),
  CCOTEL_CONFIG: 'none',
  ...extra,
});

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ccotel-adv-masking-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function throughProcessors(batch: TelemetryBatch, env = envWith()): Promise<TelemetryBatch> {
  let out = batch;
  for (const processor of buildProcessors(loadConfig({ store: 'none' }, env))) out = await processor.process(out);
  return out;
}

describe('secrets in ids, event names and cut lines', () => {
  it('row 19: a secret in a hook event name or in an id field is masked; real ids are kept', async () => {
    // Whole tokens (a detector needs their prefix), each as the entire id a hostile transcript could write.
    const [inName, inSession, inToolUse, inMessage] = (['github-token', 'gitlab-token', 'github-token', 'aws-access-key-id'] as SecretKind[]).map((kind) => plantSecret(kind).secrets[0]);
    const realSession = '05b888cf-8409-4c10-934d-c39bb1e5f264';
    const batch: TelemetryBatch = {
      spans: [
        {
          traceId: '1'.repeat(32),
          spanId: '2'.repeat(16),
          parentSpanId: '',
          name: 'execute_tool Bash',
          kind: 'internal',
          startMs: 1_700_000_000_000,
          endMs: 1_700_000_001_000,
          status: 'ok',
          statusMessage: '',
          attributes: { 'session.id': inSession, 'gen_ai.tool.call.id': inToolUse, 'gen_ai.response.id': inMessage },
          events: [],
        },
      ],
      logs: [
        { id: 'a', timeMs: 1_700_000_000_000, eventName: `ccotel.hook.${inName}`, severity: 'INFO', traceId: '', spanId: '', body: '', attributes: { 'session.id': realSession } },
      ],
      metrics: [],
    };
    const out = await throughProcessors(batch);
    const text = JSON.stringify(out);
    expect(findLeaks(text, [inName, inSession, inToolUse, inMessage])).toEqual([]);
    expect(out.logs[0].eventName).toMatch(/^ccotel\.hook\.\[REDACTED:[a-z0-9-]+:[0-9a-f]{6}\]$/);
    expect(out.logs[0].attributes['session.id']).toBe(realSession);
    // Each detection is reported, and the report carries the masked id, not the secret.
    const detections = out.logs.filter((log) => log.eventName === 'ccotel.secret.detected');
    expect(detections.map((log) => log.attributes['ccotel.secret.field']).sort()).toEqual(['event_name', 'gen_ai.response.id', 'gen_ai.tool.call.id', 'session.id']);
  });

  it('row 20: a skipped line is masked before it is cut, at CCOTEL_CONTENT_MAX_LENGTH=200000', async () => {
    const planted = plantSecret('github-token');
    const secret = planted.secrets[0];
    // Put the old 64 KiB cut in the middle of the secret.
    const at = planted.text.indexOf(secret) + Math.floor(secret.length / 2);
    const line = `${'x'.repeat(64 * 1024 - at)}${planted.text} and more text after it`;
    const transcript = join(dir, 'straddle.jsonl');
    writeFileSync(transcript, `${line}\n`);
    const bodies: string[] = [];
    const sink: Sink = {
      name: 'collect',
      async write(batch) {
        for (const log of batch.logs) if (log.eventName === 'ccotel.record.skipped') bodies.push(log.body);
      },
      async close() {},
    };
    const { pipeline } = buildPipeline(loadConfig({ store: 'none' }, envWith({ CCOTEL_CONTENT_MAX_LENGTH: '200000' })), { mode: 'once', sinks: [sink] });
    await ingestFile(pipeline, { path: transcript, kind: 'main' }, 0);
    await pipeline.finish();
    expect(bodies).toHaveLength(1);
    expect(findLeaks(bodies[0], [secret])).toEqual([]);
    expect(bodies[0]).toMatch(/\[REDACTED:[a-z0-9-]+:[0-9a-f]{6}\].* and more text after it$/);
  });

  // Issue 28, row 8: the preset's rules want a word boundary before the secret, so one glued to a word was kept.
  const GLUED_KINDS: SecretKind[] = ['aws-access-key-id', 'github-token', 'gitlab-token', 'slack-token', 'openai-api-key', 'anthropic-api-key', 'stripe-secret-key'];
  const tokenOf = (kind: SecretKind) => {
    const planted = plantSecret(kind);
    // The whole token as the text writes it: from its prefix to the end of its random part.
    const secret = planted.secrets[planted.secrets.length - 1];
    const end = planted.text.indexOf(secret) + secret.length;
    const start = planted.text.slice(0, end).search(/[A-Za-z0-9_-]*$/);
    return { token: planted.text.slice(start, end).replace(/^[^A-Za-z]+/, ''), secrets: planted.secrets };
  };

  it('II.8: a secret glued to a word (toolu_AKIA…, PreToolUseAKIA…, x_ghp_…) is masked in ids, names and bodies', async () => {
    const cases = GLUED_KINDS.flatMap((kind) => ['toolu_', 'PreToolUse', 'x_'].map((glue) => ({ kind, glue, ...tokenOf(kind) })));
    const batch: TelemetryBatch = { spans: [], logs: [], metrics: [] };
    for (const [index, { glue, token }] of cases.entries()) {
      const hook = { kind: 'HookRecorded', name: `${glue === 'x_' ? 'PreToolUse' : glue}${token}`, sessionId: 's', timeMs: 1_700_000_000_000, traceId: '', spanId: '', attributes: { tool_use_id: `${glue}${token}` }, body: `{"id":"${glue}${token}"}`, file: `hook-${index}.json` } as const;
      encodeHookRecord(hook, batch);
    }
    const out = await throughProcessors(batch);
    for (const { kind, glue, secrets } of cases) {
      expect({ kind, glue, leaks: findLeaks(JSON.stringify(out), secrets) }).toEqual({ kind, glue, leaks: [] });
    }
    for (const log of out.logs.filter((log) => log.eventName.startsWith('ccotel.hook.'))) expect(log.eventName).toMatch(/\[REDACTED:[a-z0-9-]+:[0-9a-f]{6}\]$/);
  });

  it('II.8: a recorded transcript whose tool_use id is toolu_AKIA…: no piece of the key in any span, record or metric', async () => {
    const fixture = 'test/fixtures/formats/2.1.332/bash-mode-and-modes/5f06b4a6-26fc-4345-af73-a9fa60bd5e02.jsonl';
    const original = readFileSync(fixture, 'utf8');
    const { token, secrets } = tokenOf('aws-access-key-id');
    const id = /"tool_use","id":"(toolu_[A-Za-z0-9]+)"/.exec(original)![1];
    const transcript = join(dir, 'glued.jsonl');
    writeFileSync(transcript, original.replaceAll(id, `toolu_${token}`));
    const batches: TelemetryBatch[] = [];
    const sink: Sink = { name: 'collect', write: async (written) => void batches.push(written), close: async () => {} };
    const { pipeline } = buildPipeline(loadConfig({ store: 'none' }, envWith()), { mode: 'once', sinks: [sink] });
    await ingestFile(pipeline, { path: transcript, kind: 'main' }, 0);
    await pipeline.finish();
    const text = JSON.stringify(batches);
    expect(text).toContain('execute_tool');
    expect(findLeaks(text, secrets)).toEqual([]);
  });
});

