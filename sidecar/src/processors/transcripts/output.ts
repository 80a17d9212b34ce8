// Where the correlator's events go: out, or, for a subagent not linked yet, held with its trace id to come
// (`HeldEvents`). The encoder (processors/encode) makes the records of them.
import type { CorrelationEvent, Place } from '../../events.js';
import { HeldEvents } from './held-events.js';
import type { Scope } from './types.js';

export class Output {
  private out: CorrelationEvent[] = [];
  private readonly held = new HeldEvents();

  constructor(private readonly placeOf: (sessionId: string) => Place | undefined) {}

  /** Take everything told so far. */
  drain(): CorrelationEvent[] {
    const taken = this.out;
    this.out = [];
    return taken;
  }

  /**
   * An event about an item of this scope: out, or held while its subagent's trace is not known. It carries where
   * its session was at the row that opened the item (the scope's), else at the last row read.
   */
  event(event: CorrelationEvent, scope?: Scope): void {
    if ('sessionId' in event && event.place === undefined) event.place = scope?.place ?? this.placeOf(event.sessionId);
    this.target(scope).push(event);
  }

  /** Hold a subagent's events from now on: its trace is not known yet. */
  hold(agentId: string): void {
    this.held.hold(agentId);
  }

  /** Move a subagent's held events out under its trace id. */
  release(agentId: string, traceId: string): void {
    this.held.release(agentId, traceId, this.out);
  }

  private target(scope: Scope | undefined): CorrelationEvent[] {
    if (!scope || scope.traceId !== '' || scope.agentId === undefined) return this.out;
    return this.held.heldFor(scope.agentId) ?? this.out;
  }
}
