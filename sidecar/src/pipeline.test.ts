import { describe, expect, it } from 'vitest';
import { batchSize, type LogRecord, type Sink } from './model.js';
import { FLUSH_INPUT_BYTES, FLUSH_ITEMS, MAX_PART_ITEMS, Pipeline } from './pipeline.js';
import { TranscriptCorrelator } from './processors/transcripts/correlator.js';
import { CodexRollouts } from './sources/codex/rollouts.js';
import { textLines } from './sources/line-reader.js';
import { MemorySink } from '../../test/helpers/memory-sink.js';
import { findLeaks, plantSecret } from '../../test/generators/secrets.js';
import { CapProcessor } from './processors/cap.js';
import { MaskProcessor } from './processors/mask.js';
import { createSecretDetector } from './processors/secret-detector.js';
import { receivedLogs } from './sources/otlp-received.js';
import { SKIPPED_RECORDS_PER_FILE } from './skipped-lines.js';

const lines = (...texts: string[]) => textLines(texts);

async function skippedRecords(texts: string[]): Promise<LogRecord[]> {
  const logs: LogRecord[] = [];
  const sink: Sink = { name: 'logs', write: async (batch) => void logs.push(...batch.logs), close: async () => {} };
  const pipeline = new Pipeline(new TranscriptCorrelator(), [], [sink]);
  await pipeline.addLines({ path: '/p/s.jsonl', kind: 'main' }, lines(...texts));
  await pipeline.finish();
  return logs.filter((log) => log.eventName === 'ccotel.record.skipped');
}

describe('Pipeline: skipped lines', () => {
  const prompt = { type: 'user', uuid: 'u1', sessionId: 's1', timestamp: '2026-11-01T10:00:05.000Z', message: { role: 'user', content: 'hi' } };

  it('stamps a line without a time, read before any time of its file, with the time of the next line that has one', async () => {
    const [skipped] = await skippedRecords([JSON.stringify({ type: 'some-future-row', sessionId: 's1' }), 'not json', JSON.stringify(prompt)]);
    expect(skipped.attributes).toMatchObject({ reason: 'unknown_type', 'ccotel.source.offset': 0 });
    expect(skipped.timeMs).toBe(Date.parse(prompt.timestamp));
  });

  it('never stamps one 1970 when nothing in its file has a time', async () => {
    const before = Date.now();
    const skipped = await skippedRecords(['not json', JSON.stringify({ type: 'some-future-row' })]);
    expect(skipped).toHaveLength(2);
    for (const record of skipped) expect(record.timeMs).toBeGreaterThanOrEqual(before);
  });
});

describe('Pipeline: a denial kind no release wrote', () => {
  it('is a refusal by unknown (never an interrupt), counted and shown as such, one record per file past the first ones', async () => {
    const sink = new MemorySink();
    const pipeline = new Pipeline(new TranscriptCorrelator(), [], [sink]);
    const base = { sessionId: 's1', isSidechain: false, cwd: '/p' };
    const at = (second: number) => `2026-11-01T10:00:${String(second).padStart(2, '0')}.000Z`;
    const rows: string[] = [JSON.stringify({ ...base, type: 'user', uuid: 'u0', parentUuid: null, timestamp: at(0), message: { role: 'user', content: 'go' } })];
    const calls = SKIPPED_RECORDS_PER_FILE + 3;
    for (let i = 0; i < calls; i++) {
      const id = `toolu_${i}`;
      rows.push(
        JSON.stringify({ ...base, type: 'assistant', uuid: `a${i}`, parentUuid: null, timestamp: at(2 * i + 1), message: { id: `msg_${i}`, role: 'assistant', model: 'claude-sonnet-4-5', stop_reason: 'tool_use', usage: { input_tokens: 1, output_tokens: 1 }, content: [{ type: 'tool_use', id, name: 'Bash', input: { command: 'ls' } }] } }),
        JSON.stringify({ ...base, type: 'user', uuid: `r${i}`, parentUuid: `a${i}`, timestamp: at(2 * i + 2), toolDenialKind: 'some-future-kind', toolUseResult: 'Error: No.', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'No.', is_error: true }] } }),
      );
    }
    await pipeline.addLines({ path: '/p/s.jsonl', kind: 'main' }, lines(...rows));
    await pipeline.finish();
    const outcomes = sink.received.spans.filter((span) => span.name === 'execute_tool Bash').map((span) => span.attributes['ccotel.tool.outcome']);
    expect(outcomes).toEqual(Array(calls).fill('denied'));
    const blocks = sink.received.logs.filter((log) => log.eventName === 'ccotel.permission.blocked').map((log) => log.attributes.source);
    expect(blocks).toEqual(Array(calls).fill('unknown'));
    expect(pipeline.stats.skipped).toEqual({ unknown_denial_kind: calls });
    const records = sink.received.logs.filter((log) => log.eventName === 'ccotel.record.skipped');
    expect(records.map((log) => log.attributes.reason)).toEqual(Array(SKIPPED_RECORDS_PER_FILE + 1).fill('unknown_denial_kind'));
    expect(records.map((log) => log.attributes['ccotel.record.count'] ?? 1).reduce((a, b) => Number(a) + Number(b), 0)).toBe(calls);
  });
});

