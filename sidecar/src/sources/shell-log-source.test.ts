// The source alone: a fake emit stands for the shell correlator (no pipeline, no store).
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ResumeAck } from '../model.js';
import type { ShellRead } from '../records/shell-log.js';
import type { SkippedRecord } from '../skipped-lines.js';
import { ShellLogSource, type ShellLogOptions } from './shell-log-source.js';

/** Longer than any test: what is read was read because the directory changed, not by the safety poll. */
const HOUR_MS = 3_600_000;
const SESSION = 'cccccccc-0000-4000-8000-000000000003';

/** A fake emit: keeps the sequence number of every record, and each read with its ack (to be told by the test). */
class FakeEmit {
  readonly seqs: number[] = [];
  readonly reads: { read: ShellRead; ack: ResumeAck }[] = [];
  readonly skipped: SkippedRecord[] = [];
  readonly emit: ShellLogOptions['emit'] = (read, ack) => {
    this.seqs.push(...read.records.map(({ record }) => record.seq));
    this.reads.push({ read, ack });
  };
  readonly skipRecord = (record: SkippedRecord) => void this.skipped.push(record);
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
    const shell = new FakeEmit();
    const checkpointPath = join(state, 'shell-checkpoint.json');
    const sourceOf = (output: FakeEmit) => new ShellLogSource({ dir, emit: output.emit, skipRecord: output.skipRecord, checkpointPath, safetyPollMs: HOUR_MS });
    cleanups.push(() => rmSync(state, { recursive: true, force: true }));
    return { dir, shell, source: sourceOf(shell), sourceOf, checkpointPath, log: join(dir, `${SESSION}.jsonl`) };
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

  it('commits the resume offset its acks tell, and a restart reads from there', async () => {
    const { dir, shell, source, sourceOf, checkpointPath, log } = setup();
    mkdirSync(dir);
    writeFileSync(log, startLines([1, 2]));
    appendFileSync(log, 'not a record\n');
    await source.readAll();
    expect(shell.skipped.map((record) => record.offset)).toEqual([startLines([1, 2]).length]);
    const [{ read, ack }] = shell.reads;
    expect(read).toMatchObject({ file: log, end: startLines([1, 2]).length + 'not a record\n'.length });
    expect(read.records.map(({ offset }) => offset)).toEqual([0, startLines([1]).length]);
    // Command 2 is still waiting for its span: the correlator would tell its start line.
    ack(startLines([1]).length);
    expect(JSON.parse(readFileSync(checkpointPath, 'utf8')).offsets).toEqual({ [log]: startLines([1]).length });
    const restarted = new FakeEmit();
    await sourceOf(restarted).readAll();
    expect(restarted.seqs).toEqual([2]);
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
