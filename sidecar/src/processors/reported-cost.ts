// Claude Code's own figures (2.1.x `cost-state` rows): the session's cost so far as the agent states it, per
// model, and the lines it added and removed. They become a `ccotel.cost.reported` log record (the check on
// ccotel's own pricing, and the price of models the table does not know) and `ccotel.lines_of_code` points.
import { recordIdOf } from '../ids.js';
import type { LogRecord, MetricPoint } from '../model.js';
import { ATTRS, EVENTS, METRICS, metricPoint } from '../semconv.js';

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

  telemetry(sessionId: string, timeMs: number, state: CostState): { log: LogRecord; metrics: MetricPoint[] } {
    const id = recordIdOf('cost', sessionId, String(state.totalCostUsd), String(state.linesAdded), String(state.linesRemoved));
    const log: LogRecord = {
      id,
      timeMs,
      eventName: EVENTS.costReported,
      severity: 'INFO',
      traceId: '',
      spanId: '',
      body: `Claude Code states the session cost ${state.totalCostUsd} USD so far`,
      attributes: {
        [ATTRS.sessionId]: sessionId,
        'gen_ai.conversation.id': sessionId,
        'ccotel.cost.reported_usd': state.totalCostUsd,
        'ccotel.cost.reported_by_model': JSON.stringify(state.costByModel),
        'ccotel.cost.has_unknown_model_cost': state.hasUnknownModelCost,
        'ccotel.lines.added': state.linesAdded,
        'ccotel.lines.removed': state.linesRemoved,
      },
    };
    const last = this.lastLines.get(sessionId) ?? { added: 0, removed: 0 };
    this.lastLines.set(sessionId, { added: Math.max(last.added, state.linesAdded), removed: Math.max(last.removed, state.linesRemoved) });
    const metrics: MetricPoint[] = [];
    for (const [type, now, before] of [['added', state.linesAdded, last.added], ['removed', state.linesRemoved, last.removed]] as const) {
      if (now <= before) continue;
      metrics.push(metricPoint(METRICS.linesOfCode, { id: `${id}:lines:${type}`, timeMs, value: now - before, attributes: { type, [ATTRS.sessionId]: sessionId } }));
    }
    return { log, metrics };
  }
}
