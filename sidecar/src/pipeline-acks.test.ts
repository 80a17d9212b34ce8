// Acknowledgements that travel with the lines: the pipeline tells each ack where a restart must read its file
// from, in order, once what the lines produced was accepted; an open turn holds that offset back until it closes.
import { describe, expect, it } from 'vitest';
import { MemorySink } from '../../test/helpers/memory-sink.js';
import { turnLines } from '../../test/reliability/transcripts.js';
import { Pipeline } from './pipeline.js';
import { ShellCorrelator } from './processors/correlate-shell.js';
import { TranscriptCorrelator } from './processors/transcripts/correlator.js';
import type { ShellRecord } from './records/shell-log.js';
import { textLines } from './sources/line-reader.js';

const FILE = { path: '/p/session-a.jsonl', kind: 'main' as const };
const HOUR_MS = 3_600_000;

describe('Pipeline: ordered acks of transcript lines', () => {
  it('an open turn holds the resume offset back; its close releases it; acks are told in order', async () => {
    const sink = new MemorySink();
    const pipeline = new Pipeline(new TranscriptCorrelator(), [], [sink]);
    const startMs = Date.now() - 2 * HOUR_MS;
    const turn0 = textLines(turnLines({ sessionId: 'session-a', index: 0, startMs }));
    const [prompt1, call1] = textLines(turnLines({ sessionId: 'session-a', index: 1, startMs }), turn0[turn0.length - 1].end);
    const told: string[] = [];
    await pipeline.addLines(FILE, turn0, (resume) => told.push(`turn 0: ${resume}`));
    await pipeline.addLines(FILE, [prompt1, call1], (resume) => told.push(`turn 1: ${resume}`));
    expect(told).toEqual([]); // nothing is told before the sinks accepted it
    await pipeline.flush();
    // Turn 0 is out (its lines are safe); turn 1 is open: a restart must read from its prompt.
    expect(told).toEqual([`turn 0: ${turn0[turn0.length - 1].end}`, `turn 1: ${prompt1.start}`]);
    await pipeline.flush();
    expect(told).toHaveLength(2); // nothing moved: told nothing new
    pipeline.closeIdle(Date.now() - HOUR_MS); // its session is idle: turn 1 goes out
    await pipeline.flush();
    expect(sink.received.spans.some((span) => span.name === 'invoke_agent claude-code' && span.startMs === Date.parse(JSON.parse(prompt1.text).timestamp))).toBe(true);
    expect(told.at(-1)).toBe(`turn 1: ${call1.end}`);
  });

  it('tells nothing while the sinks refuse the batch, and everything in order once they accept it', async () => {
    const sink = new MemorySink();
    const pipeline = new Pipeline(new TranscriptCorrelator(), [], [sink]);
    const startMs = Date.now() - 2 * HOUR_MS;
    const turn0 = textLines(turnLines({ sessionId: 'session-a', index: 0, startMs }));
    const [prompt1] = textLines(turnLines({ sessionId: 'session-a', index: 1, startMs }), turn0[turn0.length - 1].end);
    const told: number[] = [];
    await pipeline.addLines(FILE, turn0.slice(0, 2), (resume) => told.push(resume));
    await pipeline.addLines(FILE, [...turn0.slice(2), prompt1], (resume) => told.push(resume)); // the next prompt closes turn 0
    sink.failing = true;
    await expect(pipeline.flush()).rejects.toThrow('sink down');
    expect(told).toEqual([]);
    sink.failing = false;
    await pipeline.flush();
    expect(told).toEqual([turn0[1].end, prompt1.start]);
  });
});

describe('ShellCorrelator: ordered acks of shell-log records', () => {
  const SESSION = 'session-s';
  const record = (ev: 'start' | 'end', seq: number, second: number): ShellRecord => ({ v: 1, ev, sid: SESSION, pid: 4242, seq, ts: (Date.now() - HOUR_MS + second * 1000) * 1000, cmd: 'true', psid: 4242 });

  it('a command still waiting for its Bash span holds the resume offset at its start line; expiring it releases it', async () => {
    const shell = new ShellCorrelator();
    const pipeline = new Pipeline(new TranscriptCorrelator(), [], [new MemorySink()], [shell]);
    const told: number[] = [];
    // Lines at 0 and 100: a command started and ended; no Bash span is known, so it waits.
    shell.addRecords({ file: '/s.jsonl', records: [{ record: record('start', 1, 0), offset: 0 }, { record: record('end', 1, 1), offset: 100 }], end: 200 }, (resume) => told.push(resume));
    await pipeline.flush();
    expect(told).toEqual([0]);
    shell.expire(Number.POSITIVE_INFINITY); // given up on: it goes out with what is known
    await pipeline.flush();
    expect(told).toEqual([0, 200]);
  });
});
