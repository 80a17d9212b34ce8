import { describe, expect, it } from 'vitest';
import type { SessionStarted } from '../../events.js';
import { EVENTS, logIdOf, sessionStartSeed } from '../../semconv.js';
import { encode } from './index.js';

const start: SessionStarted = { kind: 'SessionStarted', sessionId: 's1', source: 'resume', messageUuid: 'prompt-row', promptId: 'p1', timeMs: 5 };

describe('encoding session starts', () => {
  it("gives a confirmed session start the hook's source, on its record and its point", () => {
    const { logs, metrics } = encode([start, { kind: 'SessionStartConfirmed', sessionId: 's1', messageUuid: 'prompt-row', source: 'compact' }]);
    expect(logs).toHaveLength(1);
    expect(logs[0].attributes).toEqual({ 'session.id': 's1', source: 'compact', 'message.uuid': 'prompt-row', 'prompt.id': 'p1', 'ccotel.start.origin': 'hook' });
    expect(metrics.map((point) => point.attributes)).toEqual([{ 'gen_ai.agent.name': 'claude-code', source: 'compact' }]);
  });

  it('leaves a start no hook confirmed as the transcript told it', () => {
    const { logs, metrics } = encode([start, { kind: 'SessionStartConfirmed', sessionId: 's1', messageUuid: 'another-prompt', source: 'compact' }]);
    expect(logs[0].attributes).toEqual({ 'session.id': 's1', source: 'resume', 'message.uuid': 'prompt-row', 'prompt.id': 'p1' });
    expect(metrics.map((point) => point.attributes)).toEqual([{ 'gen_ai.agent.name': 'claude-code', source: 'resume' }]);
  });

  it('gives a start only the hook told at a prompt the id the transcript gives the same start', () => {
    const fromHook = encode([{ kind: 'HookSessionStarted', sessionId: 's1', source: 'clear', timeMs: 5, messageUuid: 'prompt-row', firedAtNs: '1'.padStart(20, '0') }]);
    expect(fromHook.logs.map((log) => [log.id, log.attributes])).toEqual([[logIdOf(EVENTS.sessionStarted, sessionStartSeed('s1', 'prompt-row')), { 'session.id': 's1', source: 'clear', 'ccotel.start.origin': 'hook' }]]);
    expect(fromHook.logs[0].id).toBe(encode([start]).logs[0].id);
  });
});
