import { describe, expect, it } from 'vitest';
import { crashLoop } from './crash-loop.js';

describe('crash loop (slow: the real CLI killed with SIGKILL 20 times while the corpus grows)', () => {
  it('ends with every reference span stored exactly once', async () => {
    const result = await crashLoop({ kills: 20, seed: 11, sessions: 6 });
    expect(result.duplicates).toBe(0);
    expect(result.missing).toEqual([]);
    expect(result.storedRows).toBeGreaterThan(100);
  }, 600_000);
});
