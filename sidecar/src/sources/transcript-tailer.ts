// Follow transcript files: catch up on every file from its checkpoint, then read whatever is appended.
// A change event only marks a file dirty; one loop reads dirty files one at a time from their read
// position to the end (so reads of a file are serialized and events coalesce), then waits until the
// sinks accepted everything before committing positions. While a flush is failing nothing more is read,
// so memory stays bounded however long the sink is down. A file that changed has its size checked again a
// few times after its last event (TailRecheck), so a write any watcher missed is still read to the end.
import { lstat, type FileHandle } from 'node:fs/promises';
import type { Pipeline } from '../pipeline.js';
import type { TranscriptFile } from '../processors/transcripts/correlator.js';
import { CheckpointStore, identityOf, isSameFile, type FileCheckpoint, type FileIdentity } from './checkpoints.js';
import { readLines } from './line-reader.js';
import { openRegularFile } from './regular-file.js';
import { TailRecheck } from './tail-recheck.js';
import { classifyTranscriptPath, TranscriptTree } from './transcript-tree.js';
import { TranscriptWatcher } from './transcript-watcher.js';

export interface TailerOptions {
  /** The projects dirs to follow; those that do not exist yet are followed once they appear. */
  roots: string[];
  pipeline: Pipeline;
  checkpoints: CheckpointStore;
  /** A session with no record for this long has its open turn closed. */
  idleMs: number;
  /** Poll the files instead of using inotify (also the fallback when the watcher fails). */
  usePolling?: boolean;
  pollIntervalMs?: number;
  /** Messages for the operator (watcher fallback, sink retries, unreadable files). */
  log?: (message: string) => void;
  /**
   * Called before each file read: hooks fire just before Claude Code writes the rows they belong to, so taking
   * in the hook spool first lets a tool span carry its PostToolUse event instead of it arriving late.
   */
  beforeRead?: () => void;
}

export interface SinkState {
  state: 'starting' | 'ok' | 'retrying';
  lastError?: string;
  lastOkMs?: number;
  retries: number;
}

interface TrackedFile {
  /** The path and kind the pipeline knows the file by (kept when the file is renamed). */
  file: TranscriptFile;
  /** Where the file is now. */
  path: string;
  identity?: FileIdentity;
  /** Read position: just after the last complete line given to the pipeline. */
  offset: number;
  /** Last committed (offset, resume offset); a commit happens only when one changes. */
  committed?: { offset: number; resumeOffset: number };
  size: number;
  unreadable?: string;
  /** Wall time it disappeared from its path (moved away, deleted, or replaced by another file). */
  goneAtMs?: number;
}

/** A file is followed (and checkpointed) once it was identified and something was committed for it. */
function isFollowed(tracked: TrackedFile): boolean {
  return tracked.identity !== undefined && tracked.committed !== undefined;
}

/** A gone file is remembered this long, to be recognised if it reappears under another name. */
const GONE_KEEP_MS = 60_000;
/** During catch-up, commit after this many bytes so a crash does not start the catch-up over. */
const COMMIT_EVERY_BYTES = 32 << 20;
const RETRY_FIRST_MS = 500;
/** Short: a retry is one request, and the store being back should not wait long to be noticed. */
const RETRY_MAX_MS = 5_000;
/** A checkpoint that could not be written (disk full, read-only) is tried again this often. */
const SAVE_RETRY_MS = 5_000;

export class TranscriptTailer {
  readonly sink: SinkState = { state: 'starting', retries: 0 };
  private readonly files = new Map<string, TrackedFile>();
  /** Files no longer at their path, kept a while so a rename can be recognised when the new name shows up. */
  private vanished: TrackedFile[] = [];
  /** Paths with unread changes, in the order they changed. */
  private readonly dirty = new Set<string>();
  private readonly recheck = new TailRecheck({
    sizeRead: (path) => this.files.get(path)?.size,
    onBehind: (path) => {
      this.dirty.add(path);
      this.wake?.();
    },
  });
  /** Positions committed in memory but not yet written (the last checkpoint write failed). */
  private unsaved = false;
  private saveRetryTimer?: NodeJS.Timeout;
  private readonly tree: TranscriptTree;
  private readonly watcher: TranscriptWatcher;
  private wake?: () => void;
  private stopping = false;
  private loop?: Promise<void>;
  private idleTimer?: NodeJS.Timeout;
  private idleDue = false;
  private readSinceCommit = 0;

