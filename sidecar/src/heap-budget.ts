// Keeps V8's heap near a budget while a long history is read. What the pipeline keeps alive grows only slowly
// with the history (~60 MB after 5 GB), but V8 lets the old generation grow to up to 4× what survived the last
// full collection before it collects again, and a batch in flight outlives two scavenges, so that room fills
// with garbage: a 5 GB backfill peaked at ~270 MB of heap for ~60 MB alive (BENCHMARKS.md, issue 18 goal 2).
// After each full collection this sets the next growth so that the heap reaches the budget at most; while
// little is alive it leaves V8's own choice alone, so a small history pays no extra collections.
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';

/** V8's largest growing factor: at or above it the budget costs nothing and V8 decides. */
const V8_MAX_FACTOR = 4;
/** The least growth allowed, however much is alive: below it full collections would follow each other. */
const MIN_FACTOR = 1.5;

/** The `--heap-growing-percent` for the next collection cycle (0: V8's own dynamic factor). */
export function growingPercent(liveBytes: number, budgetBytes: number): number {
  const factor = budgetBytes / Math.max(liveBytes, 1);
  return factor >= V8_MAX_FACTOR ? 0 : Math.round((Math.max(factor, MIN_FACTOR) - 1) * 100);
}

const isFullCollection = (entry: PerformanceEntry & { detail?: { kind?: number } }) => entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR;

/**
 * Starts steering the heap toward `budgetBytes`; the function returned stops it and gives V8 its own choice back.
 * `setFlags` is V8's own unless a test records the flags instead.
 */
export function keepHeapNear(budgetBytes: number, setFlags: (flags: string) => void = setFlagsFromString): () => void {
  let current = 0;
  const apply = (percent: number) => {
    if (percent === current) return;
    setFlags(`--heap-growing-percent=${percent}`);
    current = percent;
  };
  const observer = new PerformanceObserver((list) => {
    if (list.getEntries().some(isFullCollection)) apply(growingPercent(getHeapStatistics().used_heap_size, budgetBytes));
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => {
    observer.disconnect();
    apply(0);
  };
}

/**
 * The heap a long read of the history steers toward (a backfill, `run`'s catch-up): 5 GB of history keep ~60 MB alive.
 * With the embedded engine in the process (~240 MB of its library's pages and its own working memory) the heap gets
 * less: at 1 GB, 100 MB instead of 180 took a backfill's heap peak from 217–244 to 146–149 MB and its peak RSS down by
 * 56–75 MB, for ~10% more CPU (−3% to +14% between same-run pairs). Without it, 120 MB instead of 180 took a 5 GB
 * backfill's peak RSS from 348 to 290 MB for 11% more time (BENCHMARKS.md, issue 36 memory).
 */
export function historyHeapBudget(store: { kind: string } | undefined): number {
  return (store?.kind === 'embedded' ? 100 : 120) << 20;
}
