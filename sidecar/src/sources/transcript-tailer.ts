// Follow transcript files: catch up on every file from its checkpoint, then read whatever is appended.
// A change event only marks a file dirty; one loop reads dirty files one at a time from their read
// position to the end (so reads of a file are serialized and events coalesce), handing the lines over with an
// ack; the driver (driver.ts) delivers them, and the acks tell which positions to commit. While the sink is down
// the pipeline holds reading back once its batch is full, so memory stays bounded however long it is down. A file
// that changed has its size checked again a few times after its last event (TailRecheck), so a write any watcher
// missed is still read to the end.
import type { ResumeAck } from '../model.js';
import type { TranscriptFile } from '../records/transcript.js';
import { FINGERPRINT_BYTES, type CheckpointStore, type FileCheckpoint, type SavedCheckpoint } from './checkpoints.js';
import { readLines, type Line } from './line-reader.js';
import { DescriptorRetry, isOutOfDescriptors, OUT_OF_DESCRIPTORS_RETRY_MS } from './out-of-descriptors.js';
import { TailRecheck } from './tail-recheck.js';
import { isFollowed, matchingCheckpoint, TrackedFiles, type TrackedFile } from './tracked-files.js';
import { TranscriptTree } from './transcript-tree.js';
import { TranscriptWatcher } from './transcript-watcher.js';

/** Where the tailer hands what it read (the pipeline): lines with the ack that tells what to commit, and what it could not use. */
export interface TranscriptLineConsumer {
  addLines(file: TranscriptFile, lines: Line[], ack: ResumeAck): Promise<void>;
  /** `file` was read up to `end` with no line handed over past the last (lines too long, or none yet). */
  readThrough(file: TranscriptFile, end: number, ack: ResumeAck): void;
  skip(path: string, offset: number, reason: 'line_too_long', text: string): void;
  reportUnreadable(path: string, error: Error): void;
  /** Time (from the records) of the last record read from `path`, kept in its checkpoint. */
  lastEventMs(path: string): number | undefined;
}

export interface TailerOptions {
  /** The projects dirs to follow; those that do not exist yet are followed once they appear. */
  roots: string[];
  consumer: TranscriptLineConsumer;
  checkpoints: CheckpointStore;
  /** Run in the read loop after each `tick()` (the driver's idle work), between two files. */
  onTick?: () => void;
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

/** During catch-up, commit after this many bytes so a crash does not start the catch-up over. */
const COMMIT_EVERY_BYTES = 32 << 20;
/**
 * The catch-up is read in slices this long (the periodic work runs between two). What changes meanwhile waits for
 * its end, read in the catch-up's order: the correlator needs a session's history before the files that copy it
 * (a resume or a fork written during the start). Read first, such copies made an in-process crash loop lose or
 * misplace turns in 98 of 200 loops, against 9 in this order. An empty file found at start is not in the
 * catch-up, so a new session among 100 000 of them is still read at once.
 */
const CATCH_UP_SLICE_MS = 100;
/** While catching up, positions are written at most this often (each write lists every file). */
const CATCH_UP_COMMIT_MS = 1_000;
/** A checkpoint that could not be written (disk full, read-only) is tried again this often. */
const SAVE_RETRY_MS = 5_000;

export class TranscriptTailer {
  private readonly known: TrackedFiles;
  private readonly files: Map<string, TrackedFile>;
  /** Paths with unread changes, in the order they changed: read before the catch-up. */
  private readonly dirty = new Set<string>();
  /** Paths found at start and not read since, oldest first. */
  private readonly catchUp = new Set<string>();
  /** The checkpoint read at start, by path id and by inode, until the catch-up is done. */
  private saved?: { byPathId: Map<string, SavedCheckpoint>; byInode: Map<string, SavedCheckpoint> };
  private lastSaveAttemptMs = 0;
  /** When acks last moved a position, and when positions were last written (the status tells both). */
  private committedMs?: number;
  private savedMs?: number;
  /** Files whose read found no descriptor left: read again on a timer, not at their next change. */
  private readonly retryPaths = new Set<string>();
  private retryTimer?: NodeJS.Timeout;
  private readonly descriptors: DescriptorRetry;
  /** A file is being read (taken out of `dirty`). */
  private reading = false;
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
  private tickDue = false;
  private readSinceCommit = 0;
  /** An ack changed a committed position since the last save. */
  private acknowledged = false;

