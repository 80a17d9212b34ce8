import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerTelemetryCommands } from '../commands/telemetry.js';
import { DEFAULTS } from '../config.js';

let home: string;
let output: string;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'ccotel-telemetry-install-'));
  output = '';
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const env = (extra: Record<string, string> = {}) => ({ HOME: home, PATH: process.env.PATH, CCOTEL_CONFIG: 'none', CCOTEL_STATE_DIR: join(home, 'state'), ...extra });
const settingsPath = () => join(home, '.claude', 'settings.json');
const settingsText = () => readFileSync(settingsPath(), 'utf8');
const settingsEnv = () => (JSON.parse(settingsText()) as { env?: Record<string, string> }).env;

function ccotel(args: string[], extra: Record<string, string> = {}): void {
  const program = new Command('ccotel').exitOverride().configureOutput({ writeErr: (s) => (output += s) });
  registerTelemetryCommands(program, { env: env(extra), out: (s) => (output += s) });
  program.parse(args, { from: 'user' });
}

/** A user's settings, 4-space indented, with env of their own and a big number JSON.parse would round. */
const USER_TEXT = `{
    "model": "opus",
    "cleanupPeriodDays": 12345678901234567890,
    "env": {
        "ANTHROPIC_MODEL": "claude-opus-5-5",
        "OTEL_METRICS_EXPORTER": "otlp"
    },
    "permissions": { "allow": ["Bash(npm test)"] }
}
`;

describe('install-telemetry / uninstall-telemetry', () => {
  it("writes the env that sends Claude Code's telemetry to the receiver, content gates off, and keeps the rest of the file", () => {
    mkdirSync(join(home, '.claude'));
    writeFileSync(settingsPath(), USER_TEXT);
    ccotel(['install-telemetry']);
    expect(settingsEnv()).toEqual({
      ANTHROPIC_MODEL: 'claude-opus-5-5',
      OTEL_METRICS_EXPORTER: 'otlp',
      CLAUDE_CODE_ENABLE_TELEMETRY: '1',
      OTEL_LOGS_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${DEFAULTS.nativeTelemetryPort}`,
    });
    expect(settingsText()).toContain('"cleanupPeriodDays": 12345678901234567890');
    expect(settingsText()).toContain('    "model": "opus",');
    // Again: nothing to do.
    output = '';
    ccotel(['install-telemetry']);
    expect(output).toContain('already as wanted');

    ccotel(['uninstall-telemetry']);
    // The user's own OTEL_METRICS_EXPORTER was there before: it stays.
    expect(settingsText()).toBe(USER_TEXT);
  });

  it('traces, JSON, the content gates and the port only when asked; a file that was not there is made and emptied again', () => {
    ccotel(['install-telemetry', '--traces', '--protocol', 'http/json', '--log-tool-details'], { CCOTEL_NATIVE_TELEMETRY_PORT: '24318' });
    expect(settingsEnv()).toMatchObject({
      OTEL_TRACES_EXPORTER: 'otlp',
      CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: '1',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:24318',
      OTEL_LOG_TOOL_DETAILS: '1',
    });
    expect(settingsEnv()).not.toHaveProperty('OTEL_LOG_USER_PROMPTS');
    ccotel(['uninstall-telemetry']);
    expect(JSON.parse(settingsText())).toEqual({});
  });

  it("leaves an endpoint of the user's unless --replace, and gives it back on uninstall; a value changed since is left", () => {
    mkdirSync(join(home, '.claude'));
    writeFileSync(settingsPath(), JSON.stringify({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example:4318', CLAUDE_CODE_ENABLE_TELEMETRY: '0' } }, null, 2));
    ccotel(['install-telemetry']);
    expect(settingsEnv()!.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('https://collector.example:4318');
    expect(output).toMatch(/env\.OTEL_EXPORTER_OTLP_ENDPOINT is "https:\/\/collector\.example:4318"; left as it is/);
    ccotel(['install-telemetry', '--replace']);
    expect(settingsEnv()).toMatchObject({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${DEFAULTS.nativeTelemetryPort}`, CLAUDE_CODE_ENABLE_TELEMETRY: '1' });
    // The user edits one of ccotel's keys meanwhile.
    const edited = JSON.parse(settingsText());
    edited.env.OTEL_LOGS_EXPORTER = 'console';
    writeFileSync(settingsPath(), JSON.stringify(edited, null, 2));
    output = '';
    ccotel(['uninstall-telemetry']);
    expect(settingsEnv()).toEqual({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example:4318', CLAUDE_CODE_ENABLE_TELEMETRY: '0', OTEL_LOGS_EXPORTER: 'console' });
    expect(output).toContain('env.OTEL_LOGS_EXPORTER was changed since install-telemetry wrote it; left as it is');
  });

  it('refuses without a receiver port, writing nothing', () => {
    expect(() => ccotel(['install-telemetry'], { CCOTEL_NATIVE_TELEMETRY_PORT: '0' })).toThrow();
    expect(output).toContain('native_telemetry_port is 0');
    expect(existsSync(settingsPath())).toBe(false);
  });
});
