// The edits `install-hooks --agent codex` (and `install-shell`, `install-telemetry --agent codex`) make to Codex's home: hooks.json and config.toml changed in part only, a
// second install changing nothing, a user's own trust entry for the same key left alone, uninstall giving both files
// back byte for byte. (That the real Codex runs the hooks so trusted: test/e2e/codex-hooks.test.ts.)
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CODEX_HOOK_EVENTS, codexHookTrustHash, installCodexHooks, uninstallCodexHooks } from './install-hooks.js';
import { installCodexShell, uninstallCodexShell } from './install-shell.js';
import { installCodexTelemetry, uninstallCodexTelemetry } from './install-telemetry.js';

let home: string;
let codexHome: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'ccotel-codex-install-'));
  codexHome = join(home, 'codex');
  mkdirSync(codexHome);
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const options = () => ({ env: { HOME: home, CCOTEL_STATE_DIR: join(home, 'state'), CCOTEL_CONFIG: 'none' }, codexHome });
const CONFIG = 'model = "gpt-5.1-codex"\n\n[features]\nweb_search = true # theirs\n\n[hooks.state."/elsewhere/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:theirs"';
const HOOKS = { hooks: { PreToolUse: [{ matcher: 'exec_command', hooks: [{ type: 'command', command: 'guard.sh', timeout: 30 }] }] } };
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const read = (name: string) => readFileSync(join(codexHome, name), 'utf8');

