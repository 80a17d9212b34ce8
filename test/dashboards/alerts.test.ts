/**
 * Every alert rule against its fixtures (dashboards/alerts/fixtures/<rule>.yml): each positive scenario
 * fires and each negative one does not — evaluated with the Sigma logic on the records, and as the Grafana
 * alert's SQL (macros expanded as the plugin does) on a real ClickHouse holding the same records.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ALERTS_FILE, FIXTURES_DIR, SIGMA_DIR, renderAlertsFile } from '../../dashboards/alerts/src/alerts-file.js';
import { COMMON_LOG_FIELDS, SIDECAR_LOG_FIELDS } from '../../dashboards/alerts/src/fields.js';
import {
  SIDECAR_DOWN, SIDECAR_LAGGING, alertQueries, loadSigmaRules, unescapeProvisioning, type AlertQuery,
} from '../../dashboards/alerts/src/grafana-alerts.js';
import { correlationFires, matches, type DetectionRule, type SigmaRule, type TimedRecord } from '../../dashboards/alerts/src/sigma.js';
import { expandMacros } from '../../dashboards/src/macros.js';
import { otelTablesDdl } from '../../schemas/clickhouse.js';
import { openTempChdb, rows, runAll, type TempChdb } from '../../schemas/chdb-testing.js';
import { chTime, healthRows, insertHealth } from '../../schemas/corpus.js';
import { MaskProcessor } from '../../sidecar/src/processors/mask.js';
import { createSecretDetector } from '../../sidecar/src/processors/secret-detector.js';
import { encode } from '../../sidecar/src/processors/encode/index.js';
import { diffViews, EMPTY_VIEW, settingsView, viewFingerprint } from '../../sidecar/src/sources/settings-view.js';
import type { SettingsVersion } from '../../sidecar/src/events/settings.js';
import { LOG_COLUMNS, RowMapper, rowObject } from '../../sidecar/src/sinks/clickhouse-rows.js';
import { plantSecret } from '../generators/secrets.js';
import { base, correlate, MAIN, prompt, SESSION } from '../generators/transcript-rows.js';

const NOW = Date.now();
const rules = loadSigmaRules(SIGMA_DIR);
const byName = new Map(rules.map((r) => [r.name, r]));
const detections = new Map(rules.filter((r): r is DetectionRule => r.kind === 'detection').map((r) => [r.name, r]));

type FixtureEntry = Record<string, unknown>;
type Scenario = FixtureEntry | FixtureEntry[];
const fixtures = (name: string) =>
  parseYaml(readFileSync(join(FIXTURES_DIR, `${name}.yml`), 'utf8')) as { positive: Scenario[]; negative: Scenario[] };

let sequence = 0;
/** A scenario as flat records (repeat / every_s / duplicate expanded), oldest first. */
function records(scenario: Scenario): TimedRecord[] {
  return (Array.isArray(scenario) ? scenario : [scenario]).flatMap((entry) => {
    const { repeat = 1, every_s = 0, duplicate = false, ago_s = 0, note: _note, ...fields } = entry as Record<string, unknown>;
    return Array.from({ length: Number(repeat) }, (_, i) => {
      const record: TimedRecord = {
        ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, String(v)])),
        'ccotel.record.id': `rec-${++sequence}`,
        time: String(NOW - (Number(ago_s) - i * Number(every_s)) * 1000),
      };
      return duplicate ? [record, record] : [record];
    }).flat();
  });
}

const RESOURCE = new Set(['host.name', 'user.name', 'service.name']);
const logRow = (record: TimedRecord) => {
  const { time, 'event.name': eventName, body, severity, ...rest } = record;
  const attributes = Object.fromEntries(Object.entries(rest).filter(([k]) => !RESOURCE.has(k)));
  const resource = Object.fromEntries(Object.entries(rest).filter(([k]) => RESOURCE.has(k)));
  return {
    Timestamp: chTime(Number(time)), EventName: eventName ?? '', Body: body ?? '', SeverityText: severity ?? 'INFO',
    ServiceName: 'ccotel', ResourceAttributes: { 'service.name': 'ccotel', ...resource }, LogAttributes: attributes,
  };
};

function sigmaFires(rule: SigmaRule, scenario: TimedRecord[]): boolean {
  return rule.kind === 'detection'
    ? scenario.some((r) => matches(rule, r))
    : correlationFires(rule, detections, scenario).length > 0;
}

