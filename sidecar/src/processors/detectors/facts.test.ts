import { describe, expect, it } from 'vitest';
import { Facts, REMEMBERED_CALLS } from './facts.js';

describe('Facts: what the detectors remember stays bounded over a long history', () => {
  it('keeps the most recent tool calls, a call known again counting as recent', () => {
    const facts = new Facts();
    const call = (n: number) => ({ toolUseId: `toolu_${n}`, sessionId: 's1', name: 'Bash', traceId: '', spanId: '', startMs: n });
    facts.tools.set('toolu_0', call(0));
    for (let n = 1; n <= REMEMBERED_CALLS; n++) {
      facts.tools.set(`toolu_${n}`, call(n));
      if (n === 10) facts.tools.set('toolu_0', { ...call(0), endMs: 10 }); // its span went out: known again
    }
    expect(facts.tools.size).toBe(REMEMBERED_CALLS);
    expect(facts.tools.get('toolu_0')?.endMs).toBe(10);
    expect(facts.tools.has('toolu_1')).toBe(false);
    expect(facts.tools.has(`toolu_${REMEMBERED_CALLS}`)).toBe(true);
    expect(facts.callById('toolu_1', { sessionId: 's1', name: 'Bash', runsCommand: true, startMs: 1 }).traceId).toBe(''); // a hook names it again
    expect(facts.tools.size).toBe(REMEMBERED_CALLS);
  });

  it('keeps at most twice REMEMBERED_CALLS shell runs, the latest among them', () => {
    const facts = new Facts();
    for (let pid = 2; pid < 5 * REMEMBERED_CALLS; pid++) facts.shells.push({ sessionId: 's1', pid, startMs: pid });
    expect(facts.shells.length).toBeLessThan(2 * REMEMBERED_CALLS);
    expect(facts.shells.at(-1)?.pid).toBe(5 * REMEMBERED_CALLS - 1);
    expect(facts.shells.filter((run) => run.pid % 2 === 0).length).toBeGreaterThan(0); // still an array to the detectors
  });
});
