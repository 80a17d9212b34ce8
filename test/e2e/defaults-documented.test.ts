// Issue 31: the defaults README's configuration table and the commands' --help state are the configuration's own
// (`retention --help` said raw rows are kept 14 days while the code and README said 30).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULTS, INSIGHT_KEYS, loadConfig } from '../../sidecar/src/config.js';
import { assertBuilt, cliEnv, runCli } from '../reliability/cli.js';

const README = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');

/** The default column of README's configuration row for a config-file key. */
function readmeDefault(key: string): string {
  const row = README.split('\n').find((line) => line.startsWith(`| \`${key}\` |`));
  if (!row) throw new Error(`README has no configuration row for ${key}`);
  // | key | environment | flag | default |: the cells after the third bar.
  return row.split('|').slice(4, -1).join('|').trim();
}

/** The numbers a text states, written with digit-group spaces or not (`1 800 000`, `15 000`, `4096`). */
const numbersIn = (text: string) => [...text.matchAll(/\d{1,3}(?:[  ]\d{3})+|\d+/g)].map((match) => Number(match[0].replace(/[  ]/g, '')));

describe('documented defaults', () => {
  it.each([
    ['content_max_length', DEFAULTS.contentMaxLength],
    ['idle_ms', DEFAULTS.idleMs],
    ['scan_interval_ms', DEFAULTS.scanIntervalMs],
    ['raw_ttl_days', DEFAULTS.rawTtlDays],
    ['summary_ttl_days', DEFAULTS.summaryTtlDays],
    ['native_telemetry_port', DEFAULTS.nativeTelemetryPort],
    ...Object.entries(INSIGHT_KEYS).map(([name, key]) => [key, DEFAULTS.insights[name as keyof typeof DEFAULTS.insights]] as [string, number]),
  ])('README states %s = the configuration default', (key, value) => {
    expect(numbersIn(readmeDefault(key))[0]).toBe(value);
  });

  it('README states both flush intervals and the content level as the configuration has them', () => {
    const flush = readmeDefault('flush_interval_ms');
    expect(flush).toMatch(new RegExp(`${DEFAULTS.flushIntervalMs} with a store`));
    expect(numbersIn(flush)).toContain(DEFAULTS.otlpOnlyFlushIntervalMs);
    expect(readmeDefault('content_level')).toMatch(new RegExp(`^\`${DEFAULTS.contentLevel}\``));
  });

  it('README, the configuration and `backfill --help` agree that there is no ticket pattern by default', async () => {
    expect(readmeDefault('ticket_pattern')).toMatch(/^none/);
    expect(loadConfig({}, { HOME: '/nonexistent', CCOTEL_CONFIG: 'none' }).ticketPattern).toBeUndefined();
    assertBuilt();
    const help = (await runCli(['backfill', '--help'], cliEnv('/nonexistent'))).stdout.replace(/\s+/g, ' ');
    expect(help).toMatch(/--ticket-pattern <regex> [^(]*\([^)]*\)[^(]*\(default: none\)/);
  });

  it('README states the Codex home the configuration defaults to', () => {
    expect(readmeDefault('codex_home')).toMatch(/^`~\/\.codex`/);
    expect(loadConfig({}, { HOME: '/h', CCOTEL_CONFIG: 'none' }).codexHome).toBe('/h/.codex');
  });

  it.each([
    ['run', '--idle', DEFAULTS.idleMs],
    ['run', '--scan-interval', DEFAULTS.scanIntervalMs],
    ['run', '--telemetry-port', DEFAULTS.nativeTelemetryPort],
    ['retention', '--raw-ttl-days', DEFAULTS.rawTtlDays],
    ['retention', '--summary-ttl-days', DEFAULTS.summaryTtlDays],
  ])('`%s --help` states the default of %s', async (command, flag, value) => {
    assertBuilt();
    const help = (await runCli([command, '--help'], cliEnv('/nonexistent'))).stdout.replace(/\s+/g, ' ');
    const described = help.slice(help.indexOf(flag), help.indexOf(' --', help.indexOf(flag) + flag.length));
    const stated = /\(default[^)]*?(\d+)[^)]*\)/.exec(described);
    expect(stated, `${command} --help: ${described}`).not.toBeNull();
    expect(Number(stated![1])).toBe(value);
  });
});
