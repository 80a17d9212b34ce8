// The transcript files the tailer knows, and what the file at a path is: the one known there (maybe truncated),
// a known file renamed there (same inode and start), or a new one (created, or recreated after a delete).
import { lstat, type FileHandle } from 'node:fs/promises';
import type { TranscriptFile } from '../records/transcript.js';
import { identityOf, isSameFile, type FileIdentity, type SavedCheckpoint } from './checkpoints.js';
import { isOutOfDescriptors } from './out-of-descriptors.js';
import { openRegularFile, openRegularFileSized, type SizedFile } from './regular-file.js';
import { classifyTranscriptPath, type TranscriptTree } from './transcript-tree.js';

export interface TrackedFile {
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
  /** Found at start with a checkpoint that may be its own: matched when it is first read. */
  checkpointDue?: boolean;
  /** Found empty at start, without a checkpoint, and not read since. */
  empty?: boolean;
}

/** A file is followed (and checkpointed) once it was identified and something was committed for it. */
export function isFollowed(tracked: TrackedFile): boolean {
  return tracked.identity !== undefined && tracked.committed !== undefined;
}

/** A gone file is remembered this long, to be recognised if it reappears under another name. */
const GONE_KEEP_MS = 60_000;

/**
 * The checkpoint of the file at `path`: `atPath` (saved under its path), or one under its inode (renamed while the sidecar was
 * stopped). Throws when no descriptor is left.
 */
export async function matchingCheckpoint(path: string, atPath: SavedCheckpoint | undefined, byInode: Map<string, SavedCheckpoint>): Promise<SavedCheckpoint | undefined> {
  let handle;
  try {
    handle = await openRegularFile(path);
  } catch (error) {
    if (isOutOfDescriptors(error)) throw error; // says nothing about the file: asked again
    return undefined;
  }
  try {
    const info = await handle.stat();
    // The same path, or a file renamed while the sidecar was stopped.
    for (const candidate of [atPath, byInode.get(`${info.dev}:${info.ino}`)]) {
      if (candidate && candidate.offset <= info.size && (await isSameFile(candidate.identity, handle))) return candidate;
    }
    return undefined;
  } finally {
    await handle.close();
  }
}

export interface TrackedFilesOptions {
  tree: TranscriptTree;
  /** The file at `path` is gone: nothing there to read any more. */
  onGone: (path: string) => void;
  onUnreadable: (tracked: TrackedFile, error: Error) => void;
  log?: (message: string) => void;
}

export class TrackedFiles {
  readonly files = new Map<string, TrackedFile>();
  /** Files no longer at their path, kept a while so a rename can be recognised when the new name shows up. */
  private vanished: TrackedFile[] = [];

  constructor(private readonly options: TrackedFilesOptions) {}

  /** Forget the files gone for longer than GONE_KEEP_MS; whether any was. */
  forgetGone(nowMs: number): boolean {
    const kept = this.vanished.filter((tracked) => nowMs - tracked.goneAtMs! <= GONE_KEEP_MS);
    const forgot = kept.length !== this.vanished.length;
    this.vanished = kept;
    return forgot;
  }

  private removed(path: string): void {
    this.vanish(path);
    this.options.onGone(path);
  }

  private vanish(path: string): void {
    const tracked = this.files.get(path);
    if (!tracked) return;
    this.files.delete(path);
    tracked.goneAtMs = Date.now();
    this.vanished.push(tracked);
  }

  /**
   * The tracked state for `path`, deciding what the file there is: the one we know (maybe truncated), a
   * known file renamed here, or a new file (created, or recreated after a delete). The file is left open for the read
   * that follows (`readLines` closes it), with the size it had: a catch-up of thousands of files opens each once.
   */
  async resolve(path: string): Promise<{ tracked: TrackedFile; opened: SizedFile } | undefined> {
    let tracked = this.files.get(path);
    const file = tracked?.file ?? classifyTranscriptPath(this.options.tree.rootOf(path) ?? '', path);
    if (!file) return undefined;
    let opened: SizedFile;
    try {
      if ((await lstat(path)).isSymbolicLink()) {
        await this.options.tree.symlinkedTranscript(path); // reported once; followed under its own name if it is a transcript
        return undefined;
      }
      opened = await openRegularFileSized(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        this.removed(path);
        return undefined;
      }
      tracked ??= { file, path, offset: 0, size: 0 };
      this.files.set(path, tracked);
      this.options.onUnreadable(tracked, error as Error);
      return undefined;
    }
    try {
      const { handle, size } = opened;
      if (tracked?.identity && (await isSameFile(tracked.identity, handle))) {
        if (size < tracked.offset) this.restart(tracked, 'truncated'); // cut below what was read
        return { tracked, opened };
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
        return { tracked: renamed, opened };
      }
      // A path found at start-up keeps its entry (and checkpoint); anything else is a new file.
      const fresh: TrackedFile = tracked && !tracked.identity ? tracked : { file: { ...file, path }, path, offset: 0, size };
      fresh.identity = await identityOf(handle);
      this.files.set(path, fresh);
      return { tracked: fresh, opened };
    } catch (error) {
      // Every other way out hands the open file over to the read.
      await opened.handle.close();
      throw error;
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

  async refreshIdentity(tracked: TrackedFile): Promise<void> {
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
}
