import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiskQueue, QueueBusyError } from './disk-queue.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ccotel-queue-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

describe('DiskQueue', () => {
  it('keeps entries in order on disk and finds them again after a restart, without unfinished appends', async () => {
    const queue = new DiskQueue(dir, 1000);
    await queue.append('traces', 3, bytes(10, 1));
    await queue.append('logs', 2, bytes(20, 2));
    await queue.append('metrics', 5, bytes(30, 3));
    await queue.remove(queue.nextToSend()!);
    writeFileSync(join(dir, '000000000099.traces.1.pb.tmp'), 'half');

    const reopened = new DiskQueue(dir, 1000);
    expect([reopened.length, reopened.items, reopened.bytes]).toEqual([2, 7, 50]);
    expect(reopened.nextToSend()).toMatchObject({ signal: 'logs', items: 2 });
    expect(await reopened.read(reopened.nextToSend()!)).toEqual(Buffer.from(bytes(20, 2)));
    expect(readdirSync(dir).some((name) => name.endsWith('.tmp'))).toBe(false);
    // New entries go after the old ones.
    await reopened.append('traces', 1, bytes(5, 4));
    await reopened.remove(reopened.nextToSend()!);
    await reopened.remove(reopened.nextToSend()!);
    expect(await reopened.read(reopened.nextToSend()!)).toEqual(Buffer.from(bytes(5, 4)));
  });

  it('belongs to one process at a time, and a lock left by a dead process is taken over', async () => {
    const queue = new DiskQueue(dir, 1000);
    expect(() => new DiskQueue(dir, 1000)).not.toThrow(); // the same process may reopen it
    writeFileSync(join(dir, 'owner.pid'), '1'); // pid 1 is alive and is not us
    expect(() => new DiskQueue(dir, 1000)).toThrow(QueueBusyError);
    writeFileSync(join(dir, 'owner.pid'), '2147483646'); // no such process
    expect(() => new DiskQueue(dir, 1000)).not.toThrow();
    queue.release();
    expect(readdirSync(dir)).not.toContain('owner.pid');
  });

  it('drops the oldest entries, never the one in flight, to stay within its bound', async () => {
    const queue = new DiskQueue(dir, 100);
    await queue.append('traces', 1, bytes(40, 1));
    await queue.append('logs', 2, bytes(40, 2));
    queue.inFlight.add(queue.nextToSend()!);
    const dropped = await queue.append('metrics', 3, bytes(40, 3));
    expect(dropped.map((entry) => [entry.signal, entry.items])).toEqual([['logs', 2]]);
    expect([queue.length, queue.bytes]).toEqual([2, 80]);
    expect(readdirSync(dir).filter((name) => name.endsWith('.pb'))).toHaveLength(2);
  });

  it('refuses a body larger than the whole bound and reports it as dropped', async () => {
    const queue = new DiskQueue(dir, 100);
    await queue.append('traces', 1, bytes(40, 1));
    const dropped = await queue.append('logs', 7, bytes(101, 2));
    expect(dropped.map((entry) => [entry.signal, entry.items])).toEqual([['logs', 7]]);
    expect([queue.length, queue.bytes]).toEqual([1, 40]);
  });
});
