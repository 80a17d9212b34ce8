// Where the correlator's records go, and how they are built: one object per record, ids from a seed unique per
// record name (a re-read rebuilds the same ids), and the correlation events the joins read about them. A record
// (or event) of a subagent not linked yet is held (`HeldRecords`).
import { emptyCorrelated, type CorrelationEvent, type Correlated } from '../../events.js';
import type { LogRecord, MetricPoint, SpanRecord } from '../../model.js';
import type { MetricDefinition } from '../../semconv.js';
import { logRecord, point, type LogSpec, type MetricSpec } from '../encode/records.js';
import { HeldRecords } from './held-records.js';
import type { Scope } from './types.js';

export class Output {
  private out: Correlated = emptyCorrelated();
  private readonly held = new HeldRecords();

  /** Take everything emitted so far. */
  drain(): Correlated {
    const taken = this.out;
    this.out = emptyCorrelated();
    return taken;
  }

  /** What the joins are told of a record of this scope (sent with it, held with it). */
  event(event: CorrelationEvent, scope?: Scope): void {
    this.target(scope).events.push(event);
  }

  /** Records with a scope go where it points: out, or held while their subagent's trace is not known. */
  span(span: SpanRecord, scope?: Scope): void {
    this.target(scope).batch.spans.push(span);
  }

  /** Returns the record's id. */
  log(spec: LogSpec, scope?: Scope): string {
    const log = logRecord(spec);
    this.target(scope).batch.logs.push(log);
    return log.id;
  }

  /** Returns the point's id. */
  metric(metric: MetricDefinition, spec: MetricSpec, scope?: Scope): string {
    const built = point(metric, spec);
    this.target(scope).batch.metrics.push(built);
    return built.id;
  }

  /** Records made elsewhere (Claude Code's own cost figures), straight out. */
  push(logs: LogRecord[], metrics: MetricPoint[]): void {
    this.out.batch.logs.push(...logs);
    this.out.batch.metrics.push(...metrics);
  }

  /** Hold a subagent's records from now on: its trace is not known yet. */
  hold(agentId: string): void {
    this.held.hold(agentId);
  }

  /** Move a subagent's held records out under its trace id. */
  release(agentId: string, traceId: string): void {
    this.held.release(agentId, traceId, this.out);
  }

  private target(scope: Scope | undefined): Correlated {
    if (!scope || scope.traceId !== '' || scope.agentId === undefined) return this.out;
    return this.held.heldFor(scope.agentId) ?? this.out;
  }
}