  constructor(private readonly options: TailerOptions) {
    this.tree = new TranscriptTree(options.roots, options.log);
    this.watcher = new TranscriptWatcher({
      tree: this.tree,
      onPath: (path) => this.changed(path),
      usePolling: options.usePolling ?? false,
      pollIntervalMs: options.pollIntervalMs ?? 1_000,
      log: options.log,
    });
  }

  get watcherMode(): TranscriptWatcher['mode'] {
    return this.watcher.mode;
  }

  /** Catch up on every discovered file (from its checkpoint), then follow changes. */
  async start(): Promise<void> {
    // Watch first: a file created between the scan below and the watcher being ready would be missed.
    await this.watcher.start();
    const saved = new Map((this.options.checkpoints.load()?.files ?? []).map((checkpoint) => [checkpoint.path, checkpoint]));
    const savedByInode = new Map([...saved.values()].map((checkpoint) => [`${checkpoint.identity.dev}:${checkpoint.identity.ino}`, checkpoint]));
    for (const found of await this.tree.discover()) {
      const tracked: TrackedFile = { file: found, path: found.path, offset: 0, size: found.size };
      const checkpoint = await this.matchingCheckpoint(found.path, saved, savedByInode);
      if (checkpoint) {
        tracked.identity = checkpoint.identity;
        tracked.offset = checkpoint.resumeOffset;
        tracked.committed = { offset: checkpoint.offset, resumeOffset: checkpoint.resumeOffset };
      }
      if (this.files.has(found.path)) continue; // already reported by the watcher
      this.files.set(found.path, tracked);
      this.dirty.add(found.path);
    }
    const idleEveryMs = Math.min(Math.max(this.options.idleMs / 4, 1_000), 60_000);
    this.idleTimer = setInterval(() => {
      this.idleDue = true;
      this.wake?.();
    }, idleEveryMs);
    this.idleTimer.unref();
    this.loop = this.run();
  }

