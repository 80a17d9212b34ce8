// Run a source's tick as soon as something changes in its directory (one fs.watch on the directory instead of
// a poll), and every `safetyPollMs` anyway: inotify drops events when its queue overflows, and the tick also
// gives up on what waited too long. A directory that does not exist yet is waited for by watching its nearest
// existing ancestor (for the one name that leads to it); one deleted, or deleted and created again, is watched
// anew. Which directory is watched is known by inode and birth time: a freed inode number is reused at once.
// When nothing can be watched (out of inotify watches) it ticks every `pollMs`, as a plain poll would.
import { type BigIntStats, type FSWatcher, statSync, watch } from 'node:fs';
import { basename, dirname, relative, sep } from 'node:path';
import { inodeIdentity } from './inode-identity.js';
import { OUT_OF_DESCRIPTORS_RETRY_MS } from './out-of-descriptors.js';

export interface DirectoryFollowerOptions {
  dir: string;
  /** True: it could not finish (no descriptor left) and is run again in a second, changes or not. */
  tick: () => Promise<boolean | void>;
  /** Tick this often while watching (the directory, or the ancestor it will appear in); default 5 s. */
  safetyPollMs?: number;
  /** Tick this often while no watch could be added. */
  pollMs: number;
  /** Changes within this long after the first one are handled by one tick (a file written in several pieces). */
  debounceMs?: number;
  log?: (message: string) => void;
}

/** What is watched: the directory itself, or its nearest existing ancestor while it is missing. */
interface Watched {
  path: string;
  identity: string;
  watcher: FSWatcher;
}

const DEFAULT_DEBOUNCE_MS = 20;
const DEFAULT_SAFETY_POLL_MS = 5_000;

export class DirectoryFollower {
  private watched?: Watched;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  /** Wakes the loop out of its wait (a change, the poll, or stop). */
  private wake?: () => void;
  /** A change came while a tick ran: tick again at once. */
  private changed = false;
  private stopping = false;
  private watchFailureLogged = false;

  constructor(private readonly options: DirectoryFollowerOptions) {}

  start(): void {
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.watched?.watcher.close();
    this.watched = undefined;
    this.wake?.();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      this.changed = false;
      this.ensureWatched(); // before the tick: whatever appears after the tick's listing is reported
      const retry = await this.options.tick();
      if (this.stopping || this.changed) continue;
      const waitMs = this.watched ? (this.options.safetyPollMs ?? DEFAULT_SAFETY_POLL_MS) : this.options.pollMs;
      await new Promise<void>((resolveWait) => {
        this.wake = resolveWait;
        this.timer = setTimeout(resolveWait, retry === true ? Math.min(waitMs, OUT_OF_DESCRIPTORS_RETRY_MS) : waitMs);
      });
      clearTimeout(this.timer);
      this.wake = undefined;
    }
  }

  private onChange(): void {
    this.changed = true;
    const wake = this.wake;
    if (!wake) return; // a tick is running (it sees `changed`), or one is due within the debounce
    this.wake = undefined;
    clearTimeout(this.timer);
    this.timer = setTimeout(wake, this.options.debounceMs ?? DEFAULT_DEBOUNCE_MS);
  }

  /** Watch the directory, or while it is missing its nearest existing ancestor, unless that one is watched already. */
  private ensureWatched(): void {
    const target = nearestDirectory(this.options.dir);
    if (this.watched && this.watched.path === target?.path && this.watched.identity === target.identity) return;
    this.watched?.watcher.close();
    this.watched = undefined;
    if (!target) return;
    // Waiting in an ancestor: only the next step towards the directory, or the ancestor itself going, matter
    // (the state directory also holds files written every few seconds).
    const relevant = target.path === this.options.dir ? undefined : new Set([relative(target.path, this.options.dir).split(sep)[0], basename(target.path)]);
    try {
      const watcher = watch(target.path, { persistent: false }, (_event, name) => {
        if (!relevant || name === null || relevant.has(name.toString())) this.onChange();
      });
      watcher.on('error', () => {
        watcher.close();
        if (this.watched?.watcher === watcher) this.watched = undefined;
        this.onChange();
      });
      this.watched = { path: target.path, identity: target.identity, watcher };
      this.watchFailureLogged = false;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || this.watchFailureLogged) return; // gone meanwhile: the next tick looks again
      this.watchFailureLogged = true;
      this.options.log?.(`cannot watch ${target.path} (${(error as Error).message}); reading ${this.options.dir} every ${this.options.pollMs} ms instead`);
    }
  }
}

/** The directory, or its nearest ancestor that exists, with its identity (inode and birth time). */
function nearestDirectory(dir: string): { path: string; identity: string } | undefined {
  for (let path = dir; ; path = dirname(path)) {
    const info = statOrUndefined(path);
    if (info?.isDirectory()) return { path, identity: inodeIdentity(info) };
    if (dirname(path) === path) return undefined;
  }
}

function statOrUndefined(path: string): BigIntStats | undefined {
  try {
    return statSync(path, { bigint: true });
  } catch {
    return undefined; // missing, or not reachable (a file where a directory should be, no permission)
  }
}