describe('Pipeline: the files of another agent', () => {
  it("hands a Codex rollout's lines to its source, counts and keeps aside the bad ones, and the Claude Code correlator sees none", async () => {
    const sink = new MemorySink();
    const pipeline = new Pipeline(new TranscriptCorrelator(), [], [sink], [], { codex: new CodexRollouts() });
    const row = (type: string, payload: Record<string, unknown>, second = 0) => JSON.stringify({ timestamp: `2026-11-01T10:00:0${second}.000Z`, type, payload });
    const file = { path: '/c/sessions/2026/11/01/rollout-2026-11-01T10-00-00-01a242e6-0000-7000-8000-00000000000c.jsonl', kind: 'main' as const, agent: 'codex' as const };
    await pipeline.addLines(file, lines(
      row('session_meta', { id: '01a242e6-0000-7000-8000-00000000000c', cli_version: '0.171.0' }),
      '{"timestamp": "2026-11-01T10:00:00',
      '\u0000\u0001 binary',
      row('event_msg', { type: 'task_started', turn_id: 't1' }, 1),
      // A Claude Code row in a rollout is no conversation of Claude Code's.
      JSON.stringify({ type: 'user', uuid: 'u1', sessionId: 's1', timestamp: '2026-11-01T10:00:02.000Z', message: { role: 'user', content: 'hi' } }),
      row('event_msg', { type: 'task_complete', turn_id: 't1' }, 3),
    ));
    await pipeline.finish();
    expect(pipeline.stats.skipped).toEqual({ malformed_json: 2, missing_fields: 1 });
    expect(sink.received.spans.map((span) => [span.name, span.attributes['session.id'], span.attributes['ccotel.turn.outcome']])).toEqual([
      ['invoke_agent codex', '01a242e6-0000-7000-8000-00000000000c', 'completed'],
    ]);
    const skipped = sink.received.logs.filter((log) => log.eventName === 'ccotel.record.skipped');
    expect(skipped.map((log) => log.attributes.reason).sort()).toEqual(['malformed_json', 'malformed_json', 'missing_fields']);
  });
});

