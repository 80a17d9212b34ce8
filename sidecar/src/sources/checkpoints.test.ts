import { appendFileSync, mkdtempSync, readdirSync, renameSync, rmSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CheckpointStore, FINGERPRINT_BYTES, identityOf, isSameFile, type FileCheckpoint } from './checkpoints.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ccotel-checkpoints-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function identityAt(path: string) {
  const handle = await open(path, 'r');
  try {
    return await identityOf(handle);
  } finally {
    await handle.close();
  }
}

async function sameAt(path: string, known: Awaited<ReturnType<typeof identityOf>>) {
  const handle = await open(path, 'r');
  try {
    return await isSameFile(known, handle);
  } finally {
    await handle.close();
  }
}

describe('checkpoint store', () => {
  it('replaces the document atomically: a torn temporary file never replaces the committed one', () => {
    const store = new CheckpointStore(join(dir, 'cp'), 'k');
    const file: FileCheckpoint = { path: '/x.jsonl', identity: { dev: 1, ino: 2, fingerprint: 'f', fingerprintBytes: 1 }, offset: 10, resumeOffset: 4, size: 12 };
    store.save([file], 1000);
    // A crash in the middle of the next save leaves only a partial temporary file behind.
    writeFileSync(`${store.path}.999.tmp`, '{"version":1,"files":[{"pa');
    const { path, ...saved } = file;
    expect(store.load()).toEqual({ version: 2, committedAtMs: 1000, pathKey: expect.any(String), files: [{ ...saved, pathId: store.pathId(path) }] });
    store.save([{ ...file, offset: 20 }], 2000);
    expect(store.load()?.files[0].offset).toBe(20);
    expect(readdirSync(join(dir, 'cp')).filter((name) => name.endsWith('.tmp') && name.includes(String(process.pid)))).toEqual([]);
  });

  it('keeps sink sets apart', () => {
    new CheckpointStore(dir, 'a').save([], 1);
    expect(new CheckpointStore(dir, 'b').load()).toBeUndefined();
  });
});

describe('file identity', () => {
  it('survives rename, and grows its fingerprint with a short file', async () => {
    const path = join(dir, 'a.jsonl');
    writeFileSync(path, 'first line\n');
    const short = await identityAt(path);
    expect(short.fingerprintBytes).toBe(11);
    appendFileSync(path, 'x'.repeat(5000));
    expect(await sameAt(path, short)).toBe(true);
    const full = await identityAt(path);
    expect(full.fingerprintBytes).toBe(FINGERPRINT_BYTES);
    renameSync(path, join(dir, 'b.jsonl'));
    expect(await sameAt(join(dir, 'b.jsonl'), full)).toBe(true);
  });

  it('tells a truncated-and-rewritten or recreated file from the one it knew', async () => {
    const path = join(dir, 'a.jsonl');
    writeFileSync(path, 'session one\n'.repeat(200));
    const known = await identityAt(path);
    truncateSync(path, 0);
    writeFileSync(path, 'session two\n'.repeat(200));
    expect(await sameAt(path, known)).toBe(false); // same inode, other start
    unlinkSync(path);
    writeFileSync(path, 'session one\n'.repeat(200));
    const recreated = await identityAt(path);
    // Same bytes on a new (or reused) inode: same only if the inode is the same too.
    expect(await sameAt(path, known)).toBe(recreated.ino === known.ino && recreated.dev === known.dev);
  });
});