  /** Stop following: finish the current read, deliver, commit. Open turns stay open (a restart re-reads them). */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.idleTimer);
    this.recheck.stop();
    clearTimeout(this.saveRetryTimer);
    this.wake?.();
    await this.watcher.stop();
    await this.loop;
  }

  /** Files followed, with what is committed for each. */
  checkpoints(): FileCheckpoint[] {
    const list: FileCheckpoint[] = [];
    for (const tracked of this.files.values()) {
      if (!isFollowed(tracked)) continue;
      list.push({
        path: tracked.path,
        identity: tracked.identity!,
        offset: tracked.committed!.offset,
        resumeOffset: tracked.committed!.resumeOffset,
        size: tracked.size,
        lastEventMs: this.options.pipeline.lastEventMs(tracked.file.path),
        unreadable: tracked.unreadable,
      });
    }
    return list;
  }

  /** How many files `checkpoints()` lists, without building the list (the status asks every few seconds). */
  get filesFollowed(): number {
    let count = 0;
    for (const tracked of this.files.values()) if (isFollowed(tracked)) count++;
    return count;
  }

  /** Whether every known change was read and committed (tests and benchmarks wait for this). */
  get settled(): boolean {
    return this.dirty.size === 0 && !this.unsaved && [...this.files.values()].every((tracked) => tracked.unreadable !== undefined || tracked.committed?.offset === tracked.offset);
  }

  private async matchingCheckpoint(path: string, byPath: Map<string, FileCheckpoint>, byInode: Map<string, FileCheckpoint>): Promise<FileCheckpoint | undefined> {
    let handle;
    try {
      handle = await openRegularFile(path);
    } catch {
      return undefined;
    }
    try {
      const info = await handle.stat();
      // The same path, or a file renamed while the sidecar was stopped.
      for (const candidate of [byPath.get(path), byInode.get(`${info.dev}:${info.ino}`)]) {
        if (candidate && candidate.offset <= info.size && (await isSameFile(candidate.identity, handle))) return candidate;
      }
      return undefined;
    } finally {
      await handle.close();
    }
  }

  private changed(path: string): void {
    this.dirty.add(path);
    this.recheck.changed(path);
    this.wake?.();
  }

  private removed(path: string): void {
    this.vanish(path);
    this.dirty.delete(path);
  }

  private vanish(path: string): void {
    const tracked = this.files.get(path);
    if (!tracked) return;
    this.files.delete(path);
    tracked.goneAtMs = Date.now();
    this.vanished.push(tracked);
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      if (this.dirty.size === 0 && !this.idleDue) {
        await new Promise<void>((resolveWake) => (this.wake = resolveWake));
        this.wake = undefined;
        continue;
      }
      for (const path of this.dirty) {
        if (this.stopping) break;
        this.dirty.delete(path);
        await this.readFile(path);
        if (this.readSinceCommit >= COMMIT_EVERY_BYTES) await this.commit();
      }
      if (this.idleDue && !this.stopping) {
        this.idleDue = false;
        await this.deliver(() => this.options.pipeline.closeIdle(Date.now() - this.options.idleMs));
      }
      await this.commit();
    }
    // Stopping: one last delivery; if the sink is down, the next start re-reads from the last commit.
    try {
      await this.options.pipeline.flush();
      this.saveCheckpoints();
    } catch (error) {
      this.options.log?.(`could not deliver on stop (${(error as Error).message}); the next start reads it again`);
    }
  }

  /** Deliver everything pending, then commit read positions. */
  private async commit(): Promise<void> {
    if (!(await this.deliver(() => this.options.pipeline.flush()))) return;
    this.saveCheckpoints();
  }

  private saveCheckpoints(): void {
    let changed = false;
    const now = Date.now();
    const kept = this.vanished.filter((tracked) => now - tracked.goneAtMs! <= GONE_KEEP_MS);
    changed ||= kept.length !== this.vanished.length;
    this.vanished = kept;
    const oldestOpen = this.options.pipeline.oldestOpenOffsets();
    for (const tracked of this.files.values()) {
      const open = oldestOpen.get(tracked.file.path);
      const resumeOffset = Math.min(open ?? tracked.offset, tracked.offset);
      if (tracked.committed?.offset !== tracked.offset || tracked.committed.resumeOffset !== resumeOffset) {
        tracked.committed = { offset: tracked.offset, resumeOffset };
        changed = true;
      }
    }
    this.readSinceCommit = 0;
    if (!changed && !this.unsaved) return;
    this.unsaved = !this.options.checkpoints.save(this.checkpoints(), now);
    if (this.unsaved && !this.saveRetryTimer) {
      // Reported by the checkpoint store; retried even if nothing else happens meanwhile.
      this.saveRetryTimer = setTimeout(() => {
        this.saveRetryTimer = undefined;
        this.idleDue = true;
        this.wake?.();
      }, SAVE_RETRY_MS);
      this.saveRetryTimer.unref();
    }
  }

  /** Run a delivery, retrying with backoff while the sink fails; false if stopped before it succeeded. */
  private async deliver(attempt: () => Promise<void>): Promise<boolean> {
    let delayMs = RETRY_FIRST_MS;
    for (;;) {
      try {
        await attempt();
        this.sink.state = 'ok';
        this.sink.lastOkMs = Date.now();
        return true;
      } catch (error) {
        this.sink.state = 'retrying';
        this.sink.lastError = (error as Error).message;
        this.sink.retries++;
        if (this.sink.retries === 1 || this.sink.retries % 10 === 0) this.options.log?.(`sink failed (${this.sink.lastError}); retrying, nothing is read meanwhile`);
        if (this.stopping) return false;
        await new Promise((resolveDelay) => setTimeout(resolveDelay, delayMs));
        delayMs = Math.min(delayMs * 2, RETRY_MAX_MS);
        attempt = () => this.options.pipeline.flush();
      }
    }
  }

  /** Read one file from its position to its current end. */
  private async readFile(path: string): Promise<void> {
    const tracked = await this.trackedFor(path);
    if (!tracked) return;
    this.options.beforeRead?.();
    let sinkError: Error | undefined;
    try {
      const result = await readLines(tracked.path, tracked.offset, async (lines) => {
        try {
          await this.options.pipeline.addLines(tracked.file, lines);
        } catch (error) {
          sinkError = error as Error;
          throw error;
        } finally {
          // The lines are in the pipeline either way (a failed flush keeps its batch).
          this.readSinceCommit += lines[lines.length - 1].end - tracked.offset;
          tracked.offset = lines[lines.length - 1].end;
        }
      });
      for (const start of result.tooLong) this.options.pipeline.skip(tracked.file.path, start, 'line_too_long', '');
      tracked.offset = result.offset;
      tracked.size = result.offset + result.pendingBytes;
      tracked.unreadable = undefined;
      if ((tracked.identity?.fingerprintBytes ?? 0) < tracked.size) await this.refreshIdentity(tracked);
    } catch (error) {
      if (sinkError) {
        // The sink, not the file, failed: wait for it, then read the rest of the file.
        this.dirty.add(path);
        await this.deliver(() => this.options.pipeline.flush());
        return;
      }
      this.unreadable(tracked, error as Error);
    }
  }

  /**
   * The tracked state for `path`, deciding what the file there is: the one we know (maybe truncated), a
   * known file renamed here, or a new file (created, or recreated after a delete).
   */
  private async trackedFor(path: string): Promise<TrackedFile | undefined> {
    let tracked = this.files.get(path);
    const file = tracked?.file ?? classifyTranscriptPath(this.tree.rootOf(path) ?? '', path);
    if (!file) return undefined;
    let handle;
    try {
      if ((await lstat(path)).isSymbolicLink()) {
        await this.tree.symlinkedTranscript(path); // reported once; followed under its own name if it is a transcript
        return undefined;
      }
      handle = await openRegularFile(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        this.removed(path);
        return undefined;
      }
      tracked ??= { file, path, offset: 0, size: 0 };
      this.files.set(path, tracked);
      this.unreadable(tracked, error as Error);
      return undefined;
    }
    try {
      const size = (await handle.stat()).size;
      if (tracked?.identity && (await isSameFile(tracked.identity, handle))) {
        if (size < tracked.offset) this.restart(tracked, 'truncated'); // cut below what was read
        return tracked;
      }
      // What was known at this path is elsewhere now, or gone; the file here may be a known one moved here.
      if (tracked?.identity) this.vanish(path);
      const renamed = tracked && !tracked.identity ? undefined : await this.findRenamed(path, handle);
      if (renamed) {
        // Its old path may hold a new file already (a rotation): that entry stays.
        if (this.files.get(renamed.path) === renamed) this.files.delete(renamed.path);
        this.vanished = this.vanished.filter((other) => other !== renamed);
        renamed.path = path;
        renamed.goneAtMs = undefined;
        this.files.set(path, renamed);
        return renamed;
      }
      // A path found at start-up keeps its entry (and checkpoint); anything else is a new file.
      const fresh: TrackedFile = tracked && !tracked.identity ? tracked : { file: { ...file, path }, path, offset: 0, size };
      fresh.identity = await identityOf(handle);
      this.files.set(path, fresh);
      return fresh;
    } finally {
      await handle.close();
    }
  }

  /** A known file with the same inode and start as the one open at `path`: it was moved here. */
  private async findRenamed(path: string, handle: FileHandle): Promise<TrackedFile | undefined> {
    const info = await handle.stat();
    for (const candidate of [...this.vanished, ...this.files.values()]) {
      const identity = candidate.identity;
      if (candidate.path === path || !identity || identity.ino !== info.ino || identity.dev !== info.dev) continue;
      if (await isSameFile(identity, handle)) return candidate;
    }
    return undefined;
  }

  private restart(tracked: TrackedFile, why: string): void {
    this.options.log?.(`${tracked.path} was ${why}; reading it from the start`);
    tracked.offset = 0;
    tracked.identity = undefined;
  }

  private async refreshIdentity(tracked: TrackedFile): Promise<void> {
    try {
      const handle = await openRegularFile(tracked.path);
      try {
        tracked.identity = await identityOf(handle);
      } finally {
        await handle.close();
      }
    } catch {
      // gone meanwhile: the next event says so
    }
  }

  private unreadable(tracked: TrackedFile, error: Error): void {
    if (tracked.unreadable !== error.message) this.options.log?.(`cannot read ${tracked.path}: ${error.message}`);
    tracked.unreadable = error.message;
    this.options.pipeline.reportUnreadable(tracked.path, error);
  }

}
