// Issue 37: the web view's session page lists the rules in force at the session's turns and the settings changes
// made while it ran (the records the encoder makes, as the store keeps them), not the changes of other sessions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otelTablesDdl } from '../../../schemas/clickhouse.js';
import { openTempChdb, runAll, type TempChdb } from '../../../schemas/chdb-testing.js';
import { usageTablesDdl } from '../../../schemas/usage.js';
import { encode } from '../processors/encode/index.js';
import { diffViews, EMPTY_VIEW, settingsView, viewFingerprint } from '../sources/settings-view.js';
import type { SettingsChanged } from '../events/settings.js';
import { LOG_COLUMNS, RowMapper, rowObject } from '../sinks/clickhouse-rows.js';
import { UiData } from './data.js';

const NOW = Date.now();

/** A project file first seen with `settings`, as the watcher hands it over. */
function version(settings: unknown, path: string): SettingsChanged {
  const view = settingsView(settings, () => 'digest');
  return { path, scope: 'project', fromMs: NOW, present: true, view, fingerprint: viewFingerprint(view), changes: diffViews(EMPTY_VIEW, view) };
}

describe('the session page and the settings', () => {
  let chdb: TempChdb;

  beforeAll(async () => {
    chdb = openTempChdb();
    await runAll(chdb.client, [...otelTablesDdl({ database: 'default', rawTtlDays: 0 }), ...usageTablesDdl({ database: 'default' })]);
    const ours = version({ permissions: { allow: ['Grep'] } }, '/src/app/.claude/settings.json');
    const theirs = version({ permissions: { allow: ['Glob'] } }, '/src/other/.claude/settings.json');
    const batch = encode([
      { kind: 'SettingsChangeTold', change: ours, sessions: ['s1', 's2'] },
      { kind: 'SettingsChangeTold', change: theirs, sessions: ['s3'] },
      { kind: 'RulesApplied', traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), sessionId: 's1', timeMs: NOW, firstInSession: true,
        rules: { fingerprint: ours.fingerprint, view: ours.view, files: [{ path: ours.path, scope: 'project', fingerprint: ours.fingerprint }] } },
    ]);
    const mapper = new RowMapper({ 'service.name': 'ccotel' }, '0.0.0');
    await chdb.client.insert({ table: 'otel_logs', values: batch.logs.map((log) => rowObject(LOG_COLUMNS, mapper.log(log))), format: 'JSONEachRow' });
  });

  afterAll(() => chdb?.close());

  it('lists its rules and the changes made while it ran', async () => {
    const { logs } = await new UiData(chdb.client).session('s1');
    const settings = logs.filter((log) => log.event.startsWith('ccotel.settings.'));
    expect(settings.map((log) => log.event).sort()).toEqual(['ccotel.settings.changed', 'ccotel.settings.effective']);
    expect(settings.find((log) => log.event === 'ccotel.settings.changed')!.attributes).toMatchObject({ 'ccotel.settings.file': '/src/app/.claude/settings.json', changes: 'permissions.allow added Grep' });
    const other = await new UiData(chdb.client).session('s3');
    expect(other.logs.map((log) => log.attributes['ccotel.settings.file'])).toEqual(['/src/other/.claude/settings.json']);
  });
});
