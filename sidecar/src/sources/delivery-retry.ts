// How the transcript tailer waits out a sink that is down: the failed delivery is retried with backoff (nothing
// more is read meanwhile, so memory stays bounded), and the state shows in `ccotel status`.
import { retrying, type BackoffPolicy } from '../retry.js';

export interface SinkState {
  state: 'starting' | 'ok' | 'retrying';
  lastError?: string;
  lastOkMs?: number;
  retries: number;
}

/** Short: a retry is one request, and the store being back should not wait long to be noticed. */
const DELIVERY_RETRY: BackoffPolicy = { firstMs: 500, maxMs: 5_000 };

export interface DeliveryRetryOptions {
  /** What a retry runs (the pipeline's flush: the failed batch is kept for it). */
  retry: () => Promise<void>;
  /** Stop retrying (the source is stopping; the next start re-reads from the last commit). */
  signal: AbortSignal;
  log?: (message: string) => void;
}

export class DeliveryRetry {
  readonly sink: SinkState = { state: 'starting', retries: 0 };

  constructor(private readonly options: DeliveryRetryOptions) {}

  /** Run a delivery, retrying with backoff while the sink fails; false if stopped before it succeeded. */
  async deliver(attempt: () => Promise<void>): Promise<boolean> {
    try {
      await retrying((failures) => (failures === 0 ? attempt() : this.options.retry()), { policy: DELIVERY_RETRY, signal: this.options.signal, onFailure: (error) => this.failed(error) });
    } catch {
      return false;
    }
    this.sink.state = 'ok';
    this.sink.lastOkMs = Date.now();
    return true;
  }

  private failed(error: Error): void {
    this.sink.state = 'retrying';
    this.sink.lastError = error.message;
    this.sink.retries++;
    if (this.sink.retries === 1 || this.sink.retries % 10 === 0) this.options.log?.(`sink failed (${this.sink.lastError}); retrying, nothing is read meanwhile`);
  }
}
