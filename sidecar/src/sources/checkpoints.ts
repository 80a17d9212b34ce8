// Committed read positions of the transcript files, one JSON document per sink set, replaced atomically
// (write, fsync, rename, fsync the directory), so a crash leaves either the old or the new version.
// A file is known by an identity that survives rename: device + inode + a fingerprint of its first
// bytes (as the Collector's filelog receiver does), which also tells a recreated file from the old one.
// Paths are not written: a project directory is named after a working directory, which can hold a secret. A
// checkpoint names its file by a keyed hash of the path (the key is the document's own), enough to find it
// again under the roots; a version 1 document (raw paths, before) is read and written again as version 2.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { isAlive } from '../process-alive.js';
import { StateWrites, writeFileAtomic } from './state-file.js';
import type { ReceiverStats } from './otlp-receiver.js';

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
}

/** A file's checkpoint as written: its path replaced by `CheckpointStore.pathId(path)`. */
export interface SavedCheckpoint extends Omit<FileCheckpoint, 'path'> {
  pathId: string;
}

export interface CheckpointDocument {
  version: 2;
  committedAtMs: number;
  /** The key of the path hashes (hex), kept from one version of the document to the next. */
  pathKey: string;
  files: SavedCheckpoint[];
}

/** What the previous release wrote. */
interface DocumentV1 {
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
  /** When transcript positions last moved (acks), and when they were last written to the checkpoint. */
  committedMs?: number;
  savedMs?: number;
  /** Sources retrying because no descriptor was left, by source: `retrying after EMFILE since …`. */
  retrying?: Record<string, string>;
  /** The catch-up on the history since the last run: what is left of it, until it is done (build-pipeline.ts). */
  catchUp?: CatchUp;
  /** The receiver of Claude Code's own telemetry, while there is one (sources/otlp-receiver.ts). */
  nativeTelemetry?: NativeTelemetryStatus;
}

export type NativeTelemetryStatus = ReceiverStats & { url: string };

export interface CatchUp {
  done: boolean;
  filesLeft: number;
  bytesLeft: number;
  /** Sessions with records since they were last closed: their open turns are not stored yet. */
  openSessions: number;
  /** Records read and not yet handed to the sinks. */
  recordsPending: number;
}

/**
 * Where the status goes while the state dir cannot take it (full, read-only), so that `ccotel status` still hears
 * from the running sidecar: `$XDG_RUNTIME_DIR/ccotel` (a tmpfs of this user), else `<tmp>/ccotel-<uid>` (private: secure-dir.ts).
 */
export function runtimeStatusDir(env: NodeJS.ProcessEnv = process.env): string {
  const runtime = env.XDG_RUNTIME_DIR;
  return runtime && isAbsolute(runtime) ? join(runtime, 'ccotel') : join(tmpdir(), `ccotel-${process.getuid?.() ?? 'user'}`);
}

const FALLBACK_STATUS = /^status-([0-9a-f]{16})-([0-9a-f]+)\.json$/;

/** The state dir as fallback status files name it. */
function dirKey(dir: string): string {
  return createHash('sha256').update(dir).digest('hex').slice(0, 16);
}

export class CheckpointStore {
  readonly path: string;
  readonly statusPath: string;
  /** The status while `statusPath` cannot be written (see runtimeStatusDir). */
  readonly fallbackStatusPath: string;
  private fellBack = false;
  private pathKey?: string;

  /** `key` separates the positions of different sink sets (another store has not seen the data). */
  constructor(
    readonly dir: string,
    readonly key: string,
    readonly writes = new StateWrites(),
  ) {
    this.path = join(dir, `transcripts-${key}.json`);
    this.statusPath = join(dir, `status-${key}.json`);
    this.fallbackStatusPath = join(runtimeStatusDir(), `status-${dirKey(dir)}-${key}.json`);
  }