  constructor(private readonly options: TailerOptions) {
    this.descriptors = new DescriptorRetry('transcripts', options.log);
    this.tree = new TranscriptTree(options.roots, options.log);
    this.known = new TrackedFiles({
      tree: this.tree,
      onGone: (path) => {
        this.dirty.delete(path);
        this.catchUp.delete(path);
      },
      onUnreadable: (tracked, error) => this.unreadable(tracked, error),
      log: options.log,
    });
    this.files = this.known.files;
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

  /** While reads find no descriptor left: since when (for the status). */
  get retrying(): string | undefined {
    return this.descriptors.state;
  }

  /** When positions last moved in memory and when they were last written: they differ while writes fail. */
  get commits(): { committedMs?: number; savedMs?: number } {
    return { committedMs: this.committedMs, savedMs: this.savedMs };
  }

  /**
   * Catch up on every discovered file (from its checkpoint), then follow changes. Only the listing happens here: a
   * file's checkpoint is matched when it is read, and an empty file without one waits for its first write.
   */
  async start(): Promise<void> {
    // Watch first: a file created between the scan below and the watcher being ready would be missed.
    await this.watcher.start();
    const { checkpoints } = this.options;
    const byPathId = new Map((checkpoints.load()?.files ?? []).map((checkpoint) => [checkpoint.pathId, checkpoint]));
    const byInode = new Map([...byPathId.values()].map((checkpoint) => [`${checkpoint.identity.dev}:${checkpoint.identity.ino}`, checkpoint]));
    this.saved = { byPathId, byInode };
    for (const found of await this.tree.discover()) {
      if (this.files.has(found.path)) continue;
      const hasCheckpoint = byPathId.size > 0 && (byPathId.has(checkpoints.pathId(found.path)) || byInode.has(`${found.dev}:${found.ino}`));
      this.files.set(found.path, { file: found, path: found.path, offset: 0, size: found.size, checkpointDue: hasCheckpoint, empty: found.size === 0 && !hasCheckpoint });
      // Nothing to read in an empty file: the watcher reports its first write (it was watched before the listing).
      if (found.size > 0 || hasCheckpoint) this.catchUp.add(found.path);
    }
    this.loop = this.run();
  }

  /**
   * Stop following: finish the current read and commit what was acknowledged. What it handed over is delivered by
   * the driver's stop, then `commit()`. Open turns stay open (a restart re-reads them).
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.recheck.stop();
    clearTimeout(this.saveRetryTimer);
    clearTimeout(this.retryTimer);
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
        lastEventMs: this.options.consumer.lastEventMs(tracked.file.path),
      });
    }
    return list;
  }

  /** Files `checkpoints()` lists, and the empty ones waiting for their first write (the status asks every few seconds). */
  get filesFollowed(): number {
    let count = 0;
    for (const tracked of this.files.values()) if (isFollowed(tracked) || tracked.empty) count++;
    return count;
  }

  /**
   * Files with changes not read yet, and their bytes past the read position (the catch-up left). A half-written last
   * line that waits for its newline is not behind once its file was read.
   */
  get behind(): { files: number; bytes: number } {
    const left = new Set([...this.dirty, ...this.catchUp, ...this.retryPaths]);
    let bytes = 0;
    for (const path of left) {
      const tracked = this.files.get(path);
      if (tracked) bytes += Math.max(0, tracked.size - tracked.offset);
    }
    return { files: left.size + (this.reading ? 1 : 0), bytes };
  }

  /** Whether every known change was read and committed (tests and benchmarks wait for this). */
  get settled(): boolean {
    return (
      this.dirty.size === 0 &&
      this.catchUp.size === 0 &&
      !this.unsaved &&
      [...this.files.values()].every((tracked) => tracked.unreadable !== undefined || (tracked.committed?.offset ?? 0) === tracked.offset)
    );
  }

  /** Have the loop run `onTick` and commit, between two reads (at once when it is waiting). */
  tick(): void {
    this.tickDue = true;
    this.wake?.();
  }

  private changed(path: string): void {
    this.dirty.add(path);
    this.recheck.changed(path);
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      if (this.dirty.size === 0 && this.catchUp.size === 0 && !this.tickDue && !this.acknowledged) {
        await new Promise<void>((resolveWake) => (this.wake = resolveWake));
        this.wake = undefined;
        continue;
      }
      if (this.catchUp.size > 0) await this.readQueue(this.catchUp, Date.now() + CATCH_UP_SLICE_MS);
      else await this.readQueue(this.dirty, Number.POSITIVE_INFINITY);
      if (this.retryPaths.size === 0) this.descriptors.recovered();
      // Kept while a file found at start may still need it.
      if (this.catchUp.size === 0 && this.dirty.size === 0 && this.retryPaths.size === 0) this.saved = undefined;
      if (this.tickDue && !this.stopping) {
        this.tickDue = false;
        this.options.onTick?.();
      }
      if (this.catchUp.size === 0 || Date.now() - this.lastSaveAttemptMs >= CATCH_UP_COMMIT_MS) this.commit();
    }
    this.commit();
  }

  /** Read the files of `queue` in order, until it is empty or `untilMs`. */
  private async readQueue(queue: Set<string>, untilMs: number): Promise<void> {
    for (const path of queue) {
      if (this.stopping || Date.now() >= untilMs) return;
      queue.delete(path);
      this.reading = true;
      await this.readFile(path);
      this.reading = false;
      if (this.readSinceCommit >= COMMIT_EVERY_BYTES) this.commit();
    }
  }

