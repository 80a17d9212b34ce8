// The one retry policy of the sidecar, for every loop that waits out a peer that fails (the OTLP sink's requests,
// the store or collector a source's delivery is waiting for, a store not available yet): the delay doubles from
// `firstMs` up to `maxMs`, each one moved by up to ±`jitter` of it at random (so many senders do not retry in
// step); a Retry-After the peer asked for replaces it; no delay exceeds `maxRetryAfterMs`; and a stop signal ends
// the wait at once. Sources and sinks both use it, so it belongs to neither.

export interface BackoffPolicy {
  firstMs: number;
  /** The schedule stops doubling here (a jittered delay may exceed it by its jitter). */
  maxMs: number;
  /** Fraction of each delay added or taken at random: 0.2 is ±20%. Default none. */
  jitter?: number;
  /** A Retry-After longer than this is shortened to it, and so is any delay. Default no bound. */
  maxRetryAfterMs?: number;
}

/** The delays of one run of retries (a new one starts at `firstMs` again). */
export class Backoff {
  private stepMs: number;

  constructor(
    private readonly policy: BackoffPolicy,
    private readonly random: () => number = Math.random,
  ) {
    this.stepMs = policy.firstMs;
  }

  /** The wait before the next attempt: `retryAfterMs` when the peer named one, else the schedule's next step. */
  next(retryAfterMs?: number): number {
    const jitter = this.policy.jitter ?? 0;
    const scheduled = this.stepMs * (1 - jitter + this.random() * 2 * jitter);
    this.stepMs = Math.min(this.stepMs * 2, this.policy.maxMs);
    return Math.min(retryAfterMs ?? scheduled, this.policy.maxRetryAfterMs ?? Number.POSITIVE_INFINITY);
  }
}

/** Wait `ms`, or less if `signal` fires first (then resolve at once). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

export interface RetryOptions {
  policy: BackoffPolicy;
  /** Once it fired, the next failure is the last: its error is thrown. */
  signal?: AbortSignal;
  /** Told of each failure and the wait before the next attempt; throwing gives up with that error. */
  onFailure?: (error: Error, delayMs: number) => void;
}

/** Run `attempt` (told how many failed before it) until it succeeds, waiting the policy's delays between tries. */
export async function retrying<T>(attempt: (failures: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const backoff = new Backoff(options.policy);
  for (let failures = 0; ; failures++) {
    try {
      return await attempt(failures);
    } catch (error) {
      const delayMs = backoff.next();
      options.onFailure?.(error as Error, delayMs);
      if (options.signal?.aborted) throw error;
      await sleep(delayMs, options.signal);
    }
  }
}