describe('Pipeline: rows that are not conversation', () => {
  it('never decodes a row whose bytes show it is not conversation (most bytes of a real transcript)', async () => {
    const snapshot = JSON.stringify({ type: 'attachment', attachment: { type: 'prompt_snapshot', text: 'x'.repeat(10_000) } });
    const prompt = JSON.stringify({ type: 'user', uuid: 'u1', sessionId: 's1', timestamp: '2026-11-01T10:00:05.000Z', message: { role: 'user', content: 'hi' } });
    const decoded: number[] = [];
    const watched = textLines([snapshot, prompt, snapshot]).map((line, index) => ({
      bytes: line.bytes,
      start: line.start,
      end: line.end,
      get text() {
        decoded.push(index);
        return line.text;
      },
    }));
    const sink = new MemorySink();
    const pipeline = new Pipeline(new TranscriptCorrelator(), [], [sink]);
    await pipeline.addLines({ path: '/p/s.jsonl', kind: 'main' }, watched);
    await pipeline.finish();
    expect(decoded).toEqual([1]);
    expect(sink.received.spans.some((span) => span.name.startsWith('invoke_agent'))).toBe(true); // the prompt's turn
  });
});

describe('Pipeline: bounded batches', () => {
  /** The sizes of the batches a sink is given when `sessions` prompts, each a turn left open, are read to the end. */
  const deliveredAtEnd = async (sessions: number): Promise<number[]> => {
    const sizes: number[] = [];
    const sink: Sink = { name: 'sizes', write: async (batch) => void sizes.push(batchSize(batch)), close: async () => {} };
    const pipeline = new Pipeline(new TranscriptCorrelator(), [], [sink]);
    const prompts = Array.from({ length: sessions }, (_, i) =>
      JSON.stringify({ type: 'user', uuid: `u${i}`, sessionId: `s${i}`, timestamp: '2026-11-01T10:00:05.000Z', message: { role: 'user', content: 'hi' } }),
    );
    await pipeline.addLines({ path: '/p/s.jsonl', kind: 'main' }, lines(...prompts));
    expect(sizes).toEqual([]); // every turn is still open
    await pipeline.finish();
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBeGreaterThanOrEqual(sessions);
    return sizes;
  };

  it('delivers what the end of input closes at once (a last turn open in every session) in parts of at most MAX_PART_ITEMS', async () => {
    const sizes = await deliveredAtEnd(Math.ceil(MAX_PART_ITEMS * 1.5));
    expect(sizes.length).toBeGreaterThan(1);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(MAX_PART_ITEMS);
  });

  it('writes a batch received whole between the parts of a long flush, not after all of them', async () => {
    const written: string[] = [];
    const release: (() => void)[] = [];
    // A slow store: each write waits until the test lets it go.
    const sink: Sink = { name: 'slow', write: (batch) => new Promise((done) => release.push(() => done(void written.push(batch.logs[0]?.eventName === 'received' ? 'received' : `part of ${batchSize(batch)}`)))), close: async () => {} };
    const pipeline = new Pipeline(new TranscriptCorrelator(), [], [sink]);
    const prompts = Array.from({ length: MAX_PART_ITEMS }, (_, i) =>
      JSON.stringify({ type: 'user', uuid: `u${i}`, sessionId: `s${i}`, timestamp: '2026-11-01T10:00:05.000Z', message: { role: 'user', content: 'hi' } }),
    );
    await pipeline.addLines({ path: '/p/s.jsonl', kind: 'main' }, lines(...prompts));
    const finished = pipeline.finish();
    const tick = () => new Promise((settled) => setImmediate(settled));
    while (release.length === 0) await tick(); // the first part is being written
    const received = pipeline.deliver({ spans: [], metrics: [], logs: [{ id: 'r', timeMs: 0, eventName: 'received', severity: 'INFO', traceId: '', spanId: '', body: '', attributes: {} }] });
    let done = false;
    const both = Promise.all([finished, received]).then(() => (done = true));
    while (!done) {
      release.shift()?.();
      await tick();
    }
    await both;
    expect(written.length).toBeGreaterThan(3); // the flush came in parts
    expect(written[1]).toBe('received');
  });

  it('gives a sink a batch that overshoots FLUSH_ITEMS whole (its metric points are not an insert of their own)', async () => {
    const sizes = await deliveredAtEnd(Math.ceil(FLUSH_ITEMS * 0.6)); // a turn span and a turn point each
    expect(sizes).toHaveLength(1);
    expect(sizes[0]).toBeGreaterThan(FLUSH_ITEMS);
  });

  it('delivers after FLUSH_INPUT_BYTES read only while read positions wait to be committed (following, not reading once)', async () => {
    // Two unusable lines (two items to deliver), then rows that produce nothing: most bytes of a real transcript.
    const filler = JSON.stringify({ type: 'progress', data: 'x'.repeat(1 << 20) });
    const input = lines('not json', '[1]', ...Array.from({ length: Math.ceil(FLUSH_INPUT_BYTES / filler.length) + 1 }, () => filler));
    const deliveriesBeforeEnd = async (ack?: (offset: number) => void) => {
      let deliveries = 0;
      const sink: Sink = { name: 'count', write: async () => void deliveries++, close: async () => {} };
      const pipeline = new Pipeline(new TranscriptCorrelator(), [], [sink]);
      await pipeline.addLines({ path: '/p/s.jsonl', kind: 'main' }, input, ack);
      await new Promise((settled) => setImmediate(settled)); // a delivery started in the background is done
      const before = deliveries;
      await pipeline.finish();
      expect(deliveries).toBeGreaterThan(0);
      return before;
    };
    const told: number[] = [];
    expect(await deliveriesBeforeEnd((offset) => told.push(offset))).toBe(1);
    expect(told[0]).toBe(input[input.length - 1].end);
    expect(await deliveriesBeforeEnd()).toBe(0);
  });
});

