// When the driver delivers (fake clock): at once when the batch is full, else once its oldest item is a flush
// interval old; a failed delivery is retried with backoff, and a source making room waits for it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Driver, type DriverTarget } from './driver.js';

const INTERVAL_MS = 200;

/** A target holding `pending` items; a flush delivers them all (or fails while `failing`). */
class FakeTarget implements DriverTarget {
  pending = 0;
  flushes = 0;
  failing = false;
  pendingItems(): number {
    return this.pending;
  }
  async flush(): Promise<void> {
    this.flushes++;
    if (this.failing) throw new Error('sink down');
    this.pending = 0;
  }
}

describe('Driver', () => {
  const drivers: Driver[] = [];
  beforeEach(() => void vi.useFakeTimers());
  afterEach(async () => {
    for (const driver of drivers.splice(0)) await driver.stop();
    vi.useRealTimers();
  });

  function started(target: FakeTarget): Driver {
    const driver = new Driver({ target, maxItems: 100, intervalMs: INTERVAL_MS });
    driver.start();
    drivers.push(driver);
    return driver;
  }

  it('delivers once the oldest item emitted is a flush interval old, not before', async () => {
    const target = new FakeTarget();
    const driver = started(target);
    await vi.advanceTimersByTimeAsync(INTERVAL_MS); // nothing emitted: nothing delivered
    expect(target.flushes).toBe(0);
    target.pending = 1;
    driver.emitted();
    await vi.advanceTimersByTimeAsync(INTERVAL_MS - 1);
    target.pending = 2;
    driver.emitted(); // a later item does not move the delivery of the first
    expect(target.flushes).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(target.flushes).toBe(1);
    expect(target.pending).toBe(0);
  });

  it('delivers at once when the batch is full', async () => {
    const target = new FakeTarget();
    const driver = started(target);
    target.pending = 100;
    driver.emitted();
    await vi.advanceTimersByTimeAsync(0);
    expect(target.flushes).toBe(1);
  });

  it('retries a failed delivery with backoff, shows it in the sink state, and holds makeRoom until it succeeds', async () => {
    const target = new FakeTarget();
    const driver = started(target);
    target.pending = 100;
    target.failing = true;
    driver.emitted();
    await vi.advanceTimersByTimeAsync(0);
    expect(driver.sink).toMatchObject({ state: 'retrying', lastError: 'sink down', retries: 1 });
    let roomMade = false;
    void driver.makeRoom().then(() => (roomMade = true));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(target.flushes).toBeGreaterThan(2); // retried, one delivery at a time
    expect(roomMade).toBe(false);
    target.failing = false;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(roomMade).toBe(true);
    expect(driver.sink.state).toBe('ok');
  });

  it('runs periodic work on its tick, each job at its own period', async () => {
    const target = new FakeTarget();
    const driver = new Driver({ target, maxItems: 100, intervalMs: INTERVAL_MS });
    const runs: string[] = [];
    driver.every(1_000, () => runs.push('idle'));
    driver.every(5_000, () => runs.push('status'));
    driver.start();
    drivers.push(driver);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(runs.filter((run) => run === 'idle')).toHaveLength(5);
    expect(runs.filter((run) => run === 'status')).toHaveLength(1);
    expect(target.flushes).toBe(0); // nothing was emitted: nothing delivered
  });
});
