import { describe, expect, it } from 'vitest';
import type { CorrelationEvent, SettingsChangeTold } from '../events.js';
import type { RulesInForce, SettingsChanged } from '../events/settings.js';
import { SettingsJoin } from './correlate-settings.js';
import { EMPTY_VIEW } from '../sources/settings-view.js';

const NOW = Date.UTC(2026, 11, 4, 12);
const change = (path: string, scope: SettingsChanged['scope'], fromMs = NOW): SettingsChanged =>
  ({ path, scope, fromMs, present: true, view: EMPTY_VIEW, fingerprint: 'f1', changes: [] });
const turn = (sessionId: string, cwd: string, endMs: number): CorrelationEvent =>
  ({ kind: 'TurnEnded', traceId: 't', spanId: `${sessionId}-${endMs}`, sessionId, messageUuid: 'm', promptText: '', outcome: 'completed', startMs: endMs - 1_000, endMs, place: { cwd } });
const configChange = (sessionId: string, filePath: string, timeMs: number): CorrelationEvent =>
  ({ kind: 'HookFired', name: 'ConfigChange', sessionId, timeMs, attributes: { file_path: filePath, source: 'project_settings' }, file: `${timeMs}.json` });
const rules: RulesInForce = { fingerprint: 'r1', view: EMPTY_VIEW, files: [] };

function told(join: SettingsJoin): SettingsChangeTold[] {
  return join.drain().events.filter((event): event is SettingsChangeTold => event.kind === 'SettingsChangeTold');
}

describe('settings join', () => {
  it('names the sessions that ran under a changed file, and the one whose ConfigChange hook told it', () => {
    const watched: string[] = [];
    const join = new SettingsJoin({ watchProject: (dir) => watched.push(dir), rulesAt: () => rules });
    join.observe([
      turn('in-project', '/src/app', NOW - 60_000),
      turn('elsewhere', '/src/other', NOW - 60_000),
      turn('long-ago', '/src/app', NOW - 3 * 3_600_000),
      configChange('in-project', '/src/app/.claude/settings.json', NOW + 300),
    ]);
    expect(watched).toEqual(['/src/app', '/src/other', '/src/app']);
    join.add(change('/src/app/.claude/settings.json', 'project'), () => {});
    join.add(change('/home/dev/.claude/settings.json', 'user'), () => {});
    expect(told(join).map(({ change: { scope }, sessions, toldBySession }) => ({ scope, sessions, toldBySession }))).toEqual([
      { scope: 'project', sessions: ['in-project'], toldBySession: 'in-project' },
      { scope: 'user', sessions: ['elsewhere', 'in-project'], toldBySession: undefined },
    ]);
  });

  it('marks the first turn of a session under a fingerprint, not the next ones', () => {
    const join = new SettingsJoin({ watchProject: () => {}, rulesAt: () => rules });
    join.observe([turn('s', '/src/app', NOW), turn('s', '/src/app', NOW + 60_000)]);
    const applied = join.drain().events.flatMap((event) => (event.kind === 'RulesApplied' ? [event.firstInSession] : []));
    expect(applied).toEqual([true, false]);
  });

  it('gives no fingerprint to a turn whose rules are not known', () => {
    const join = new SettingsJoin({ watchProject: () => {}, rulesAt: () => undefined });
    join.observe([turn('s', '/src/app', NOW)]);
    expect(join.drain().events).toEqual([]);
  });
});
