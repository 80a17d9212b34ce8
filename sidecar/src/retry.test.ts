import { describe, expect, it } from 'vitest';
import { Backoff, retrying, sleep } from './retry.js';

const delays = (backoff: Backoff, count: number, retryAfterMs?: number) => Array.from({ length: count }, () => backoff.next(retryAfterMs));

describe('Backoff', () => {
  it('doubles from the first delay and stops doubling at the cap', () => {
    expect(delays(new Backoff({ firstMs: 500, maxMs: 5_000 }), 7)).toEqual([500, 1_000, 2_000, 4_000, 5_000, 5_000, 5_000]);
  });

  it('moves each delay by at most its jitter, both ways', () => {
    const policy = { firstMs: 500, maxMs: 30_000, jitter: 0.2 };
    const rounded = (random: number, count: number) => delays(new Backoff(policy, () => random), count).map(Math.round);
    expect(rounded(0, 3)).toEqual([400, 800, 1_600]);
    expect(rounded(1, 3)).toEqual([600, 1_200, 2_400]);
    expect(rounded(0.5, 8).at(-1)).toBe(30_000);
  });

  it('waits what a Retry-After asks instead of the schedule, shortened to maxRetryAfterMs', () => {
    const backoff = new Backoff({ firstMs: 500, maxMs: 30_000, maxRetryAfterMs: 300_000 });
    expect(backoff.next(10_000)).toBe(10_000);
    expect(backoff.next(3_600_000)).toBe(300_000);
    // The schedule went on meanwhile: a failure without Retry-After waits its own step.
    expect(backoff.next()).toBe(2_000);
  });
});

describe('retrying', () => {
  it('tries until the attempt succeeds, telling each failure and its wait', async () => {
    const failures: string[] = [];
    const result = await retrying(
      async (failed) => {
        if (failed < 2) throw new Error(`failure ${failed}`);
        return failed;
      },
      { policy: { firstMs: 1, maxMs: 2 }, onFailure: (error, delayMs) => failures.push(`${error.message} then ${delayMs} ms`) },
    );
    expect(result).toBe(2);
    expect(failures).toEqual(['failure 0 then 1 ms', 'failure 1 then 2 ms']);
  });

  it('gives up with the error a failure handler throws', async () => {
    const attempt = async () => {
      throw new Error('for good');
    };
    await expect(retrying(attempt, { policy: { firstMs: 1, maxMs: 1 }, onFailure: (error) => { throw error; } })).rejects.toThrow('for good');
  });

  it('ends a long wait when stopped, and gives up at the next failure', async () => {
    const stop = new AbortController();
    let attempts = 0;
    const running = retrying(
      async () => {
        attempts++;
        throw new Error('down');
      },
      { policy: { firstMs: 3_600_000, maxMs: 3_600_000 }, signal: stop.signal },
    );
    await sleep(20);
    stop.abort();
    await expect(running).rejects.toThrow('down');
    expect(attempts).toBe(2); // the first, and the one after the wait the stop cut short
  });
});
