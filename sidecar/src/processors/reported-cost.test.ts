import { describe, expect, it } from 'vitest';
import { encode } from './encode/index.js';
import { ReportedCosts, type CostState } from './reported-cost.js';

const state = (totalCostUsd: number, linesAdded: number, linesRemoved: number): CostState =>
  ({ totalCostUsd, costByModel: { 'claude-opus-5-5': totalCostUsd }, hasUnknownModelCost: false, linesAdded, linesRemoved });

/** The records of what `costs` reports of the row, encoded. */
function recordsOf(costs: ReportedCosts, sessionId: string, timeMs: number, figures: CostState) {
  const { logs, metrics } = encode([costs.reported(sessionId, timeMs, figures)]);
  return { log: logs[0], metrics };
}

describe('ReportedCosts', () => {
  it('records the stated cost as a log record, and lines of code as what grew since the last row of the session', () => {
    const costs = new ReportedCosts();
    const first = recordsOf(costs, 's1', 1000, state(0.5, 10, 2));
    expect(first.log).toMatchObject({ eventName: 'ccotel.cost.reported', timeMs: 1000, attributes: {
      'session.id': 's1', 'ccotel.cost.reported_usd': 0.5, 'ccotel.cost.reported_by_model': '{"claude-opus-5-5":0.5}',
      'ccotel.lines.added': 10, 'ccotel.lines.removed': 2,
    } });
    expect(first.metrics.map((p) => [p.name, p.attributes.type, p.value])).toEqual([['ccotel.lines_of_code', 'added', 10], ['ccotel.lines_of_code', 'removed', 2]]);
    // A resumed process carries the totals on: only the growth counts; an unchanged figure adds no point.
    const second = recordsOf(costs, 's1', 2000, state(0.9, 25, 2));
    expect(second.metrics.map((p) => [p.attributes.type, p.value])).toEqual([['added', 15]]);
    // Another session starts from zero.
    expect(recordsOf(costs, 's2', 3000, state(0.1, 4, 0)).metrics.map((p) => p.value)).toEqual([4]);
  });

  it('gives a re-read of the same row the same ids, so the store drops the repeat', () => {
    const a = recordsOf(new ReportedCosts(), 's1', 1000, state(0.5, 10, 2));
    const b = recordsOf(new ReportedCosts(), 's1', 1000, state(0.5, 10, 2));
    expect(b.log.id).toBe(a.log.id);
    expect(b.metrics.map((p) => p.id)).toEqual(a.metrics.map((p) => p.id));
  });
});
