import { describe, expect, it } from 'vitest';
import type { CorrelationEvent } from '../../events.js';
import { encode } from './index.js';

const detected = (sessionId: string): CorrelationEvent => ({ kind: 'FailureDetected', id: `f-${sessionId}`, mode: 'orphan_process', sessionId, timeMs: 1, traceId: '', spanId: '' });

describe('the agent of every point', () => {
  it('is the one the event names, else the one whose source holds the session, else Claude Code', () => {
    const events: CorrelationEvent[] = [
      { kind: 'TurnEnded', agent: 'codex', traceId: 't', spanId: 's', sessionId: 'thread-1', messageUuid: 'turn-1', promptText: 'hi', outcome: 'completed', startMs: 1, endMs: 2 },
      detected('thread-2'),
      detected('claude-session'),
    ];
    const { metrics } = encode(events, () => undefined, (sessionId) => (sessionId === 'thread-2' ? 'codex' : undefined));
    const agentsOf = (name: string) => metrics.filter((point) => point.name === name).map((point) => point.attributes['gen_ai.agent.name']);
    expect(agentsOf('ccotel.turns')).toEqual(['codex']);
    expect(agentsOf('ccotel.failure_modes')).toEqual(['codex', 'claude-code']);
  });
});
