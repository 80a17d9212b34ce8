// The sidecar's own state files (checkpoints, status): written atomically, and a failed write (disk
// full, read-only filesystem, no file descriptor left) is reported and retried by the next write instead
// of taking the process down. Until it succeeds the previous version stays in place, so at worst a
// restart reads again what the store already holds (its ids drop the repeats).
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ensurePrivateDir } from '../secure-dir.js';

/**
 * Replace `path` by `text` (0600, in a private dir: see secure-dir.ts): write a temporary file, rename it over. With `durable`,
 * the file and the directory are synced so the new version survives a power loss.
 */
export function writeFileAtomic(path: string, text: string, durable: boolean): void {
  const dir = ensurePrivateDir(dirname(path));
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    const fd = openSync(temporary, 'w', 0o600);
    try {
      writeFileSync(fd, text); // unlike one writeSync, goes on after a short write (and throws ENOSPC then)
      if (durable) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    try {
      rmSync(temporary, { force: true }); // a partial file would hold the space a retry needs
    } catch {
      // the filesystem refuses even that (read-only): the next attempt overwrites it
    }
    throw error;
  }
  if (!durable) return;
  const dirFd = openSync(dir, 'r');
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}

/** State writes that failed and have not succeeded since, by file: what `ccotel status` shows. */
export class StateWrites {
  private readonly failing = new Map<string, string>();

  constructor(private readonly log?: (message: string) => void) {}

  /** Run one write; a failure is logged (once per new error) and kept, not thrown. True when it was written. */
  attempt(path: string, write: () => void): boolean {
    try {
      write();
    } catch (error) {
      const message = (error as Error).message;
      if (this.failing.get(path) !== message) this.log?.(`cannot write ${path} (${message}); kept the previous version, retrying`);
      this.failing.set(path, message);
      return false;
    }
    if (this.failing.delete(path)) this.log?.(`${path} written again`);
    return true;
  }

  get errors(): Record<string, string> {
    return Object.fromEntries(this.failing);
  }
}
