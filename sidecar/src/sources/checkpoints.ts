// Committed read positions of the transcript files, one JSON document per sink set, replaced atomically
// (write, fsync, rename, fsync the directory), so a crash leaves either the old or the new version.
// A file is known by an identity that survives rename: device + inode + a fingerprint of its first
// bytes (as the Collector's filelog receiver does), which also tells a recreated file from the old one.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { StateWrites, writeFileAtomic } from './state-file.js';

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
  /** State files whose last write failed (disk full, read-only, no descriptor left), with the error. */
  stateErrors?: Record<string, string>;
  /** The catch-up on the history since the last run: what is left of it, until it is done (build-pipeline.ts). */
  catchUp?: CatchUp;
}

export interface CatchUp {
  done: boolean;
  filesLeft: number;
  bytesLeft: number;
  /** Sessions with records since they were last closed: their open turns are not stored yet. */
  openSessions: number;
  /** Records read and not yet handed to the sinks. */
  recordsPending: number;
}

export class CheckpointStore {
  readonly path: string;
  readonly statusPath: string;

  /** `key` separates the positions of different sink sets (another store has not seen the data). */
  constructor(
    readonly dir: string,
    readonly key: string,
    readonly writes = new StateWrites(),
  ) {
    this.path = join(dir, `transcripts-${key}.json`);
    this.statusPath = join(dir, `status-${key}.json`);
  }

  /** Status is advisory: replaced atomically, not synced. False (reported in `writes`) when it failed. */
  saveStatus(status: SidecarStatus): boolean {
    return this.writes.attempt(this.statusPath, () => writeFileAtomic(this.statusPath, JSON.stringify({ ...status, stateErrors: this.writes.errors }), false));
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

  /** False (reported in `writes`, the previous version kept) when it could not be written. */
  save(files: FileCheckpoint[], now = Date.now()): boolean {
    const document: CheckpointDocument = { version: 1, committedAtMs: now, files };
    return this.writes.attempt(this.path, () => writeFileAtomic(this.path, JSON.stringify(document), true));
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
  // A status file alone is a sidecar that could not commit yet (e.g. its checkpoint write keeps failing).
  const keys = names.map((name) => /^(?:transcripts|status)-([0-9a-f]+)\.json$/.exec(name)?.[1]).filter((key): key is string => key !== undefined);
  return [...new Set(keys)].map((key) => new CheckpointStore(dir, key));
}
