// The join chain on made-up joins and events: order from what each join consumes and produces, each join handed
// only its kinds.
import { describe, expect, it } from 'vitest';
import type { CorrelationEvent, EventKind, Join, Joined } from './events.js';
import { inDependencyOrder, JoinChain } from './join-chain.js';

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
    return { events, acks: [] };
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
    new JoinChain([state, detector, shell]).run([call]);
    expect(shell.seen).toEqual(['ToolCallEnded']);
    expect(detector.seen).toEqual(['ShellCommandEnded']);
    expect(state.seen).toEqual(['ToolCallEnded', 'FailureDetected']);
  });
});
