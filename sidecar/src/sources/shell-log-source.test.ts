import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Pipeline } from '../pipeline.js';
import { ShellCorrelator } from '../processors/correlate-shell.js';
import type { ShellRecord } from '../records/shell-log.js';
import { TranscriptCorrelator } from '../processors/transcripts/correlator.js';
import { ShellLogSource } from './shell-log-source.js';

/** Longer than any test: what is read was read because the directory changed, not by the safety poll. */
const HOUR_MS = 3_600_000;
const SESSION = 'cccccccc-0000-4000-8000-000000000003';

/** Keeps the sequence number of every record it is given. */
class RecordingShell extends ShellCorrelator {
  readonly seqs: number[] = [];
  override add(record: ShellRecord, file: string, offset: number): void {
    this.seqs.push(record.seq);
    super.add(record, file, offset);
  }
}

const startLines = (seqs: number[]) => seqs.map((seq) => `${JSON.stringify({ v: 1, ev: 'start', sid: SESSION, pid: 4242, seq, ts: 1_790_000_000_000_000 + seq, cmd: `echo ${seq}` })}\n`).join('');

async function waitUntil(what: string, condition: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 20_000; !condition(); await new Promise((resolveDelay) => setTimeout(resolveDelay, 20))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

describe('ShellLogSource', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  function setup() {
    const state = mkdtempSync(join(tmpdir(), 'ccotel-shell-log-'));
    const dir = join(state, 'shell');
    const shell = new RecordingShell();
    const source = new ShellLogSource({ dir, emit: (read, ack) => shell.addRecords(read, ack), pipeline: new Pipeline(new TranscriptCorrelator(), [], [], [shell]), safetyPollMs: HOUR_MS });
    cleanups.push(() => rmSync(state, { recursive: true, force: true }));
    return { dir, shell, source, log: join(dir, `${SESSION}.jsonl`) };
  }

  async function follow(source: ShellLogSource): Promise<void> {
    source.start();
    cleanups.unshift(() => source.stop());
    await new Promise((resolveDelay) => setTimeout(resolveDelay, 200)); // its first read is over
  }

  it('reads a rotated log (renamed away, a longer one written in its place) from its start', async () => {
    const { dir, shell, source, log } = setup();
    mkdirSync(dir);
    writeFileSync(log, startLines([1, 2]));
    await source.readAll();
    renameSync(log, `${log}.1`);
    writeFileSync(log, startLines([10, 11, 12]));
    await source.readAll();
    expect(shell.seqs).toEqual([1, 2, 10, 11, 12]);
    expect(source.stats.skipped).toBe(0);
  });

  it('follows a shell log directory created after the start at once', async () => {
    const { dir, shell, source, log } = setup();
    await follow(source);
    mkdirSync(dir);
    writeFileSync(log, startLines([1]));
    await waitUntil('the first command', () => shell.seqs.length === 1);
    writeFileSync(log, startLines([1, 2]));
    await waitUntil('the second command', () => shell.seqs.length === 2);
    expect(shell.seqs).toEqual([1, 2]);
  });

  it('follows a rotated log at once', async () => {
    const { dir, shell, source, log } = setup();
    mkdirSync(dir);
    writeFileSync(log, startLines([1]));
    await follow(source);
    expect(shell.seqs).toEqual([1]);
    renameSync(log, `${log}.1`);
    writeFileSync(log, startLines([10]));
    await waitUntil('the command in the new log', () => shell.seqs.length === 2);
    expect(shell.seqs).toEqual([1, 10]);
  });
});
