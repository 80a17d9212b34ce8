// Issue 13, rows 14 and 15: install-hooks / uninstall-hooks on settings files that a careless edit would
// damage: a user's own command that calls ccotel's hook, symlinks (dangling or not), a read-only file, a
// number beyond 2^53, duplicate keys. Temp HOMEs only.
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SPOOLED_EVENTS } from '../../sidecar/src/install/hook-events.js';
import { installHooks, uninstallHooks } from '../../sidecar/src/install/hooks.js';
import { installedScriptPath } from '../../sidecar/src/install/scripts.js';
import { SettingsError } from '../../sidecar/src/install/settings-file.js';
import { statePaths } from '../../sidecar/src/paths.js';

let home: string;
let settingsPath: string;
const env = () => ({ HOME: home });

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'ccotel-adv-settings-'));
  mkdirSync(join(home, '.claude'));
  settingsPath = join(home, '.claude', 'settings.json');
});

afterEach(() => rmSync(home, { recursive: true, force: true }));

type Groups = Array<{ hooks: Array<{ command: string }> }>;
const hooksIn = (text: string) => (JSON.parse(text) as { hooks: Record<string, Groups> }).hooks;

describe('settings edits that never lose a user’s data', () => {
  it('row 14: a user’s own command that also calls ccotel’s hook is left alone, and the user is told', () => {
    const paths = statePaths(env());
    const compound = `~/.claude/guard.sh || exit 2; '${installedScriptPath('hook', paths.binDir)}' '${paths.spoolDir}'`;
    writeFileSync(settingsPath, JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: compound }] }] } }, null, 2));

    const installed = installHooks({ env: env() });
    const afterInstall = hooksIn(readFileSync(settingsPath, 'utf8'));
    expect(afterInstall.PreToolUse).toEqual([{ matcher: 'Bash', hooks: [{ type: 'command', command: compound }] }]);
    expect(Object.keys(afterInstall)).toHaveLength(SPOOLED_EVENTS.length);
    expect(installed.warnings.join('\n')).toMatch(/hooks\.PreToolUse\[0\]\.hooks\[0\] calls ccotel-hook\.sh inside a command of your own/);

    const removed = uninstallHooks({ env: env() });
    expect(hooksIn(readFileSync(settingsPath, 'utf8'))).toEqual({ PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: compound }] }] });
    expect(removed.warnings).toHaveLength(1);
  });

  it('row 15: a dangling symlink is written through: the link stays, its target is created', () => {
    const target = join(home, 'dotfiles', 'claude-settings.json');
    mkdirSync(join(home, 'dotfiles'));
    symlinkSync(target, settingsPath);
    installHooks({ env: env() });
    expect(lstatSync(settingsPath).isSymbolicLink()).toBe(true);
    expect(readlinkSync(settingsPath)).toBe(target);
    expect(Object.keys(hooksIn(readFileSync(target, 'utf8')))).toHaveLength(SPOOLED_EVENTS.length);
  });

  it('row 15: a read-only settings file is refused with a clear error and left as it was', () => {
    const original = '{\n  "model": "opus"\n}\n';
    writeFileSync(settingsPath, original);
    chmodSync(settingsPath, 0o444);
    expect(() => installHooks({ env: env() })).toThrow(SettingsError);
    expect(() => installHooks({ env: env() })).toThrow(/read-only \(mode 0444\).*chmod u\+w/);
    expect(readFileSync(settingsPath, 'utf8')).toBe(original);
    expect(statSync(settingsPath).mode & 0o777).toBe(0o444);
  });

  it('row 15: numbers beyond 2^53, duplicate keys, and the layout survive install and uninstall', () => {
    const original = [
      '{',
      '  "cleanupPeriodDays": 12345678901234567890,',
      '  "env": { "A": "1", "A": "2" },',
      '  "model":   "opus",',
      '  "hooks": {',
      '    "Stop": [ { "hooks": [ { "type": "command", "command": "notify-send done", "timeout": 18446744073709551615 } ] } ]',
      '  }',
      '}',
      '',
    ].join('\n');
    writeFileSync(settingsPath, original);
    installHooks({ env: env() });
    const installed = readFileSync(settingsPath, 'utf8');
    expect(installed).toContain('"cleanupPeriodDays": 12345678901234567890,');
    expect(installed).toContain('"env": { "A": "1", "A": "2" },');
    expect(installed).toContain('"model":   "opus",');
    expect(installed).toContain('"timeout": 18446744073709551615');
    expect(Object.keys(hooksIn(installed))).toHaveLength(SPOOLED_EVENTS.length);

    uninstallHooks({ env: env() });
    const uninstalled = readFileSync(settingsPath, 'utf8');
    expect(uninstalled).toContain('"cleanupPeriodDays": 12345678901234567890,');
    expect(uninstalled).toContain('"env": { "A": "1", "A": "2" },');
    expect(uninstalled).toContain('"timeout": 18446744073709551615');
    expect(Object.keys(hooksIn(uninstalled))).toEqual(['Stop']);
  });

  it('what held: malformed settings are refused and not touched', () => {
    writeFileSync(settingsPath, '{ "model": "opus", ');
    expect(() => installHooks({ env: env() })).toThrow(/not valid JSON/);
    expect(readFileSync(settingsPath, 'utf8')).toBe('{ "model": "opus", ');
  });
});
