// Run a source's tick soon after something changes in its directory (one fs.watch on the directory), and
// every `safetyPollMs` anyway: inotify can drop events, and the directory may not exist yet or be replaced
// (a missing or replaced directory is watched again on the next tick). Idle, it costs one tick per safety poll.
import { type FSWatcher, statSync, watch } from 'node:fs';

export interface DirectoryFollowerOptions {
  dir: string;
  tick: () => Promise<void>;
  safetyPollMs: number;
  /** Changes within this long after the first one are handled by one tick (a file written in several pieces). */
  debounceMs?: number;
}

const DEFAULT_DEBOUNCE_MS = 20;

export class DirectoryFollower {
  private watcher?: FSWatcher;
  private watchedIno?: number;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  /** Wakes the loop out of its wait (a change, the safety poll, or stop). */
  private wake?: () => void;
  /** A change came while a tick ran: tick again at once. */
  private changed = false;
  private stopping = false;

  constructor(private readonly options: DirectoryFollowerOptions) {}

  start(): void {
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.watcher?.close();
    this.wake?.();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      this.changed = false;
      this.ensureWatched();
      await this.options.tick();
      if (this.stopping || this.changed) continue;
      await new Promise<void>((resolveWait) => {
        this.wake = resolveWait;
        this.timer = setTimeout(resolveWait, this.options.safetyPollMs);
      });
      clearTimeout(this.timer);
      this.wake = undefined;
    }
  }

  private onChange(): void {
    this.changed = true;
    const wake = this.wake;
    if (!wake) return; // a tick is running: the loop sees `changed`
    this.wake = undefined;
    clearTimeout(this.timer);
    this.timer = setTimeout(wake, this.options.debounceMs ?? DEFAULT_DEBOUNCE_MS);
  }

  /** Watch the directory if it exists and is not watched yet (or was replaced since). */
  private ensureWatched(): void {
    let ino: number | undefined;
    try {
      ino = statSync(this.options.dir).ino;
    } catch {
      ino = undefined;
    }
    if (this.watcher && ino === this.watchedIno) return;
    this.watcher?.close();
    this.watcher = undefined;
    if (ino === undefined) return;
    try {
      const watcher = watch(this.options.dir, { persistent: false }, () => this.onChange());
      watcher.on('error', () => {
        watcher.close();
        if (this.watcher === watcher) this.watcher = undefined;
      });
      this.watcher = watcher;
      this.watchedIno = ino;
    } catch {
      // gone meanwhile, or out of inotify watches: the safety poll still reads it
    }
  }
}