let store: TempChdb;
beforeAll(async () => {
  store = openTempChdb();
  await runAll(store.client, otelTablesDdl());
});
afterAll(async () => {
  await store?.close();
});

/** The value the Grafana rule's query returns with only these rows in the store. */
async function alertValue(alert: AlertQuery, logs: Record<string, unknown>[], load?: () => Promise<void>): Promise<number> {
  await store.client.command({ query: 'TRUNCATE TABLE otel_logs' });
  await store.client.command({ query: 'TRUNCATE TABLE otel_metrics_gauge' });
  if (logs.length) await store.client.insert({ table: 'otel_logs', values: logs, format: 'JSONEachRow' });
  await load?.();
  const sql = expandMacros(alert.rawSql, { fromMs: NOW - alert.rangeSeconds * 1000, toMs: NOW + 1000, intervalMs: 60_000 });
  const [row] = await rows(store.client, sql);
  return Number(Object.values(row ?? { v: 0 })[0]);
}

const provisioned = () => {
  const doc = parseYaml(readFileSync(ALERTS_FILE, 'utf8')) as {
    groups: Array<{ rules: Array<{ uid: string; title: string; data: Array<{ relativeTimeRange?: { from: number }; model: { rawSql?: string; conditions?: Array<{ evaluator: { params: number[] } }> } }> }> }>;
  };
  return doc.groups[0].rules;
};

