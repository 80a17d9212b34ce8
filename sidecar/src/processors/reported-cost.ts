// Claude Code's own figures (2.1.x `cost-state` rows): the session's cost so far as the agent states it, per
// model, and the lines it added and removed, told as CostReported (encode/costs.ts: a `ccotel.cost.reported` log
// record, the check on ccotel's own pricing and the price of models the table does not know, and
// `ccotel.lines_of_code` points).
import type { CostReported } from '../events.js';

export interface CostState {
  totalCostUsd: number;
  /** costUSD by model, as Claude Code priced it. */
  costByModel: Record<string, number>;
  hasUnknownModelCost: boolean;
  linesAdded: number;
  linesRemoved: number;
}

const finite = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** The figures of a `cost-state` row; undefined when it has no total cost. */
export function parseCostState(row: Record<string, unknown>): CostState | undefined {
  if (typeof row.totalCostUSD !== 'number' || !Number.isFinite(row.totalCostUSD)) return undefined;
  const costByModel: Record<string, number> = {};
  const usage = row.modelUsage;
  if (typeof usage === 'object' && usage !== null) {
    for (const [model, figures] of Object.entries(usage as Record<string, { costUSD?: unknown }>)) costByModel[model] = finite(figures?.costUSD);
  }
  return {
    totalCostUsd: row.totalCostUSD,
    costByModel,
    hasUnknownModelCost: row.hasUnknownModelCost === true,
    linesAdded: finite(row.totalLinesAdded),
    linesRemoved: finite(row.totalLinesRemoved),
  };
}

/**
 * The figures are running totals for the session (a resumed session carries them on), so the lines metric
 * counts what grew since the previous row of the same session read by this process.
 */
export class ReportedCosts {
  private readonly lastLines = new Map<string, { added: number; removed: number }>();

  reported(sessionId: string, timeMs: number, state: CostState): CostReported {
    const last = this.lastLines.get(sessionId) ?? { added: 0, removed: 0 };
    this.lastLines.set(sessionId, { added: Math.max(last.added, state.linesAdded), removed: Math.max(last.removed, state.linesRemoved) });
    const newLines = { added: Math.max(0, state.linesAdded - last.added), removed: Math.max(0, state.linesRemoved - last.removed) };
    return { kind: 'CostReported', sessionId, timeMs, ...state, newLines };
  }
}
