// The tailer alone: a fake consumer stands for the pipeline (no pipeline, no store). It hands lines over with an
// ack and commits only the positions the acks tell.
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ResumeAck } from '../model.js';
import { CheckpointStore, identityOf } from './checkpoints.js';
import type { Line } from './line-reader.js';
import { TranscriptTailer, type TranscriptLineConsumer } from './transcript-tailer.js';

/** Opens of each path through fs/promises (the files are opened as they would be; this only counts). */
const opens = vi.hoisted(() => new Map<string, number>());
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  const counted: typeof actual.open = (path, ...rest) => {
    opens.set(String(path), (opens.get(String(path)) ?? 0) + 1);
    return actual.open(path, ...rest);
  };
  return { ...actual, open: counted };
});

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
    const committed = () => checkpoints.load()?.files.find((checkpoint) => checkpoint.pathId === checkpoints.pathId(file));

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

  it('Hardening II row 11: a checkpoint of the previous release (raw paths) is resumed from; the next one names no path', async () => {
    const root = mkdtempSync(join(tmpdir(), 'ccotel-tailer-consumer-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const projects = join(root, 'projects');
    // A project directory is named after a working directory, and that can hold a secret.
    const secretDir = '-home-dev-deploy-AKIAQYLPMN5HHHFPZAM2';
    mkdirSync(join(projects, secretDir), { recursive: true });
    const file = join(projects, secretDir, 's.jsonl');
    writeFileSync(file, row(1) + row(2));
    const handle = await open(file, 'r');
    const identity = await identityOf(handle);
    await handle.close();
    const state = join(root, 'state');
    mkdirSync(state);
    const checkpoints = new CheckpointStore(state, 'test');
    // As the previous release wrote it: version 1, the path raw, the second line's turn still open.
    const secondLine = row(1).length;
    const previous = { version: 1, committedAtMs: 1, files: [{ path: file, identity, offset: secondLine + row(2).length, resumeOffset: secondLine, size: secondLine + row(2).length }] };
    writeFileSync(checkpoints.path, JSON.stringify(previous));
    appendFileSync(file, row(3));

    const consumer = new FakeConsumer();
    const tailer = new TranscriptTailer({ roots: [projects], consumer, checkpoints, usePolling: true, pollIntervalMs: 50 });
    await tailer.start();
    cleanups.push(() => tailer.stop());
    await waitUntil('the open part and the new line read', () => consumer.lines.length === 2);
    expect(consumer.lines.map((line) => line.text)).toEqual([row(2).trim(), row(3).trim()]);
    for (const ack of consumer.acks) ack(consumer.lines[1].start);
    await waitUntil('the new position committed', () => checkpoints.load()?.files[0]?.resumeOffset === consumer.lines[1].start);
    await tailer.stop();
    const written = readdirSync(state).map((name) => readFileSync(join(state, name), 'utf8')).join('\n');
    expect(written).not.toContain('AKIA');
    expect(written).not.toContain(projects);
    expect(JSON.parse(readFileSync(checkpoints.path, 'utf8')).version).toBe(2);
  });

  it('opens each file once a read: the open that identifies it is the one read through, and a whole fingerprint is not taken again', async () => {
    const root = mkdtempSync(join(tmpdir(), 'ccotel-tailer-consumer-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const projects = join(root, 'projects');
    mkdirSync(join(projects, 'p'), { recursive: true });
    // Each longer than the bytes that identify a file, so that no file is identified again after its read.
    const files = [1, 2, 3].map((n) => join(projects, 'p', `s${n}.jsonl`));
    for (const file of files) writeFileSync(file, Array.from({ length: 40 }, (_, n) => row(n)).join(''));
    const consumer = new FakeConsumer();
    const tailer = new TranscriptTailer({ roots: [projects], consumer, checkpoints: new CheckpointStore(join(root, 'state'), 'test'), usePolling: true, pollIntervalMs: 50 });
    await tailer.start();
    cleanups.push(() => tailer.stop());
    await waitUntil('every line handed over', () => consumer.lines.length === 3 * 40);
    expect(files.map((file) => opens.get(file))).toEqual([1, 1, 1]);
    // Following: an append is read with one open more, and the file, identified by its whole fingerprint, not again.
    appendFileSync(files[0], row(40));
    await waitUntil('the appended line handed over', () => consumer.lines.length === 3 * 40 + 1);
    expect(files.map((file) => opens.get(file))).toEqual([2, 1, 1]);
  });
});