describe('alert rule files', () => {
  it('the Grafana provisioning file is current (run `npm run dashboards`)', () => {
    expect(readFileSync(ALERTS_FILE, 'utf8')).toBe(renderAlertsFile());
  });

  it('covers every alert the issue asks for, with uids Grafana accepts', () => {
    const titles = provisioned().map((r) => r.title);
    expect(titles).toHaveLength(rules.filter((r) => r.level !== 'informational').length + 2);
    for (const pattern of [/secret/i, /permission blocks/i, /recursive delete/i, /piped into a shell/i, /credential file/i,
      /history/i, /orphaned/i, /approval/i, /abandoned repeatedly/i, /bypassPermissions mode/, /sidecar down/i, /sidecar lagging/i,
      /broad allow rule added/i, /deny rule removed/i, /default mode set to bypassPermissions/, /hooks disabled or ccotel's hook removed/i,
      /telemetry settings changed/i, /API endpoint changed/i, /first seen with risky permissions/i]) {
      expect(titles.some((t) => pattern.test(t)), String(pattern)).toBe(true);
    }
    for (const rule of provisioned()) expect(rule.uid.length).toBeLessThanOrEqual(40);
    for (const rule of provisioned()) expect(rule.data[0].model.rawSql).not.toMatch(/(^|[^$])\$__/);
  });

  it('use only fields the sidecar emits on the records they select', () => {
    for (const rule of detections.values()) {
      const eventNames = Object.values(rule.detection).flatMap((s) =>
        typeof s === 'object' && s !== null ? [(s as Record<string, string>)['event.name']].filter(Boolean) : []);
      expect(eventNames.length, rule.name).toBeGreaterThan(0);
      for (const eventName of eventNames) {
        const allowed = new Set([...COMMON_LOG_FIELDS, ...(SIDECAR_LOG_FIELDS[eventName] ?? [])]);
        for (const field of Object.values(rule.detection).flatMap((s) => typeof s === 'object' && s ? Object.keys(s) : [])) {
          expect(allowed.has(field.split('|')[0]), `${rule.name}: ${field} on ${eventName}`).toBe(true);
        }
      }
    }
  });

  it('the secret rule fires on the record the sidecar itself emits when it masks a secret', async () => {
    const secret = plantSecret('github-token');
    const processor = new MaskProcessor(createSecretDetector(), randomBytes(32));
    const batch = await processor.process({
      spans: [{ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), parentSpanId: '', name: 'execute_tool Bash', kind: 'internal',
        startMs: NOW, endMs: NOW + 1, status: 'unset', statusMessage: '',
        attributes: { 'session.id': 's1', tool_use_id: 'toolu_1', 'ccotel.tool.input': secret.text }, events: [] }],
      logs: [], metrics: [],
    });
    const [detected] = batch.logs;
    const row = rowObject(LOG_COLUMNS, new RowMapper({ 'service.name': 'ccotel', 'host.name': 'dev-1' }, '0.0.0').log(detected)) as {
      EventName: string; Body: string; LogAttributes: Record<string, string>; ResourceAttributes: Record<string, string>;
    };
    for (const field of SIDECAR_LOG_FIELDS['ccotel.secret.detected'].filter((f) => f !== 'ccotel.source.file')) {
      expect(Object.keys(row.LogAttributes), field).toContain(field);
    }
    const record: TimedRecord = { ...row.LogAttributes, ...row.ResourceAttributes, 'event.name': row.EventName, body: row.Body, time: String(NOW) };
    expect(matches(detections.get('ccotel_secret_detected')!, record)).toBe(true);
    const alert = alertQueries(rules).find((a) => a.title === byName.get('ccotel_secret_detected')!.title)!;
    expect(await alertValue(alert, [{ ...row, Timestamp: chTime(NOW - 1000) }])).toBe(1);
  });
  it('the permission-mode and shell rules fire on the records the correlator makes of a transcript', async () => {
    const batch = correlate([[MAIN, [
      { type: 'permission-mode', permissionMode: 'default', sessionId: SESSION },
      prompt('<bash-input>cat ~/.aws/credentials</bash-input>'),
      { ...base(), type: 'user', message: { role: 'user', content: 'go on' }, permissionMode: 'bypassPermissions' },
    ]]]);
    const mapper = new RowMapper({ 'service.name': 'ccotel', 'host.name': 'dev-1' }, '0.0.0');
    const fired = (ruleName: string) => batch.logs.filter((log) => {
      const row = rowObject(LOG_COLUMNS, mapper.log(log)) as { EventName: string; Body: string; LogAttributes: Record<string, string>; ResourceAttributes: Record<string, string> };
      return matches(detections.get(ruleName)!, { ...row.LogAttributes, ...row.ResourceAttributes, 'event.name': row.EventName, body: row.Body, time: String(NOW) });
    }).length;
    expect(fired('ccotel_permission_mode_bypass')).toBe(1);
    expect(fired('ccotel_shell_credential_file_read')).toBe(1);
  });

  it('the settings rules fire on the records the sidecar makes of a settings change, and not on a benign one', () => {
    const ccotelHook = { type: 'command', command: "'/home/dev/.local/state/ccotel/bin/ccotel-hook.sh' '/home/dev/.local/state/ccotel/spool'" };
    const before = { permissions: { allow: ['Read'], deny: ['Bash(rm:*)'] }, hooks: { PreToolUse: [{ hooks: [ccotelHook] }] } };
    const version = (settings: unknown, fromMs: number): SettingsVersion => {
      const view = settingsView(settings, () => 'digest');
      return { path: '/home/dev/project/.claude/settings.json', scope: 'project', fromMs, present: true, view, fingerprint: viewFingerprint(view) };
    };
    const mapper = new RowMapper({ 'service.name': 'ccotel', 'host.name': 'dev-1' }, '0.0.0');
    /** The settings rules that fire on the record of a change from `before` to `after` (null: a first look at `after`). */
    const firing = (after: unknown, from: unknown = before) => {
      const previous = from === null ? undefined : version(from, NOW - 60_000);
      const next = version(after, NOW);
      const changes = diffViews(previous?.view ?? EMPTY_VIEW, next.view);
      const [log] = encode([{ kind: 'SettingsChangeTold', change: { ...next, changes, ...(previous ? { previous } : {}) }, sessions: [] }]).logs;
      const row = rowObject(LOG_COLUMNS, mapper.log(log)) as { EventName: string; Body: string; LogAttributes: Record<string, string>; ResourceAttributes: Record<string, string> };
      const record: TimedRecord = { ...row.LogAttributes, ...row.ResourceAttributes, 'event.name': row.EventName, body: row.Body, time: String(NOW) };
      return [...detections.values()].filter((rule) => rule.name.startsWith('ccotel_settings_') && matches(rule, record)).map((rule) => rule.name).sort();
    };
    expect(firing({ ...before, permissions: { ...before.permissions, allow: ['Read', 'Bash(*)'] } })).toEqual(['ccotel_settings_broad_allow']);
    expect(firing({ ...before, permissions: { allow: ['Read'] } })).toEqual(['ccotel_settings_deny_removed']);
    expect(firing({ ...before, permissions: { ...before.permissions, defaultMode: 'bypassPermissions' } })).toEqual(['ccotel_settings_bypass_default_mode']);
    expect(firing({ ...before, hooks: {} })).toEqual(['ccotel_settings_hooks_disabled']);
    expect(firing({ ...before, disableAllHooks: true })).toEqual(['ccotel_settings_hooks_disabled']);
    expect(firing({ ...before, enabledPlugins: { 'ccotel@ccotel': true } }, { ...before, enabledPlugins: { 'ccotel@ccotel': false } })).toEqual([]);
    expect(firing({ ...before, enabledPlugins: { 'ccotel@ccotel': false } }, { ...before, enabledPlugins: { 'ccotel@ccotel': true } })).toEqual(['ccotel_settings_hooks_disabled']);
    expect(firing({ ...before, env: { ANTHROPIC_BASE_URL: 'https://proxy.example' } })).toEqual(['ccotel_settings_api_endpoint_changed']);
    expect(firing({ ...before, env: { CLAUDE_CODE_ENABLE_TELEMETRY: '0' } })).toEqual(['ccotel_settings_telemetry_changed']);
    expect(firing({ ...before, permissions: { ...before.permissions, allow: ['Read', 'Bash(npm test:*)'], defaultMode: 'acceptEdits' }, env: { FOO: '1' } })).toEqual([]);
    expect(firing({ permissions: { defaultMode: 'bypassPermissions' } }, null)).toEqual(['ccotel_settings_first_seen_risky']);
    expect(firing(before, null)).toEqual([]);
  });
});

