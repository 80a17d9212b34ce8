// How the transcript tailer waits out a sink that is down: the failed delivery is retried with backoff (nothing
// more is read meanwhile, so memory stays bounded), and the state shows in `ccotel status`.

export interface SinkState {
  state: 'starting' | 'ok' | 'retrying';
  lastError?: string;
  lastOkMs?: number;
  retries: number;
}

const RETRY_FIRST_MS = 500;
/** Short: a retry is one request, and the store being back should not wait long to be noticed. */
const RETRY_MAX_MS = 5_000;

export interface DeliveryRetryOptions {
  /** What a retry runs (the pipeline's flush: the failed batch is kept for it). */
  retry: () => Promise<void>;
  /** Stop retrying (the source is stopping; the next start re-reads from the last commit). */
  stopping: () => boolean;
  log?: (message: string) => void;
}

export class DeliveryRetry {
  readonly sink: SinkState = { state: 'starting', retries: 0 };

  constructor(private readonly options: DeliveryRetryOptions) {}

  /** Run a delivery, retrying with backoff while the sink fails; false if stopped before it succeeded. */
  async deliver(attempt: () => Promise<void>): Promise<boolean> {
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
        if (this.options.stopping()) return false;
        await new Promise((resolveDelay) => setTimeout(resolveDelay, delayMs));
        delayMs = Math.min(delayMs * 2, RETRY_MAX_MS);
        attempt = this.options.retry;
      }
    }
  }
}
