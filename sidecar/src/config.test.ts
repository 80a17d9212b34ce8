import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

const env = { HOME: '/nonexistent', CCOTEL_CONFIG: 'none' };

describe('scan_interval_ms', () => {
  it('defaults to 15 s; the environment beats the default and the flag beats both', () => {
    expect(loadConfig({}, env).scanIntervalMs).toBe(15_000);
    expect(loadConfig({}, { ...env, CCOTEL_SCAN_INTERVAL_MS: '2000' }).scanIntervalMs).toBe(2_000);
    expect(loadConfig({ scanIntervalMs: 500 }, { ...env, CCOTEL_SCAN_INTERVAL_MS: '2000' }).scanIntervalMs).toBe(500);
  });

  it('refuses an interval that is not a whole number of ms ≥ 100', () => {
    expect(() => loadConfig({ scanIntervalMs: 10 }, env)).toThrow(ConfigError);
    expect(() => loadConfig({}, { ...env, CCOTEL_SCAN_INTERVAL_MS: 'often' })).toThrow(/^CCOTEL_SCAN_INTERVAL_MS must be a whole number of ms ≥ 100, not "often"$/);
  });
});

describe('flush_interval_ms', () => {
  it('defaults to 200 ms with a store and to 5 s OTLP only; the environment beats the default', () => {
    expect(loadConfig({ store: '/tmp/store' }, env).flushIntervalMs).toBe(200);
    expect(loadConfig({ store: 'none', otlp: 'http://127.0.0.1:4318' }, env).flushIntervalMs).toBe(5_000);
    expect(loadConfig({ store: 'none' }, { ...env, CCOTEL_FLUSH_INTERVAL_MS: '1000' }).flushIntervalMs).toBe(1_000);
  });

  it('refuses an interval that is not a whole number of ms from 10 to 60 000', () => {
    expect(() => loadConfig({}, { ...env, CCOTEL_FLUSH_INTERVAL_MS: '5' })).toThrow(/^CCOTEL_FLUSH_INTERVAL_MS must be a whole number of ms from 10 to 60000, not "5"$/);
    expect(() => loadConfig({}, { ...env, CCOTEL_FLUSH_INTERVAL_MS: '120000' })).toThrow(/^CCOTEL_FLUSH_INTERVAL_MS must be/);
  });
});

describe('ticket_pattern', () => {
  it('is none by default; the file, the environment and the flag give it, in that order of strength', () => {
    expect(loadConfig({}, env).ticketPattern).toBeUndefined();
    const dir = mkdtempSync(join(tmpdir(), 'ccotel-config-'));
    writeFileSync(join(dir, 'config.yaml'), 'ticket_pattern: "FILE-[0-9]+"\n');
    const fileEnv = { ...env, CCOTEL_CONFIG: join(dir, 'config.yaml') };
    expect(loadConfig({}, fileEnv).ticketPattern?.source).toBe('FILE-[0-9]+');
    expect(loadConfig({}, { ...fileEnv, CCOTEL_TICKET_PATTERN: 'ENV-(\\d+)' }).ticketPattern?.source).toBe('ENV-(\\d+)');
    expect(loadConfig({ ticketPattern: '[A-Z]+-\\d+' }, { ...fileEnv, CCOTEL_TICKET_PATTERN: 'x' }).ticketPattern?.exec('feat/AB-12')?.[0]).toBe('AB-12');
  });

  it('refuses what is not a regular expression, naming where it came from', () => {
    expect(() => loadConfig({}, { ...env, CCOTEL_TICKET_PATTERN: '([A-Z' })).toThrow(/^CCOTEL_TICKET_PATTERN must be a regular expression, not "\(\[A-Z"/);
  });
});

describe('codex_home', () => {
  it('defaults to ~/.codex; the file, CODEX_HOME and --codex-home beat it in that order', () => {
    expect(loadConfig({}, env).codexHome).toBe('/nonexistent/.codex');
    const dir = mkdtempSync(join(tmpdir(), 'ccotel-config-'));
    const path = join(dir, 'config.yaml');
    writeFileSync(path, 'codex_home: /from/file\n');
    expect(loadConfig({}, { ...env, CCOTEL_CONFIG: path }).codexHome).toBe('/from/file');
    expect(loadConfig({}, { ...env, CCOTEL_CONFIG: path, CODEX_HOME: '/from/env' }).codexHome).toBe('/from/env');
    expect(loadConfig({ codexHome: '/from/flag' }, { ...env, CODEX_HOME: '/from/env' }).codexHome).toBe('/from/flag');
  });
});

describe('insight_slow_tool_ms', () => {
  it('is at least 1 000 ms: the insight slots keep the calls from there up', () => {
    expect(loadConfig({}, { ...env, CCOTEL_INSIGHT_SLOW_TOOL_MS: '1000' }).insights.slowToolMs).toBe(1_000);
    expect(() => loadConfig({}, { ...env, CCOTEL_INSIGHT_SLOW_TOOL_MS: '999' })).toThrow(/^CCOTEL_INSIGHT_SLOW_TOOL_MS must be a whole number ≥ 1000, not "999"$/);
  });
});

describe('the config file', () => {
  const withFile = (yaml: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'ccotel-config-'));
    const path = join(dir, 'config.yaml');
    writeFileSync(path, yaml);
    return { ...env, CCOTEL_CONFIG: path };
  };

  it('takes every key a setting reads from it, summary_ttl_days included', () => {
    expect(loadConfig({}, withFile('summary_ttl_days: 90\nraw_ttl_days: 7\n'))).toMatchObject({ summaryTtlDays: 90, rawTtlDays: 7 });
  });

  it('refuses an unknown key, naming the nearest known one', () => {
    expect(() => loadConfig({}, withFile('summary_ttl_day: 90\n'))).toThrow(/unknown key "summary_ttl_day" \(did you mean "summary_ttl_days"\?\)$/);
  });
});