for (const rule of rules) {
  describe(rule.name, () => {
    const { positive, negative } = fixtures(rule.name);
    it('has positive and negative fixtures', () => {
      expect(positive.length).toBeGreaterThan(0);
      expect(negative.length).toBeGreaterThan(0);
    });

    it('Sigma logic: fires on every positive scenario and on no negative one', () => {
      for (const scenario of positive) expect(sigmaFires(rule, records(scenario)), JSON.stringify(scenario)).toBe(true);
      for (const scenario of negative) expect(sigmaFires(rule, records(scenario)), JSON.stringify(scenario)).toBe(false);
    });

    if (rule.level === 'informational') return;
    it('Grafana alert SQL on ClickHouse: fires on every positive scenario and on no negative one', async () => {
      const alert = alertQueries(rules).find((a) => a.uid === rule.id)!;
      const fromFile = provisioned().find((r) => r.uid === rule.id)!;
      expect(unescapeProvisioning(fromFile.data[0].model.rawSql!)).toBe(alert.rawSql);
      expect(fromFile.data[0].relativeTimeRange?.from).toBe(alert.rangeSeconds);
      expect(fromFile.data[2].model.conditions?.[0].evaluator.params).toEqual([alert.above]);
      for (const scenario of positive) {
        expect(await alertValue(alert, records(scenario).map(logRow)), JSON.stringify(scenario)).toBeGreaterThan(alert.above);
      }
      for (const scenario of negative) {
        expect(await alertValue(alert, records(scenario).map(logRow)), JSON.stringify(scenario)).toBeLessThanOrEqual(alert.above);
      }
    });
  });
}

describe('sidecar health alerts', () => {
  const MIN = 60_000;
  const gauge = (host: string, agoMin: number, lagBytes: number) =>
    ({ host, atMs: NOW - agoMin * MIN, lagBytes, unusable: [], exportFailures: 0 });
  const load = (points: ReturnType<typeof gauge>[]) => () => insertHealth(store.client, 'default', healthRows(points));

  it('sidecar down: fires for a host silent for 15 minutes, not for one that reports every minute', async () => {
    const reporting = Array.from({ length: 30 }, (_, i) => gauge('up-host', i, 0));
    expect(await alertValue(SIDECAR_DOWN, [], load([...reporting, gauge('gone-host', 40, 0), gauge('gone-host', 20, 0)]))).toBe(1);
    expect(await alertValue(SIDECAR_DOWN, [], load(reporting))).toBe(0);
  });

  it('sidecar lagging: fires on lag above 10 MiB for the whole window, not on a short burst', async () => {
    const high = 64 * 1024 * 1024;
    const sustained = Array.from({ length: 9 }, (_, i) => gauge('slow', i + 0.5, high));
    expect(await alertValue(SIDECAR_LAGGING, [], load(sustained))).toBeGreaterThan(SIDECAR_LAGGING.above);
    const burst = [...sustained.slice(0, 3), gauge('slow', 6.5, 1024)];
    expect(await alertValue(SIDECAR_LAGGING, [], load(burst))).toBeLessThanOrEqual(SIDECAR_LAGGING.above);
  });
});
