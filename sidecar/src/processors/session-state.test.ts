import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HookCorrelator } from './correlate-hooks.js';
import { SessionStateTracker } from './session-state.js';
import { encode } from './encode/index.js';

const FIXTURES = join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'real');

/** The real hook payloads of a recorded run, in firing order, through the hook correlator (HookFired) into the tracker. */
function statesOf(scenario: string) {
  const tracker = new SessionStateTracker();
  const hooks = new HookCorrelator({ contentLevel: 'none' });
  const dir = join(FIXTURES, scenario, 'hooks');
  readdirSync(dir)
    .sort()
    .forEach((name, index) => {
      const firedAtMs = 1_790_000_000_000 + index * 1000;
      hooks.add({ file: name, firedAtMs, firedAtNs: String(firedAtMs * 1e6), hookPid: 1, payload: JSON.parse(readFileSync(join(dir, name), 'utf8')), ack: () => {} });
    });
  tracker.observe(hooks.drain().events);
  return { tracker, logs: encode(tracker.drain().events).logs };
}

describe('SessionStateTracker', () => {
  it('follows a session through a resume: idle, running, idle, ended, resumed, running, idle, ended', () => {
    const { logs } = statesOf('resume');
    expect(logs.map((log) => log.attributes.state)).toEqual(['idle', 'running', 'idle', 'ended', 'resumed', 'running', 'idle', 'ended']);
    expect(logs[3].attributes).toMatchObject({ previous_state: 'idle', reason: 'other' });
    expect(logs.every((log) => log.eventName === 'ccotel.session.state_changed')).toBe(true);
    expect(new Set(logs.map((log) => log.id)).size).toBe(logs.length);
  });

  it('waits for input while a permission is asked', () => {
    const { logs } = statesOf('permission-denied');
    expect(logs.map((log) => log.attributes.state)).toEqual(['idle', 'running', 'waiting_for_input', 'running', 'waiting_for_input', 'idle', 'ended']);
  });

  it('marks a session abandoned when the detector says so', () => {
    const tracker = new SessionStateTracker();
    tracker.observe([{ kind: 'FailureDetected', id: 'x', timeMs: 5, sessionId: 's1', mode: 'abandoned_session', cause: 'tty_gone', traceId: '', spanId: '' }]);
    const [log] = encode(tracker.drain().events).logs;
    expect(log.attributes).toMatchObject({ 'session.id': 's1', state: 'abandoned', reason: 'tty_gone' });
  });
});
