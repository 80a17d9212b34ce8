import { describe, expect, it } from 'vitest';
import { backfillHeapBudget } from './backfill.js';

describe('the heap a backfill steers toward', () => {
  it('is smaller with the embedded engine in the process, and the same for a server or no store', () => {
    const withoutEngine = backfillHeapBudget(undefined);
    expect(backfillHeapBudget({ kind: 'server' })).toBe(withoutEngine);
    expect(backfillHeapBudget({ kind: 'embedded' })).toBeLessThan(withoutEngine);
    expect(backfillHeapBudget({ kind: 'embedded' })).toBe(100 << 20);
  });
});
