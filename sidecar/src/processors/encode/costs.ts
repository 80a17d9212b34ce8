// Claude Code's own cost figures: a `ccotel.cost.reported` log record, and `ccotel.lines_of_code` points for the
// lines grown since the session's previous figures. Keyed by the figures: the same row read twice is one record.
import type { CostReported } from '../../events.js';
import { recordIdOf } from '../../ids.js';
import type { TelemetryBatch } from '../../model.js';
import { ATTRS, EVENTS, METRICS, metricPoint } from '../../semconv.js';

export function encodeCost(cost: CostReported, out: TelemetryBatch): void {
  const { sessionId, timeMs, totalCostUsd, linesAdded, linesRemoved } = cost;
  const id = recordIdOf('cost', sessionId, String(totalCostUsd), String(linesAdded), String(linesRemoved));
  out.logs.push({
    id,
    timeMs,
    eventName: EVENTS.costReported,
    severity: 'INFO',
    traceId: '',
    spanId: '',
    body: `Claude Code states the session cost ${totalCostUsd} USD so far`,
    attributes: {
      [ATTRS.sessionId]: sessionId,
      'gen_ai.conversation.id': sessionId,
      'ccotel.cost.reported_usd': totalCostUsd,
      'ccotel.cost.reported_by_model': JSON.stringify(cost.costByModel),
      'ccotel.cost.has_unknown_model_cost': cost.hasUnknownModelCost,
      'ccotel.lines.added': linesAdded,
      'ccotel.lines.removed': linesRemoved,
    },
  });
  for (const [type, value] of Object.entries(cost.newLines)) {
    if (value <= 0) continue;
    out.metrics.push(metricPoint(METRICS.linesOfCode, { id: `${id}:lines:${type}`, timeMs, value, attributes: { type, [ATTRS.sessionId]: sessionId } }));
  }
}