  /** Write the positions the acks told (also once the driver's last delivery is done, after `stop`). */
  commit(): void {
    let changed = this.acknowledged;
    this.acknowledged = false;
    const now = Date.now();
    changed ||= this.known.forgetGone(now);
    this.readSinceCommit = 0;
    if (!changed && !this.unsaved) return;
    this.lastSaveAttemptMs = now;
    if (changed) this.committedMs = now;
    this.unsaved = !this.options.checkpoints.save(this.checkpoints(), now);
    if (!this.unsaved) this.savedMs = now;
    if (this.unsaved && !this.saveRetryTimer) {
      // Reported by the checkpoint store; retried even if nothing else happens meanwhile.
      this.saveRetryTimer = setTimeout(() => {
        this.saveRetryTimer = undefined;
        this.tick();
      }, SAVE_RETRY_MS);
      this.saveRetryTimer.unref();
    }
  }

  /** Read one file from its position to its current end. */
  private async readFile(path: string): Promise<void> {
    const found = this.files.get(path);
    if (found?.checkpointDue && !(await this.resumeFromCheckpoint(found))) return;
    this.options.beforeRead?.();
    const resolved = await this.known.resolve(path);
    if (!resolved) return;
    const { tracked, opened } = resolved;
    tracked.empty = undefined;
    let handedThrough = tracked.offset;
    try {
      // Read to the size it had when resolved: what is written after that is a change the watcher reports.
      const result = await readLines(Promise.resolve(opened), tracked.offset, async (lines) => {
        handedThrough = lines[lines.length - 1].end;
        this.readSinceCommit += handedThrough - tracked.offset;
        tracked.offset = handedThrough;
        await this.options.consumer.addLines(tracked.file, lines, this.ackOf(tracked, handedThrough));
      });
      for (const start of result.tooLong) this.options.consumer.skip(tracked.file.path, start, 'line_too_long', '');
      // Past the last line handed over (lines too long), or a first read with no line yet: acknowledged all the same.
      if (result.offset !== handedThrough || !tracked.committed) this.options.consumer.readThrough(tracked.file, result.offset, this.ackOf(tracked, result.offset));
      tracked.offset = result.offset;
      tracked.size = result.offset + result.pendingBytes;
      tracked.unreadable = undefined;
      // A file identified while shorter than the fingerprint is identified again by more of its start, once; a longer
      // one's fingerprint is whole (re-reading it after every read of a growing transcript cost an open each time).
      if ((tracked.identity?.fingerprintBytes ?? 0) < Math.min(FINGERPRINT_BYTES, tracked.size)) await this.known.refreshIdentity(tracked);
    } catch (error) {
      this.unreadable(tracked, error as Error);
    }
  }

  /** Nothing wrong with the file: read it again soon, whether or not it changes meanwhile. */
  private retryLater(path: string, error: NodeJS.ErrnoException): void {
    this.descriptors.failed(error);
    this.retryPaths.add(path);
    this.retryTimer ??= setTimeout(() => {
      this.retryTimer = undefined;
      for (const retried of this.retryPaths) this.dirty.add(retried);
      this.retryPaths.clear();
      this.wake?.();
    }, OUT_OF_DESCRIPTORS_RETRY_MS).unref();
  }

  /**
   * A file found at start: read from its checkpoint when the file there is still the one it describes. False when
   * that could not be told yet (no descriptor left): retried.
   */
  private async resumeFromCheckpoint(tracked: TrackedFile): Promise<boolean> {
    let checkpoint;
    try {
      checkpoint = this.saved && (await matchingCheckpoint(tracked.path, this.saved.byPathId.get(this.options.checkpoints.pathId(tracked.path)), this.saved.byInode));
    } catch (error) {
      this.unreadable(tracked, error as Error);
      return false;
    }
    tracked.checkpointDue = false;
    if (checkpoint) {
      tracked.identity = checkpoint.identity;
      tracked.offset = checkpoint.resumeOffset;
      tracked.committed = { offset: checkpoint.offset, resumeOffset: checkpoint.resumeOffset };
    }
    return true;
  }

  /** What the pipeline tells once what was read of `tracked` up to `end` is safe: the position to commit. */
  private ackOf(tracked: TrackedFile, end: number): ResumeAck {
    return (resumeOffset) => {
      if (tracked.committed?.offset === end && tracked.committed.resumeOffset === resumeOffset) return;
      tracked.committed = { offset: end, resumeOffset };
      this.acknowledged = true;
      this.wake?.();
    };
  }

  private unreadable(tracked: TrackedFile, error: Error): void {
    if (isOutOfDescriptors(error)) return this.retryLater(tracked.path, error);
    if (tracked.unreadable !== error.message) this.options.log?.(`cannot read ${tracked.path}: ${error.message}`);
    tracked.unreadable = error.message;
    this.options.consumer.reportUnreadable(tracked.path, error);
  }
}
