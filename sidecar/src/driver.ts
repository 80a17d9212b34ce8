// The pipeline driver of a following sidecar: it, not the sources, decides when what was emitted is delivered, as
// the Collector's batch processor does: at once when the batch is full, else once the oldest item waiting is older
// than the flush interval. A delivery that fails is retried with the one retry policy (retry.ts) while nothing more
// is delivered; a source that fills the batch meanwhile waits for it (the pipeline's backpressure), so memory stays
// bounded however long a sink is down. The same timer runs the periodic work of the pipeline (closing what waited
// too long, the status): the one tick loop of the sidecar, armed for whatever is due first (an idle sidecar wakes
// only for its periodic jobs). Sources only emit; the pipeline tells the driver when input came (`emitted`).
import { retrying, type BackoffPolicy } from './retry.js';

/** What the driver delivers: the pipeline. */
export interface DriverTarget {
  /** Items (and acks) waiting to be delivered. */
  pendingItems(): number;
  /** Deliver everything waiting; resolves once every sink accepted it. */
  flush(): Promise<void>;
}

export interface SinkState {
  state: 'starting' | 'ok' | 'retrying';
  lastError?: string;
  lastOkMs?: number;
  retries: number;
}

export interface DriverOptions {
  target: DriverTarget;
  /** Deliver at once when this many items wait. */
  maxItems: number;
  /** Deliver once the oldest item waiting is this old. */
  intervalMs: number;
  log?: (message: string) => void;
}

/** Short: a retry is one request, and the sink being back should not wait long to be noticed. */
const DELIVERY_RETRY: BackoffPolicy = { firstMs: 500, maxMs: 5_000 };

/** The longest the timer sleeps, whatever is due. */
const LOOK_AGAIN_MS = 1_000;

interface Periodic {
  everyMs: number;
  run: () => void;
  lastMs: number;
}

export class Driver {
  readonly sink: SinkState = { state: 'starting', retries: 0 };
  /** When the first item waiting was emitted (undefined: none since the last delivery). */
  private oldestMs?: number;
  private delivering?: Promise<void>;
  /** The one timer: armed for the next periodic job or the age of the oldest item, whichever comes first. */
  private timer?: NodeJS.Timeout;
  private running = false;
  private readonly periodic: Periodic[] = [];
  private readonly halt = new AbortController();

  constructor(private readonly options: DriverOptions) {}

  /** Run `job` at a tick every `everyMs` (the idle work, the status). */
  every(everyMs: number, job: () => void): void {
    this.periodic.push({ everyMs, run: job, lastMs: Date.now() });
  }

  start(): void {
    this.running = true;
    this.arm();
  }

  /** Stop ticking and retrying; then deliver once more what waits (a failure is logged: the next start reads it again). */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.halt.abort();
    await this.delivering;
    try {
      await this.options.target.flush();
    } catch (error) {
      this.options.log?.(`could not deliver on stop (${(error as Error).message}); the next start reads it again`);
    }
  }

  /**
   * A source emitted something after the last delivery: deliver at once when the batch is full, else once it is a
   * flush interval old. An idle sidecar is woken only by its periodic jobs.
   */
  emitted(nowMs = Date.now()): void {
    this.oldestMs ??= nowMs;
    if (this.options.target.pendingItems() >= this.options.maxItems) this.tick(nowMs);
    else this.arm();
  }

  /** One tick: the periodic jobs due, then a delivery if the batch is full or its oldest item is old enough. */
  private tick(nowMs = Date.now()): void {
    for (const job of this.periodic) {
      if (nowMs - job.lastMs < job.everyMs) continue;
      job.lastMs = nowMs;
      job.run();
    }
    if (!this.delivering) {
      const pending = this.options.target.pendingItems();
      if (pending === 0) this.oldestMs = undefined;
      else {
        this.oldestMs ??= nowMs; // emitted while the last delivery was in flight
        if (pending >= this.options.maxItems || nowMs - this.oldestMs >= this.options.intervalMs) void this.deliver();
      }
    }
    this.arm();
  }

  /** Set the timer for whatever is due first. */
  private arm(): void {
    if (!this.running) return;
    // At least once a second: what was emitted without the pipeline telling (a race with a delivery) is not left waiting.
    let dueMs = Math.min(Date.now() + LOOK_AGAIN_MS, ...this.periodic.map((job) => job.lastMs + job.everyMs));
    if (this.oldestMs !== undefined && !this.delivering) dueMs = Math.min(dueMs, this.oldestMs + this.options.intervalMs);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.tick(), Math.max(0, dueMs - Date.now()));
    this.timer.unref();
  }

  /**
   * Make room (a source filled the batch): wait for the delivery in flight, then start the next one. At most one
   * batch in flight and one filling; while the sink is down, the caller waits here.
   */
  async makeRoom(): Promise<void> {
    await this.delivering;
    void this.deliver();
  }

  /** Deliver what waits, retrying with backoff while the sink fails (until stopped); then look again. */
  private deliver(): Promise<void> {
    this.oldestMs = undefined;
    const run = retrying(() => this.options.target.flush(), { policy: DELIVERY_RETRY, signal: this.halt.signal, onFailure: (error) => this.failed(error) })
      .then(() => {
        this.sink.state = 'ok';
        this.sink.lastOkMs = Date.now();
      })
      .catch(() => undefined) // stopped while the sink was down: `stop` tries once more
      .finally(() => {
        if (this.delivering !== run) return;
        this.delivering = undefined;
        // What was emitted while it was in flight waits its own interval.
        if (this.running && this.options.target.pendingItems() > 0) this.emitted();
      });
    this.delivering = run;
    return run;
  }

  private failed(error: Error): void {
    this.sink.state = 'retrying';
    this.sink.lastError = error.message;
    this.sink.retries++;
    if (this.sink.retries === 1 || this.sink.retries % 10 === 0) this.options.log?.(`sink failed (${this.sink.lastError}); retrying, reading waits once a batch is full`);
  }
}
