// The joins in the order their events require: a join runs after every join that publishes a kind it consumes.
// One round takes what the transcript correlator emitted, hands each join the events of its kinds published so
// far, gathers what the joins add, then applies the events that add to an item of the round (a hook on a span,
// a hook's source on a session start) before the round's telemetry leaves: nothing that went out is edited.
import { concatBatches, type Ack, type TelemetryBatch } from './model.js';
import { attachHooks } from './processors/encode/hooks.js';
import { hooksBySpan, type CorrelationEvent, type Correlated, type Join } from './events.js';

export class JoinChain {
  private readonly joins: Join[];

  constructor(joins: Join[]) {
    this.joins = inDependencyOrder(joins);
  }

  /** One round: the correlator's output, joined; the telemetry to deliver and what to do once it is accepted. */
  run(input: Correlated): Correlated & { acks: Ack[] } {
    let { batch, events } = input;
    const acks: Ack[] = [];
    for (const join of this.joins) {
      const wanted = new Set(join.consumes);
      join.observe(events.filter((event) => wanted.has(event.kind)));
      const joined = join.drain();
      batch = concatBatches(batch, joined.batch);
      events = events.concat(joined.events);
      for (const ack of joined.acks) acks.push(ack);
    }
    applyAdditions(batch, events);
    return { batch, events, acks };
  }

  finish(): void {
    for (const join of this.joins) join.finish();
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

/** Apply to the round's telemetry the events that add to its items: hooks on spans. */
export function applyAdditions(batch: TelemetryBatch, events: readonly CorrelationEvent[]): void {
  const hooks = hooksBySpan(events);
  if (hooks.size > 0) for (const span of batch.spans) attachHooks(span, hooks.get(span.spanId));
}
