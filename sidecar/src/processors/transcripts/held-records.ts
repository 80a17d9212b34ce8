// Records of a subagent whose trace is not known yet: its rows may come before the tool call that started it
// (another file, read first). They wait here and go out with the trace id once the agent is linked.
import type { TelemetryBatch } from '../../model.js';
import { emptyBatch } from '../../model.js';

export class HeldRecords {
  private readonly byAgent = new Map<string, TelemetryBatch>();

  /** Hold the records of this agent from now on, until `release`. */
  hold(agentId: string): void {
    this.byAgent.set(agentId, emptyBatch());
  }

  /** The batch an agent's records wait in, while it is held. */
  batchOf(agentId: string): TelemetryBatch | undefined {
    return this.byAgent.get(agentId);
  }

  /** Stamp the agent's held records with its trace id and move them to `out`. */
  release(agentId: string, traceId: string, out: TelemetryBatch): void {
    const held = this.byAgent.get(agentId);
    if (!held) return;
    this.byAgent.delete(agentId);
    for (const span of held.spans) span.traceId = traceId;
    for (const log of held.logs) log.traceId = traceId;
    for (const point of held.metrics) point.traceId = traceId;
    out.spans.push(...held.spans);
    out.logs.push(...held.logs);
    out.metrics.push(...held.metrics);
  }
}
