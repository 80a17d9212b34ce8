// The join chain on made-up joins and events: order from what each join consumes and produces, each join handed
// only its kinds, and what a join adds to an item of the round applied before the round leaves.
import { describe, expect, it } from 'vitest';
import type { CorrelationEvent, EventKind, Join, Joined } from './events.js';
import { inDependencyOrder, JoinChain } from './join-chain.js';
import { emptyBatch, type SpanRecord, type TelemetryBatch } from './model.js';

/** A join that records what it was handed, and publishes `publish` once. */
class FakeJoin implements Join {
  readonly seen: EventKind[] = [];
  constructor(
    readonly name: string,
    readonly consumes: EventKind[],
    readonly produces: EventKind[],
    private publish: CorrelationEvent[] = [],
  ) {}

  observe(events: readonly CorrelationEvent[]): void {
    this.seen.push(...events.map((event) => event.kind));
  }

  drain(): Joined {
    const events = this.publish;
    this.publish = [];
    return { batch: emptyBatch(), events, acks: [] };
  }

  finish(): void {}
}

const failure: CorrelationEvent = { kind: 'FailureDetected', id: 'f1', mode: 'orphan_process', sessionId: 's', timeMs: 1, traceId: '', spanId: '' };
const command: CorrelationEvent = {
  kind: 'ShellCommandEnded', traceId: 't'.repeat(32), spanId: 'c'.repeat(16), parentSpanId: '', sessionId: 's', pid: 7, startMs: 1, endMs: 2,
  spanEndMs: 2, commandLine: 'ls', commandLength: 2, truncated: false, ended: true, exitStatus: 0, process: {},
};
const call: CorrelationEvent = {
  kind: 'ToolCallEnded', traceId: 't'.repeat(32), spanId: 'a'.repeat(16), sessionId: 's', toolUseId: 'toolu_1', toolName: 'Bash', input: { command: 'ls' }, outcome: 'success', startMs: 1, endMs: 2, endedAtMs: 2, parentSpanId: 'r'.repeat(16),
};

function span(spanId: string, events: SpanRecord['events'] = []): SpanRecord {
  return { traceId: 't'.repeat(32), spanId, parentSpanId: '', name: 'execute_tool Bash', kind: 'internal', startMs: 0, endMs: 10, status: 'unset', statusMessage: '', attributes: {}, events };
}

describe('JoinChain', () => {
  it('runs each join after the joins publishing what it consumes, otherwise in the order given', () => {
    const state = new FakeJoin('state', ['FailureDetected'], []);
    const detector = new FakeJoin('detector', ['ShellCommandEnded', 'HookAttached'], ['FailureDetected']);
    const shell = new FakeJoin('shell', ['ToolCallEnded'], ['ShellCommandEnded']);
    const hooks = new FakeJoin('hooks', ['ToolCallEnded'], ['HookAttached']);
    expect(inDependencyOrder([state, detector, shell, hooks]).map((join) => (join as FakeJoin).name)).toEqual(['shell', 'hooks', 'detector', 'state']);
    expect(inDependencyOrder([hooks, shell, detector, state]).map((join) => (join as FakeJoin).name)).toEqual(['hooks', 'shell', 'detector', 'state']);
  });

  it('refuses joins that wait for each other', () => {
    const a = new FakeJoin('a', ['FailureDetected'], ['ShellCommandEnded']);
    const b = new FakeJoin('b', ['ShellCommandEnded'], ['FailureDetected']);
    expect(() => inDependencyOrder([a, b])).toThrow(/wait for each other/);
  });

  it("hands each join the events of its kinds, the correlator's and those published before it in the round", () => {
    const shell = new FakeJoin('shell', ['ToolCallEnded'], ['ShellCommandEnded'], [command]);
    const detector = new FakeJoin('detector', ['ShellCommandEnded'], ['FailureDetected'], [failure]);
    const state = new FakeJoin('state', ['FailureDetected', 'ToolCallEnded'], []);
    new JoinChain([state, detector, shell]).run({ batch: emptyBatch(), events: [call] });
    expect(shell.seen).toEqual(['ToolCallEnded']);
    expect(detector.seen).toEqual(['ShellCommandEnded']);
    expect(state.seen).toEqual(['ToolCallEnded', 'FailureDetected']);
  });

  it('adds the hooks joined onto a span of the round as its events, in time order, and a StopFailure as its error', () => {
    const spanId = 'b'.repeat(16);
    const hooks = new FakeJoin('hooks', ['TurnEnded'], ['HookAttached'], [
      { kind: 'HookAttached', spanId, event: { name: 'Stop', timeMs: 9, attributes: {} } },
      { kind: 'HookAttached', spanId, event: { name: 'UserPromptSubmit', timeMs: 1, attributes: {} } },
      { kind: 'HookAttached', spanId, event: { name: 'StopFailure', timeMs: 10, attributes: {} }, failure: 'rate_limit' },
    ]);
    const round: TelemetryBatch = { spans: [span(spanId, [{ name: 'compaction', timeMs: 5, attributes: {} }]), span('c'.repeat(16))], logs: [], metrics: [] };
    const { batch } = new JoinChain([hooks]).run({ batch: round, events: [] });
    expect(batch.spans[0].events.map((event) => event.name)).toEqual(['UserPromptSubmit', 'compaction', 'Stop', 'StopFailure']);
    expect(batch.spans[0]).toMatchObject({ status: 'error', statusMessage: 'rate_limit' });
    expect(batch.spans[1]).toMatchObject({ status: 'unset', events: [] });
  });
});
