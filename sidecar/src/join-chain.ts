// The joins in the order their events require: a join runs after every join that publishes a kind it consumes.
// One round takes the events the transcript correlator told, hands each join the events of its kinds published so
// far, and gathers what the joins publish; the encoder then makes the round's telemetry of all of them.
import type { Ack, TelemetryBatch } from './model.js';
import type { CorrelationEvent, Join, Joined } from './events.js';

export class JoinChain {
  private readonly joins: Join[];

  constructor(joins: Join[]) {
    this.joins = inDependencyOrder(joins);
  }

  /** One round: the correlator's events, and the joins'; what to do once their telemetry is accepted. */
  run(input: readonly CorrelationEvent[]): Joined {
    let events = [...input];
    const acks: Ack[] = [];
    for (const join of this.joins) {
      const wanted = new Set(join.consumes);
      join.observe(events.filter((event) => wanted.has(event.kind)));
      const joined = join.drain();
      events = events.concat(joined.events);
      for (const ack of joined.acks) acks.push(ack);
    }
    return { events, acks };
  }

  finish(): void {
    for (const join of this.joins) join.finish();
  }

  /** An agent's own telemetry, received: to the joins that read it. */
  receive(batch: TelemetryBatch): void {
    for (const join of this.joins) join.receive?.(batch);
  }
}

/**
 * `joins` ordered so that each comes after the joins publishing what it consumes (stable: otherwise as given).
 * Throws on a cycle.
 */
export function inDependencyOrder(joins: Join[]): Join[] {
  const ordered: Join[] = [];
  let left = [...joins];
  while (left.length > 0) {
    const waitsFor = (join: Join) => left.some((other) => other !== join && other.produces.some((kind) => join.consumes.includes(kind)));
    const next = left.find((join) => !waitsFor(join));
    if (!next) throw new Error(`joins wait for each other's events: ${left.map((join) => join.constructor.name).join(', ')}`);
    ordered.push(next);
    left = left.filter((join) => join !== next);
  }
  return ordered;
}