describe('Pipeline: telemetry received whole (the agent’s own OTLP)', () => {
  const planted = plantSecret('aws-access-key-id');
  const received = () =>
    receivedLogs({
      resourceLogs: [{
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }, { key: 'deployment.note', value: { stringValue: planted.text } }] },
        scopeLogs: [{ logRecords: [{
          timeUnixNano: '1795973104054000000', body: { stringValue: 'claude_code.tool_result' },
          attributes: [
            { key: 'session.id', value: { stringValue: 's1' } },
            { key: 'tool_parameters', value: { stringValue: `{"command":"${planted.text}"}` } },
            { key: 'tool_output', value: { stringValue: 'y'.repeat(500) } },
          ],
        }] }],
      }],
    }).batch;

  it('is masked and capped like the sidecar’s own data before any sink sees it, and a failing sink is told to the caller, the batch not kept', async () => {
    const sink = new MemorySink();
    const pipeline = new Pipeline(new TranscriptCorrelator(), [new MaskProcessor(createSecretDetector(), Buffer.alloc(32, 7)), new CapProcessor(100)], [sink]);
    const input = received();
    await pipeline.deliver(input);
    expect(input.logs[0].origin?.resource['deployment.note']).toBe(planted.text);
    const [log, ...detections] = sink.received.logs;
    expect(findLeaks(JSON.stringify(sink.received), planted.secrets)).toEqual([]);
    const marker = /\[REDACTED:aws-access-key-id:[0-9a-f]{6}\]/;
    expect(String(log.attributes.tool_parameters)).toMatch(marker);
    expect(log.attributes['tool_output.original_length']).toBe(500);
    // Its resource too (what OTEL_RESOURCE_ATTRIBUTES adds), and the input batch is left as it was.
    expect(log.origin?.resource['service.name']).toBe('claude-code');
    expect(String(log.origin?.resource['deployment.note'])).toMatch(marker);
    expect(detections.map((d) => [d.eventName, d.attributes['ccotel.secret.field'], d.attributes['session.id']])).toEqual([
      ['ccotel.secret.detected', 'tool_parameters', 's1'],
      ['ccotel.secret.detected', 'resource.deployment.note', 's1'],
    ]);

    sink.failing = true;
    await expect(pipeline.deliver(received())).rejects.toThrow('sink down');
    sink.failing = false;
    const before = batchSize(sink.received);
    await pipeline.flush();
    expect(batchSize(sink.received)).toBe(before);
  });
});
