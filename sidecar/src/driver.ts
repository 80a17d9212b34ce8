// The pipeline driver of a following sidecar: it, not the sources, decides when what was emitted is delivered, as
// the Collector's batch processor does: at once when the batch is full, else once the oldest item waiting is older
// than the flush interval. A delivery that fails is retried with the one retry policy (retry.ts) while nothing more
// is delivered; a source that fills the batch meanwhile waits for it (the pipeline's backpressure), so memory stays
// bounded however long a sink is down. The same tick runs the periodic work of the pipeline (closing what waited
// too long, the status): the one tick loop of the sidecar. Sources only emit.
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

interface Periodic {
  everyMs: number;
  run: () => void;
  lastMs: number;
}

export class Driver {
  readonly sink: SinkState = { state: 'starting', retries: 0 };
  /** When the driver first saw items waiting (undefined: none since the last delivery). */
  private oldestMs?: number;
  private delivering?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private readonly periodic: Periodic[] = [];
  private readonly halt = new AbortController();

  constructor(private readonly options: DriverOptions) {}

  /** Run `job` at a tick every `everyMs` (the idle work, the status). */
  every(everyMs: number, job: () => void): void {
    this.periodic.push({ everyMs, run: job, lastMs: Date.now() });
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), Math.max(1, this.options.intervalMs / 2));
    this.timer.unref();
  }

  /** Stop ticking and retrying; then deliver once more what waits (a failure is logged: the next start reads it again). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.halt.abort();
    await this.delivering;
    try {
      await this.options.target.flush();
    } catch (error) {
      this.options.log?.(`could not deliver on stop (${(error as Error).message}); the next start reads it again`);
    }
  }

  /** One tick: the periodic jobs due, then a delivery if the batch is full or its oldest item is old enough. */
  tick(nowMs = Date.now()): void {
    for (const job of this.periodic) {
      if (nowMs - job.lastMs < job.everyMs) continue;
      job.lastMs = nowMs;
      job.run();
    }
    if (this.delivering) return;
    const pending = this.options.target.pendingItems();
    if (pending === 0) return;
    this.oldestMs ??= nowMs;
    if (pending >= this.options.maxItems || nowMs - this.oldestMs >= this.options.intervalMs) void this.deliver();
  }

  /**
   * Make room (a source filled the batch): wait for the delivery in flight, then start the next one. At most one
   * batch in flight and one filling; while the sink is down, the caller waits here.
   */
  async makeRoom(): Promise<void> {
    await this.delivering;
    void this.deliver();
  }

  /** Deliver what waits, retrying with backoff while the sink fails (until stopped). */
  private deliver(): Promise<void> {
    this.oldestMs = undefined;
    const run = retrying(() => this.options.target.flush(), { policy: DELIVERY_RETRY, signal: this.halt.signal, onFailure: (error) => this.failed(error) })
      .then(() => {
        this.sink.state = 'ok';
        this.sink.lastOkMs = Date.now();
      })
      .catch(() => undefined) // stopped while the sink was down: `stop` tries once more
      .finally(() => {
        if (this.delivering === run) this.delivering = undefined;
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
