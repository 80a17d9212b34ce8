// Committed read positions of the transcript files, one JSON document per sink set, replaced atomically
// (write, fsync, rename, fsync the directory), so a crash leaves either the old or the new version.
// A file is known by an identity that survives rename: device + inode + a fingerprint of its first
// bytes (as the Collector's filelog receiver does), which also tells a recreated file from the old one.
import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/** Bytes of the start of a file that identify it (filelog receiver default: 1 KB). */
export const FINGERPRINT_BYTES = 1000;

export interface FileIdentity {
  dev: number;
  ino: number;
  /** sha256 (hex) of the first `fingerprintBytes` bytes. */
  fingerprint: string;
  /** Less than FINGERPRINT_BYTES while the file is shorter; grows with it. */
  fingerprintBytes: number;
}

export interface FileCheckpoint {
  path: string;
  identity: FileIdentity;
  /** Everything before this byte offset was accepted by every sink. */
  offset: number;
  /** Where a restart reads from: the start of the oldest turn still open (≤ offset). */
  resumeOffset: number;
  /** File size when committed; `size - offset` is what was still to read. */
  size: number;
  /** Time (from the records) of the last record read. */
  lastEventMs?: number;
  /** Why the file could not be read, while it cannot. */
  unreadable?: string;
}

export interface CheckpointDocument {
  version: 1;
  committedAtMs: number;
  files: FileCheckpoint[];
}

/** Identity of an open file, reading at most FINGERPRINT_BYTES of its start. */
export async function identityOf(handle: FileHandle): Promise<FileIdentity> {
  const info = await handle.stat();
  const length = Math.min(FINGERPRINT_BYTES, info.size);
  return { dev: info.dev, ino: info.ino, fingerprint: await fingerprintOf(handle, length), fingerprintBytes: length };
}

async function fingerprintOf(handle: FileHandle, length: number): Promise<string> {
  const buffer = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return createHash('sha256').update(buffer.subarray(0, done)).digest('hex');
}

/**
 * Whether the open file is the one `known` describes: same device and inode, and its start still holds the
 * fingerprinted bytes (a truncated and rewritten, or deleted and recreated, file on a reused inode does not).
 */
export async function isSameFile(known: FileIdentity, handle: FileHandle): Promise<boolean> {
  const info = await handle.stat();
  if (info.dev !== known.dev || info.ino !== known.ino || info.size < known.fingerprintBytes) return false;
  return (await fingerprintOf(handle, known.fingerprintBytes)) === known.fingerprint;
}

/** What a running sidecar says about itself, next to its checkpoints, for `ccotel status`. */
export interface SidecarStatus {
  pid: number;
  startedMs: number;
  updatedMs: number;
  /** The store it writes to (directory or URL without credentials), or '' when OTLP only. */
  store: string;
  otlpEndpoint: string;
  roots: string[];
  watcher: 'inotify' | 'polling' | 'stopped';
  sink: { state: 'starting' | 'ok' | 'retrying' | 'stopped'; lastError?: string; lastOkMs?: number; retries: number };
  filesFollowed: number;
  unreadableFiles: Record<string, string>;
  linesSkipped: Record<string, number>;
}

export class CheckpointStore {
  readonly path: string;
  readonly statusPath: string;

  /** `key` separates the positions of different sink sets (another store has not seen the data). */
  constructor(readonly dir: string, readonly key: string) {
    this.path = join(dir, `transcripts-${key}.json`);
    this.statusPath = join(dir, `status-${key}.json`);
  }

  /** Status is advisory: replaced atomically, not synced. */
  saveStatus(status: SidecarStatus): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const temporary = `${this.statusPath}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(status), { mode: 0o600 });
    renameSync(temporary, this.statusPath);
  }

  loadStatus(): SidecarStatus | undefined {
    try {
      return JSON.parse(readFileSync(this.statusPath, 'utf8')) as SidecarStatus;
    } catch {
      return undefined;
    }
  }

  load(): CheckpointDocument | undefined {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch {
      return undefined;
    }
    try {
      const document = JSON.parse(text) as CheckpointDocument;
      return document.version === 1 && Array.isArray(document.files) ? document : undefined;
    } catch {
      return undefined; // cannot happen with atomic replace; if it does, everything is read again (the sink drops repeats)
    }
  }

  save(files: FileCheckpoint[], now = Date.now()): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const document: CheckpointDocument = { version: 1, committedAtMs: now, files };
    const temporary = `${this.path}.${process.pid}.tmp`;
    const fd = openSync(temporary, 'w', 0o600);
    try {
      writeSync(fd, JSON.stringify(document));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, this.path);
    const dirFd = openSync(this.dir, 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  }
}

/** A short stable key for the set of sinks a checkpoint belongs to. */
export function sinkKey(parts: string[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 16);
}

/** Every checkpoint set in `dir` (one per sink set that ran on this host). */
export function checkpointStoresIn(dir: string): CheckpointStore[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .map((name) => /^transcripts-([0-9a-f]+)\.json$/.exec(name)?.[1])
    .filter((key): key is string => key !== undefined)
    .map((key) => new CheckpointStore(dir, key));
}
