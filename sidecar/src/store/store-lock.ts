// Who holds an embedded store: the lock file its owner writes (open-store.ts), and whether a target is a server's URL.
// Apart from open-store.ts so that a reader answered without the engine (open-for-answers.ts) loads none of it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from '../process-alive.js';

export interface StoreLock {
  pid: number;
  command: string;
  /** Set while the owner serves queries (ccotel run). */
  endpoint?: { url: string; token: string };
}

export function isServerUrl(target: string): boolean {
  return /^https?:\/\//i.test(target);
}

export const LOCK_FILE = 'ccotel.lock';

/** The lock of `dir` while its holder lives. */
export function readLock(dir: string): StoreLock | undefined {
  try {
    const lock = JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as StoreLock;
    return isAlive(lock.pid) ? lock : undefined;
  } catch {
    return undefined;
  }
}
