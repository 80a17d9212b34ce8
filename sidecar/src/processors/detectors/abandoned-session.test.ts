import { describe, expect, it } from 'vitest';
import { detectAbandonedSessions } from './abandoned-session.js';
import type { Facts, SessionFacts } from './facts.js';

function factsWith(session: Partial<SessionFacts>): Facts {
  const full: SessionFacts = { id: 's1', hooked: true, lastEventMs: 0, endsUntold: false, resumedAtMs: [], agents: new Map(), abandoned: false, openCalls: new Set(), interruptedPrompts: new Set(), ...session };
  return { sessions: new Map([[full.id, full]]) } as unknown as Facts;
}

describe('abandoned_session from silence', () => {
  const idleMs = 30 * 60_000;
  const lastEventMs = Date.parse('2026-10-01T12:00:00Z');

  it('is stamped when the idle time ran out after the last event, not when it was noticed (backfill = live)', () => {
    const noticedLater = lastEventMs + 40 * 86_400_000;
    const [detection] = detectAbandonedSessions(undefined, factsWith({ lastEventMs }), noticedLater, idleMs);
    expect(detection).toMatchObject({ mode: 'abandoned_session', cause: 'no_session_end', timeMs: lastEventMs + idleMs });
  });

  it('is not reported before the idle time, nor for a session that ended or was never hooked', () => {
    expect(detectAbandonedSessions(undefined, factsWith({ lastEventMs }), lastEventMs + idleMs - 1, idleMs)).toEqual([]);
    expect(detectAbandonedSessions(undefined, factsWith({ lastEventMs, endedAtMs: lastEventMs }), lastEventMs + 2 * idleMs, idleMs)).toEqual([]);
    expect(detectAbandonedSessions(undefined, factsWith({ lastEventMs, hooked: false }), lastEventMs + 2 * idleMs, idleMs)).toEqual([]);
  });

  it('of an agent release that fires no SessionEnd (Codex 0.130): not after its turn\'s Stop, only in the middle of a turn', () => {
    const silentAfter = (lastHook: string) => detectAbandonedSessions(undefined, factsWith({ lastEventMs, endsUntold: true, lastHook }), lastEventMs + 2 * idleMs, idleMs);
    expect(silentAfter('Stop')).toEqual([]);
    expect(silentAfter('PreToolUse')).toMatchObject([{ mode: 'abandoned_session', cause: 'no_session_end' }]);
  });
});