describe('install-hooks --agent codex', () => {
  it('adds the spool hook for every event and one trust entry each, keeping the user’s hooks and settings; a second install changes nothing', () => {
    writeFileSync(join(codexHome, 'config.toml'), CONFIG);
    writeFileSync(join(codexHome, 'hooks.json'), JSON.stringify(HOOKS, null, 4));
    installCodexHooks(options());
    const hooks = JSON.parse(read('hooks.json')) as { hooks: Record<string, Array<{ hooks: Array<{ type: string; command: string; timeout: number }> }>> };
    expect(Object.keys(hooks.hooks).sort()).toEqual([...CODEX_HOOK_EVENTS].sort());
    expect(hooks.hooks.PreToolUse[0]).toEqual(HOOKS.hooks.PreToolUse[0]);
    const config = read('config.toml');
    expect(config.startsWith(`${CONFIG}\n\n`)).toBe(true); // their text as it was, its last line closed, one blank line
    // One entry per handler, at its place in hooks.json (PreToolUse: the second group, after theirs).
    const path = realpathSync(join(codexHome, 'hooks.json'));
    const handler = hooks.hooks.PreToolUse[1].hooks[0];
    expect(config).toContain(`[hooks.state.${JSON.stringify(`${path}:pre_tool_use:1:0`)}]\ntrusted_hash = "${codexHookTrustHash('PreToolUse', handler)}"`);
    expect(config.match(/^\[hooks\.state\./gm)).toHaveLength(CODEX_HOOK_EVENTS.length + 1);
    // Codex caps SessionEnd at 3 s and hashes the capped value: the handler says so itself.
    expect(hooks.hooks.SessionEnd[0].hooks[0].timeout).toBe(3);

    const files = readdirSync(codexHome).sort();
    const again = installCodexHooks(options());
    expect(again.map((report) => report.change.changed)).toEqual([false, false]);
    expect(readdirSync(codexHome).sort()).toEqual(files);

    uninstallCodexHooks(options());
    expect(read('config.toml')).toBe(CONFIG);
    expect(JSON.parse(read('hooks.json'))).toEqual(HOOKS);
    // A file ending in a line break (and an empty one) comes back as it was too.
    for (const text of [`${CONFIG}\n`, `${CONFIG}\n\n`, '']) {
      writeFileSync(join(codexHome, 'config.toml'), text);
      installCodexHooks(options());
      expect(read('config.toml')).not.toBe(text);
      uninstallCodexHooks(options());
      expect(read('config.toml')).toBe(text);
    }
  });

  it('hashes a hook as Codex does: the normalized identity as JSON with sorted keys, sha256', () => {
    // The identity Codex hashes for { type: command, command: "echo hi", timeout: 5 } under SessionStart, written out.
    const expected = 'sha256:' + sha256('{"event_name":"session_start","hooks":[{"async":false,"command":"echo hi","timeout":5,"type":"command"}]}');
    expect(codexHookTrustHash('SessionStart', { type: 'command', command: 'echo hi', timeout: 5 })).toBe(expected);
  });

  it('leaves a trust entry the user already has for the same key to them, and says so', () => {
    installCodexHooks(options());
    const path = realpathSync(join(codexHome, 'hooks.json'));
    const key = `${path}:stop:0:0`;
    const theirs = `[hooks.state.${JSON.stringify(key)}]\ntrusted_hash = "sha256:old"\n`;
    writeFileSync(join(codexHome, 'config.toml'), theirs + read('config.toml'));
    const [report] = installCodexHooks(options());
    expect(report.warnings.join('\n')).toContain(key);
    // Once only: a table defined twice makes Codex refuse the whole file.
    expect(read('config.toml').split(JSON.stringify(key)).length - 1).toBe(1);
  });

  it('with --dry-run writes nothing and shows both changes', () => {
    const reports = installCodexHooks({ ...options(), dryRun: true });
    expect(reports.map((report) => report.change.diff.length > 0)).toEqual([true, true]);
    expect(readdirSync(codexHome)).toEqual([]);
  });
});

describe('install-shell --agent codex', () => {
  it('sets BASH_ENV and the log dir in a block of its own, taken out again byte for byte; leaves a policy table that sets them alone', () => {
    writeFileSync(join(codexHome, 'config.toml'), CONFIG);
    installCodexShell(options());
    const config = read('config.toml');
    expect(config.startsWith(`${CONFIG}\n\n`)).toBe(true);
    expect(config).toContain(`[shell_environment_policy.set]\nBASH_ENV = ${JSON.stringify(join(home, 'state', 'bin', 'ccotel-shell.bash'))}\n__ccotel_shell_log_dir = ${JSON.stringify(join(home, 'state', 'shell'))}\n`);
    // With the hooks' block beside it, either comes out alone.
    installCodexHooks(options());
    uninstallCodexShell(options());
    expect(read('config.toml')).not.toContain('shell_environment_policy');
    uninstallCodexHooks(options());
    expect(read('config.toml')).toBe(CONFIG);

    for (const theirs of ['[shell_environment_policy]\ninherit = "core"\nset = { A = "1" }\n', '[shell_environment_policy.set]\nA = "1"\n', 'shell_environment_policy.set.A = "1"\n']) {
      writeFileSync(join(codexHome, 'config.toml'), theirs);
      const report = installCodexShell(options());
      expect(report.warnings.join('\n')).toContain('BASH_ENV');
      expect(read('config.toml')).toBe(theirs);
    }
    // A policy table without `set` of its own: the block's table goes beside it.
    writeFileSync(join(codexHome, 'config.toml'), '[shell_environment_policy]\ninherit = "core"\n');
    expect(installCodexShell(options()).warnings).toEqual([]);
  });
});

describe('install-telemetry --agent codex', () => {
  it('points [otel]’s log exporter at the receiver in a block of its own, taken out again byte for byte; leaves the user’s own [otel] alone', () => {
    writeFileSync(join(codexHome, 'config.toml'), CONFIG);
    installCodexTelemetry({ ...options(), port: 4319 });
    const config = read('config.toml');
    expect(config.startsWith(`${CONFIG}\n\n`)).toBe(true);
    expect(config).toContain('[otel]\nlog_user_prompt = false\n[otel.exporter.otlp-http]\nendpoint = "http://127.0.0.1:4319/v1/logs"\nprotocol = "binary"\n');
    expect(installCodexTelemetry({ ...options(), port: 4319 }).change.changed).toBe(false);
    installCodexTelemetry({ ...options(), port: 4320, logPrompts: true });
    expect(read('config.toml').match(/^\[otel\]/gm)).toHaveLength(1);
    expect(read('config.toml')).toContain('log_user_prompt = true');
    uninstallCodexTelemetry(options());
    expect(read('config.toml')).toBe(CONFIG);

    for (const theirs of ['[otel]\nenvironment = "prod"\n', '[otel.exporter.otlp-grpc]\nendpoint = "https://collector:4317"\n', 'otel.environment = "prod"\n']) {
      writeFileSync(join(codexHome, 'config.toml'), theirs);
      const report = installCodexTelemetry({ ...options(), port: 4319 });
      expect(report.warnings.join('\n')).toContain('http://127.0.0.1:4319/v1/logs');
      expect(read('config.toml')).toBe(theirs);
    }
  });
});
