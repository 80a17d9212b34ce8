// The tailer alone: a fake consumer stands for the pipeline (no pipeline, no store). It hands lines over with an
// ack and commits only the positions the acks tell.
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ResumeAck } from '../model.js';
import { CheckpointStore } from './checkpoints.js';
import type { Line } from './line-reader.js';
import { TranscriptTailer, type TranscriptLineConsumer } from './transcript-tailer.js';

/** Keeps every line handed over, and each hand-over's ack for the test to tell. */
class FakeConsumer implements TranscriptLineConsumer {
  readonly lines: Line[] = [];
  readonly acks: ResumeAck[] = [];
  async addLines(_file: unknown, lines: Line[], ack: ResumeAck): Promise<void> {
    this.lines.push(...lines);
    this.acks.push(ack);
  }
  readThrough(_file: unknown, _end: number, ack: ResumeAck): void {
    this.acks.push(ack);
  }
  skip(): void {}
  reportUnreadable(): void {}
  lastEventMs(): number | undefined {
    return undefined;
  }
}

async function waitUntil(what: string, condition: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 30_000; !condition(); await new Promise((resolveDelay) => setTimeout(resolveDelay, 20))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

const row = (n: number) => `${JSON.stringify({ type: 'user', uuid: `u${n}`, timestamp: '2026-01-01T00:00:00.000Z' })}\n`;

describe('TranscriptTailer with a fake consumer', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it('commits nothing before an ack, then exactly the resume offset the ack tells; a restart reads from there', async () => {
    const root = mkdtempSync(join(tmpdir(), 'ccotel-tailer-consumer-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const projects = join(root, 'projects');
    mkdirSync(join(projects, 'p'), { recursive: true });
    const file = join(projects, 'p', 's.jsonl');
    writeFileSync(file, row(1) + row(2));
    const checkpoints = new CheckpointStore(join(root, 'state'), 'test');
    const committed = () => checkpoints.load()?.files.find((checkpoint) => checkpoint.path === file);

    const first = new FakeConsumer();
    const tailer = new TranscriptTailer({ roots: [projects], consumer: first, checkpoints, usePolling: true, pollIntervalMs: 50 });
    await tailer.start();
    cleanups.push(() => tailer.stop());
    await waitUntil('both lines handed over', () => first.lines.length === 2);
    appendFileSync(file, row(3));
    await waitUntil('the appended line handed over', () => first.lines.length === 3);
    tailer.commit();
    expect(committed()).toBeUndefined();

    // Everything read is accepted, but the turn begun at the second line is still open: restart there.
    const secondLine = first.lines[1].start;
    for (const ack of first.acks) ack(secondLine);
    await waitUntil('the told position committed', () => committed()?.resumeOffset === secondLine);
    expect(committed()?.offset).toBe(first.lines[2].end);
    await tailer.stop();

    const second = new FakeConsumer();
    const restarted = new TranscriptTailer({ roots: [projects], consumer: second, checkpoints, usePolling: true, pollIntervalMs: 50 });
    await restarted.start();
    cleanups.push(() => restarted.stop());
    await waitUntil('the open part read again', () => second.lines.length === 2);
    expect(second.lines.map((line) => line.text)).toEqual([row(2).trim(), row(3).trim()]);
  });
});
