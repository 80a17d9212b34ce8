// A file that changed has its size checked again every RECHECK_EVERY_MS until RECHECK_FOR_MS after its last
// change event, so a write whose event a watcher dropped (chokidar's throttle did; an inotify queue overflow
// can) is still read to the end. One timer for all such files, armed only while there are some: nothing
// runs while everything is idle.
import { stat } from 'node:fs/promises';

const RECHECK_EVERY_MS = 250;
const RECHECK_FOR_MS = 2_000;

export interface TailRecheckOptions {
  /** The size the file had when it was last read to its end, or undefined when it is not followed. */
  sizeRead: (path: string) => number | undefined;
  /** The file's size differs from what was read: read it again. */
  onBehind: (path: string) => void;
}

export class TailRecheck {
  /** Paths changed lately, with the time of their last change event. */
  private readonly recent = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly options: TailRecheckOptions) {}

  changed(path: string): void {
    this.recent.set(path, Date.now());
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private arm(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => void this.recheck(), RECHECK_EVERY_MS);
    this.timer.unref();
  }

  private async recheck(): Promise<void> {
    const now = Date.now();
    for (const [path, lastEventMs] of this.recent) {
      const sizeRead = this.options.sizeRead(path);
      if (sizeRead === undefined || now - lastEventMs > RECHECK_FOR_MS) {
        this.recent.delete(path);
        continue;
      }
      const size = await stat(path).then((info) => info.size, () => undefined);
      if (size !== undefined && size !== sizeRead) this.options.onBehind(path);
    }
    this.timer = undefined;
    if (this.recent.size > 0) this.arm();
  }
}
