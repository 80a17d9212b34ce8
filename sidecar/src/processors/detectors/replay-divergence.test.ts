// replay_divergence's turn re-run: an interrupted prompt run again after a resume. The facts it keeps are only
// those of sessions with an interrupted turn: a backfill of a long history leaves no facts for the rest.
import { describe, expect, it } from 'vitest';
import type { TurnEnded } from '../../events.js';
import { FailureModeDetector } from './index.js';

const T0 = Date.parse('2026-10-01T12:00:00Z');

function turn(sessionId: string, promptText: string, outcome: string, startMs: number): TurnEnded {
  return { kind: 'TurnEnded', traceId: '1'.repeat(32), spanId: '2'.repeat(16), sessionId, messageUuid: `uuid-${startMs}`, promptText, outcome, startMs, endMs: startMs + 1_000 };
}

describe('replay_divergence: a turn re-run after a resume', () => {
  it('keeps no facts for sessions whose turns all completed', () => {
    const detector = new FailureModeDetector({ idleMs: 60_000 });
    detector.observe(Array.from({ length: 50 }, (_, index) => turn(`session-${index}`, 'build it', 'completed', T0 + index)));
    expect(detector.facts.sessions.size).toBe(0);
    expect(detector.drain().events).toEqual([]);
  });

  it('tells the re-run of an interrupted prompt after a resume, and nothing without the resume', () => {
    const detector = new FailureModeDetector({ idleMs: 60_000 });
    detector.observe([turn('resumed', 'deploy', 'interrupted', T0), turn('not-resumed', 'deploy', 'interrupted', T0)]);
    expect([...detector.facts.sessions.keys()].sort()).toEqual(['not-resumed', 'resumed']);
    detector.facts.session('resumed').resumedAtMs.push(T0 + 60_000);
    detector.observe([turn('resumed', 'deploy', 'completed', T0 + 120_000), turn('not-resumed', 'deploy', 'completed', T0 + 120_000)]);
    const detected = detector.drain().events.filter((event) => event.kind === 'FailureDetected');
    expect(detected.map((event) => [event.sessionId, event.mode, event.cause])).toEqual([['resumed', 'replay_divergence', 'turn_rerun']]);
  });
});
