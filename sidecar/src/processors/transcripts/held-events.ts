// Events of a subagent whose trace is not known yet: its rows may come before the tool call that started it
// (another file, read first). They wait here and go out with the trace id once the agent is linked.
import type { CorrelationEvent } from '../../events.js';

export class HeldEvents {
  private readonly byAgent = new Map<string, CorrelationEvent[]>();

  /** Hold the events of this agent from now on, until `release`. */
  hold(agentId: string): void {
    this.byAgent.set(agentId, []);
  }

  /** Where an agent's events wait, while it is held. */
  heldFor(agentId: string): CorrelationEvent[] | undefined {
    return this.byAgent.get(agentId);
  }

  /** Stamp the agent's held events with its trace id and move them to `out`. */
  release(agentId: string, traceId: string, out: CorrelationEvent[]): void {
    const held = this.byAgent.get(agentId);
    if (!held) return;
    this.byAgent.delete(agentId);
    for (const event of held) if ('traceId' in event) event.traceId = traceId;
    out.push(...held);
  }
}
