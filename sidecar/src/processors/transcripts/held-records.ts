// Records of a subagent whose trace is not known yet: its rows may come before the tool call that started it
// (another file, read first). They wait here, with the events told about them, and go out with the trace id once
// the agent is linked.
import { emptyCorrelated, type Correlated } from '../../events.js';

export class HeldRecords {
  private readonly byAgent = new Map<string, Correlated>();

  /** Hold the records of this agent from now on, until `release`. */
  hold(agentId: string): void {
    this.byAgent.set(agentId, emptyCorrelated());
  }

  /** Where an agent's records and events wait, while it is held. */
  heldFor(agentId: string): Correlated | undefined {
    return this.byAgent.get(agentId);
  }

  /** Stamp the agent's held records and events with its trace id and move them to `out`. */
  release(agentId: string, traceId: string, out: Correlated): void {
    const held = this.byAgent.get(agentId);
    if (!held) return;
    this.byAgent.delete(agentId);
    const { batch, events } = held;
    for (const span of batch.spans) span.traceId = traceId;
    for (const log of batch.logs) log.traceId = traceId;
    for (const point of batch.metrics) point.traceId = traceId;
    for (const event of events) if ('traceId' in event) event.traceId = traceId;
    out.batch.spans.push(...batch.spans);
    out.batch.logs.push(...batch.logs);
    out.batch.metrics.push(...batch.metrics);
    out.events.push(...events);
  }
}
