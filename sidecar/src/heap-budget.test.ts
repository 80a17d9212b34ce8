import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { growingPercent, historyHeapBudget } from './heap-budget.js';

const MODULE = resolve('dist/sidecar/src/heap-budget.js');
const MB = 2 ** 20;

/** The flags keepHeapNear(budget) sets around full collections of a child holding `holdMb`, then of one holding ~nothing. */
function flagsSet(budgetMb: number, holdMb: number): string[] {
  const script = `
    const { keepHeapNear } = await import(${JSON.stringify(MODULE)});
    const flags = [];
    // The observer hears of a collection a moment later: wait for its flag (up to 2 s, where none may come).
    const collectAndWait = async () => {
      const before = flags.length;
      gc();
      for (let wait = 0; wait < 100 && flags.length === before; wait++) await new Promise((next) => setTimeout(next, 20));
    };
    const stop = keepHeapNear(${budgetMb * MB}, (flag) => flags.push(flag));
    let held = Array.from({ length: ${holdMb * 16} }, (_, i) => new Array(8190).fill(i)); // 64 KB each
    await collectAndWait();
    flags.push('then');
    held = [];
    await collectAndWait();
    flags.push('stop');
    stop();
    console.log(JSON.stringify(flags));
  `;
  const result = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`child failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as string[];
}

const percentIn = (flag: string) => Number(/^--heap-growing-percent=(\d+)$/.exec(flag)?.[1]);

describe('keepHeapNear', () => {
  it('after a full collection lets the heap grow only to the budget, and gives V8 its choice back once little is alive', () => {
    const [steered, ...rest] = flagsSet(180, 60);
    // ~60 MB alive plus the process's own ~5 MB: room for 180 MB is about 2.7x, i.e. +170%
    expect(percentIn(steered)).toBeGreaterThanOrEqual(150);
    expect(percentIn(steered)).toBeLessThanOrEqual(200);
    expect(rest).toEqual(['then', '--heap-growing-percent=0', 'stop']);
  });

  it('sets nothing while the budget is four times what is alive or more (V8 decides, at no extra cost)', () => {
    expect(flagsSet(180, 10)).toEqual(['then', 'stop']);
  });

  it('never allows less than half again as much as is alive, whatever the budget', () => {
    expect(growingPercent(30 * MB, 180 * MB)).toBe(0);
    expect(growingPercent(60 * MB, 180 * MB)).toBe(200);
    expect(growingPercent(150 * MB, 180 * MB)).toBe(50);
    expect(growingPercent(0, 180 * MB)).toBe(0);
  });
});

describe('the heap a read of the history steers toward', () => {
  it('is smaller with the embedded engine in the process, and the same for a server or no store', () => {
    const withoutEngine = historyHeapBudget(undefined);
    expect(historyHeapBudget({ kind: 'server' })).toBe(withoutEngine);
    expect(historyHeapBudget({ kind: 'embedded' })).toBeLessThan(withoutEngine);
    expect(historyHeapBudget({ kind: 'embedded' })).toBe(100 << 20);
  });
});