  /**
   * Status is advisory: replaced atomically, not synced. False (reported in `writes`) when it failed; it then goes
   * to `fallbackStatusPath`, with the failure, until the state dir takes it again.
   */
  saveStatus(status: SidecarStatus): boolean {
    const text = () => JSON.stringify({ ...status, stateErrors: this.writes.errors });
    if (this.writes.attempt(this.statusPath, () => writeFileAtomic(this.statusPath, text(), false))) {
      if (this.fellBack) rmSync(this.fallbackStatusPath, { force: true });
      this.fellBack = false;
      return true;
    }
    try {
      writeFileAtomic(this.fallbackStatusPath, text(), false); // refused in a dir another user could have written
      this.fellBack = true;
    } catch {
      // nowhere to tell it: the status shows the last one written
    }
    return false;
  }

  /** The newer of the status in the state dir and the fallback one. */
  loadStatus(): SidecarStatus | undefined {
    const statuses = [this.statusPath, this.fallbackStatusPath].map((path) => {
      try {
        return JSON.parse(readFileSync(path, 'utf8')) as SidecarStatus;
      } catch {
        return undefined;
      }
    });
    return statuses.reduce((newest, status) => (status && (!newest || status.updatedMs > newest.updatedMs) ? status : newest), undefined);
  }

  /** How checkpoints name the file at `path` (a keyed hash: the path itself is not written). */
  pathId(path: string): string {
    return createHmac('sha256', Buffer.from(this.ownPathKey(), 'hex')).update(path).digest('hex').slice(0, 32);
  }

  private ownPathKey(): string {
    return (this.pathKey ??= randomBytes(32).toString('hex'));
  }

  /** The document, as version 2 whichever version is on disk; its key is the one `pathId` goes on with. */
  load(): CheckpointDocument | undefined {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch {
      return undefined;
    }
    let document: CheckpointDocument | DocumentV1;
    try {
      document = JSON.parse(text) as CheckpointDocument | DocumentV1;
    } catch {
      return undefined; // cannot happen with atomic replace; if it does, everything is read again (the sink drops repeats)
    }
    if (!Array.isArray(document.files)) return undefined;
    if (document.version === 2 && typeof document.pathKey === 'string') {
      this.pathKey = document.pathKey;
      return document;
    }
    if (document.version !== 1) return undefined;
    const files = document.files.map(({ path, ...rest }) => ({ ...rest, pathId: this.pathId(path) }));
    return { version: 2, committedAtMs: document.committedAtMs, pathKey: this.ownPathKey(), files };
  }

  /**
   * Written before each save, which waits for it (a false answer fails the save): state the committed positions rely
   * on, such as the transcript correlator's claims (ClaimJournal).
   */
  beforeSave?: () => boolean;

  /** False (reported in `writes`, the previous version kept) when it could not be written. */
  save(files: FileCheckpoint[], now = Date.now()): boolean {
    if (this.beforeSave && !this.beforeSave()) return false;
    const saved = files.map(({ path, ...rest }) => ({ pathId: this.pathId(path), ...rest }));
    const document: CheckpointDocument = { version: 2, committedAtMs: now, pathKey: this.ownPathKey(), files: saved };
    return this.writes.attempt(this.path, () => writeFileAtomic(this.path, JSON.stringify(document), true));
  }
}

/** A short stable key for the set of sinks a checkpoint belongs to. */
export function sinkKey(parts: string[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 16);
}

/** Every checkpoint set in `dir` (one per sink set that ran on this host). */
function listOrNone(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** A status written by a sidecar that is still running (not stopped, its process alive). */
export function isRunning(status: SidecarStatus | undefined): status is SidecarStatus {
  return status !== undefined && status.sink.state !== 'stopped' && isAlive(status.pid);
}

export function checkpointStoresIn(dir: string): CheckpointStore[] {
  const names = listOrNone(dir);
  // A status file alone is a sidecar that could not commit yet (e.g. its checkpoint write keeps failing).
  const keys = names.map((name) => /^(?:transcripts|status)-([0-9a-f]+)\.json$/.exec(name)?.[1]).filter((key): key is string => key !== undefined);
  for (const name of listOrNone(runtimeStatusDir())) {
    const match = FALLBACK_STATUS.exec(name);
    if (match?.[1] === dirKey(dir)) keys.push(match[2]);
  }
  return [...new Set(keys)].map((key) => new CheckpointStore(dir, key));
}
