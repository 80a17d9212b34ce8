import { describe, expect, it } from 'vitest';
import type { CorrelationEvent, TurnEnded } from '../../events.js';
import { EVENTS } from '../../semconv.js';
import { encode } from './index.js';

const turn = (spanId: string): TurnEnded => ({
  kind: 'TurnEnded', traceId: 't'.repeat(32), spanId, sessionId: 's1', messageUuid: `prompt-${spanId}`, promptText: 'go on', outcome: 'completed', startMs: 0, endMs: 10,
  compactions: spanId === 'b'.repeat(16) ? [{ timeMs: 5, trigger: 'auto', preTokens: 1000 }] : [],
});

describe('encoding turns', () => {
  it('adds the hooks joined onto a span of the round as its events, in time order, and a StopFailure as its error', () => {
    const spanId = 'b'.repeat(16);
    const events: CorrelationEvent[] = [
      turn(spanId),
      turn('c'.repeat(16)),
      { kind: 'HookAttached', spanId, event: { name: 'Stop', timeMs: 9, attributes: {} } },
      { kind: 'HookAttached', spanId, event: { name: 'UserPromptSubmit', timeMs: 1, attributes: {} } },
      { kind: 'HookAttached', spanId, event: { name: 'StopFailure', timeMs: 10, attributes: {} }, failure: 'rate_limit' },
    ];
    const { spans } = encode(events);
    expect(spans[0].events.map((event) => event.name)).toEqual(['UserPromptSubmit', 'compaction', 'Stop', 'StopFailure']);
    expect(spans[0]).toMatchObject({ status: 'error', statusMessage: 'rate_limit' });
    expect(spans[1]).toMatchObject({ status: 'unset', events: [] });
  });

  it('makes no prompt record for a turn whose prompt was not read, and marks its span so', () => {
    const { spans, logs } = encode([{ ...turn('d'.repeat(16)), promptSeen: false }]);
    expect(spans[0].attributes['ccotel.turn.prompt_seen']).toBe(false);
    expect(logs.map((log) => log.eventName)).toEqual([EVENTS.turnEnded]);
    const seen = encode([turn('d'.repeat(16))]);
    expect(seen.spans[0].attributes['ccotel.turn.prompt_seen']).toBeUndefined();
    expect(seen.logs.map((log) => log.eventName)).toEqual([EVENTS.promptSubmitted, EVENTS.turnEnded]);
  });

  it('names the turn of another agent after it, with its provider and its version', () => {
    const { spans } = encode([{ ...turn('e'.repeat(16)), agent: 'codex', version: '0.171.0' }, turn('f'.repeat(16))]);
    expect(spans.map((span) => [span.name, span.attributes['gen_ai.agent.name'], span.attributes['gen_ai.provider.name']])).toEqual([
      ['invoke_agent codex', 'codex', 'openai'],
      ['invoke_agent claude-code', 'claude-code', 'anthropic'],
    ]);
    expect(spans[0].attributes['ccotel.codex.version']).toBe('0.171.0');
    expect(spans[0].attributes['ccotel.claude_code.version']).toBeUndefined();
  });
});
