import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerHookCommands } from '../commands/hooks.js';
import { statePaths } from '../paths.js';
import { BEHAVIOUR_REPLACING_EVENTS, SPOOLED_EVENTS } from './hook-events.js';
import { spoolHookHandler } from './hooks.js';
import { packagedScriptPath } from './scripts.js';

let home: string;
let output: string;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'ccotel-install-'));
  output = '';
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
});

const env = () => ({ HOME: home, PATH: process.env.PATH });

function ccotel(...args: string[]): void {
  const program = new Command('ccotel').exitOverride().configureOutput({ writeErr: (s) => (output += s) });
  registerHookCommands(program, { env: env(), out: (s) => (output += s) });
  program.parse(args, { from: 'user' });
}

/** A settings file as people have them: their own hooks, permissions, env, other keys, 4-space indent. */
const userSettings = {
  $schema: 'https://json.schemastore.org/claude-code-settings.json',
  model: 'opus',
  permissions: { allow: ['Bash(npm run test:*)', 'Read(~/.zshrc)'], deny: ['Read(./.env)'], defaultMode: 'acceptEdits' },
  env: { CLAUDE_CODE_ENABLE_TELEMETRY: '1', OTEL_METRICS_EXPORTER: 'otlp' },
  hooks: {
    PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: '~/.claude/hooks/guard.sh', timeout: 30 }] }],
    Stop: [{ hooks: [{ type: 'command', command: 'notify-send "done"' }] }],
    WorktreeCreate: [], // an empty list ccotel never touches stays as it is
  },
  statusLine: { type: 'command', command: '~/.claude/statusline.sh' },
  includeCoAuthoredBy: false,
};

function writeUserSettings(dir = home): string {
  const path = join(dir, '.claude', 'settings.json');
  mkdirSync(join(dir, '.claude'), { recursive: true });
  writeFileSync(path, `${JSON.stringify(userSettings, null, 4)}\n`);
  return path;
}

const backups = (path: string) => readdirSync(join(path, '..')).filter((name) => name.startsWith('settings.json.ccotel-backup-'));

type Group = { matcher?: string; hooks: { command: string }[] };
const hooksOf = (path: string) => JSON.parse(readFileSync(path, 'utf8')).hooks as Record<string, Group[]>;

/** ccotel's installed command for `event`, run the way Claude Code runs it: `sh -c`, the event JSON on stdin. */
function runInstalledHook(event: string) {
  const command = hooksOf(join(home, '.claude', 'settings.json'))[event].at(-1)!.hooks[0].command;
  return spawnSync('sh', ['-c', command], { input: `{"hook_event_name":"${event}"}`, encoding: 'utf8', env: { PATH: process.env.PATH } });
}

describe('install-hooks / uninstall-hooks', () => {
  it('adds the hook for every spooled event, keeps everything else and backs up first', () => {
    const path = writeUserSettings();
    const original = readFileSync(path, 'utf8');
    ccotel('install-hooks');

    const after = JSON.parse(readFileSync(path, 'utf8'));
    for (const key of ['$schema', 'model', 'permissions', 'env', 'statusLine', 'includeCoAuthoredBy'] as const) {
      expect(after[key]).toEqual(userSettings[key]);
    }
    expect(after.hooks.PreToolUse[0]).toEqual(userSettings.hooks.PreToolUse[0]);
    expect(after.hooks.Stop[0]).toEqual(userSettings.hooks.Stop[0]);
    const { binDir, spoolDir } = statePaths(env());
    for (const event of SPOOLED_EVENTS) {
      const ours = after.hooks[event].at(-1);
      expect(ours, event).toEqual({
        hooks: [
          {
            type: 'command',
            command: `[ ! -O '${binDir}/.' ] || [ ! -O '${binDir}/ccotel-hook.sh' ] || [ ! -r '${binDir}/ccotel-hook.sh' ] || { set -- '${spoolDir}'; . '${binDir}/ccotel-hook.sh'; }`,
            timeout: 5,
          },
        ],
      });
    }
    for (const event of BEHAVIOUR_REPLACING_EVENTS) expect(after.hooks[event] ?? []).toEqual([]);
    expect(readFileSync(path, 'utf8')).toMatch(/^\{\n {4}"\$schema"/); // the file's own indentation

    const [backup] = backups(path);
    expect(readFileSync(join(home, '.claude', backup), 'utf8')).toBe(original);
    expect(readFileSync(join(binDir, 'ccotel-hook.sh'), 'utf8')).toBe(readFileSync(packagedScriptPath('hook'), 'utf8'));
    expect(statSync(join(binDir, 'ccotel-hook.sh')).mode & 0o777).toBe(0o700);
    expect(statSync(spoolDir).mode & 0o777).toBe(0o700);
    expect(output).toContain('backup of the previous file');
  });

  it('installs a command that really spools an event when run the way Claude Code runs it', () => {
    writeUserSettings();
    ccotel('install-hooks');
    const result = runInstalledHook('PostToolUse');
    expect(result.status).toBe(0);
    const spoolDir = statePaths(env()).spoolDir;
    const files = readdirSync(spoolDir);
    expect(files).toHaveLength(1);
    expect(readFileSync(join(spoolDir, files[0]), 'utf8')).toBe('{"hook_event_name":"PostToolUse"}');
  });

  it('installs a command that stays silent and exits 0 when the script is gone (exit 2 would block the tool call)', () => {
    writeUserSettings();
    ccotel('install-hooks');
    unlinkSync(join(statePaths(env()).binDir, 'ccotel-hook.sh'));
    const result = runInstalledHook('PreToolUse');
    expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({ status: 0, stdout: '', stderr: '' });
  });

  it.each([
    ['the script run as a command', (script: string, spool: string) => `'${script}' '${spool}'`],
    ['sourced after a readability test only', (script: string, spool: string) => `[ ! -r '${script}' ] || { set -- '${spool}'; . '${script}'; }`],
  ])('takes the handlers of an earlier ccotel (%s) as its own: replaced, then removed', (_form, commandOf) => {
    const path = writeUserSettings();
    const { binDir, spoolDir } = statePaths(env());
    const earlier = { type: 'command', command: commandOf(`${binDir}/ccotel-hook.sh`, spoolDir), timeout: 5 };
    const hooks: Record<string, unknown[]> = { ...userSettings.hooks };
    for (const event of SPOOLED_EVENTS) hooks[event] = [...(hooks[event] ?? []), { hooks: [earlier] }];
    const withEarlier = { ...userSettings, hooks };
    writeFileSync(path, JSON.stringify(withEarlier, null, 4));
    ccotel('install-hooks');
    const installed = hooksOf(path);
    for (const event of SPOOLED_EVENTS) {
      const commands = installed[event].flatMap((group) => group.hooks.map((handler) => handler.command));
      expect(commands.filter((command) => command.includes('ccotel-hook.sh')), event).toEqual([spoolHookHandler(`${binDir}/ccotel-hook.sh`, spoolDir).command]);
    }
    ccotel('uninstall-hooks');
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(userSettings);
  });

  it('changes nothing when run twice', () => {
    const path = writeUserSettings();
    ccotel('install-hooks');
    const once = readFileSync(path);
    output = '';
    ccotel('install-hooks');
    expect(readFileSync(path).equals(once)).toBe(true);
    expect(backups(path)).toHaveLength(1);
    expect(output).toContain('nothing changed');
  });

  it('uninstall gives back settings equal to the original', () => {
    const path = writeUserSettings();
    ccotel('install-hooks');
    ccotel('uninstall-hooks');
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(userSettings);
    expect(backups(path).length).toBeGreaterThanOrEqual(1);
  });

  it('uninstall removes the containers it created when the file had no hooks', () => {
    const path = join(home, '.claude', 'settings.json');
    mkdirSync(join(home, '.claude'));
    writeFileSync(path, '{"model": "sonnet"}');
    ccotel('install-hooks');
    expect(Object.keys(hooksOf(path))).toHaveLength(SPOOLED_EVENTS.length);
    ccotel('uninstall-hooks');
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ model: 'sonnet' });
    expect(readFileSync(path, 'utf8').endsWith('}')).toBe(true); // no final newline: the original had none
  });

  it('moves its handler in place when the state dir changed, never duplicating it', () => {
    const path = writeUserSettings();
    ccotel('install-hooks');
    const moved = JSON.parse(readFileSync(path, 'utf8'));
    moved.hooks.Stop[1].hooks[0].command = "'/old/state/bin/ccotel-hook.sh' '/old/state/spool'";
    writeFileSync(path, JSON.stringify(moved, null, 4));
    ccotel('install-hooks');
    const stop = hooksOf(path).Stop;
    expect(stop).toHaveLength(2);
    expect(stop[1].hooks[0].command).toContain(statePaths(env()).spoolDir);
  });

  it('writes a new settings file when there is none', () => {
    ccotel('install-hooks');
    const path = join(home, '.claude', 'settings.json');
    expect(Object.keys(hooksOf(path)).sort()).toEqual([...SPOOLED_EVENTS].sort());
    ccotel('uninstall-hooks');
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({});
  });

  it('edits a project settings file with --project and leaves the user file alone', () => {
    const project = join(home, 'work', 'proj');
    mkdirSync(project, { recursive: true });
    const userPath = writeUserSettings();
    const userText = readFileSync(userPath, 'utf8');
    ccotel('install-hooks', '--project', project);
    expect(Object.keys(hooksOf(join(project, '.claude', 'settings.json')))).toHaveLength(SPOOLED_EVENTS.length);
    expect(readFileSync(userPath, 'utf8')).toBe(userText);
  });

  it('--dry-run prints a diff and writes nothing', () => {
    const path = writeUserSettings();
    const original = readFileSync(path, 'utf8');
    ccotel('install-hooks', '--dry-run');
    expect(output).toMatch(/^Index: .*settings\.json/);
    expect(output).toContain(`+                        "command": "[ ! -O '${statePaths(env()).binDir}/.' ]`);
    expect(readFileSync(path, 'utf8')).toBe(original);
    expect(backups(path)).toEqual([]);
    expect(existsSync(statePaths(env()).stateDir)).toBe(false);
  });

  it('keeps a symlinked settings.json a symlink', () => {
    const real = writeUserSettings(join(home, 'dotfiles'));
    mkdirSync(join(home, '.claude'));
    symlinkSync(real, join(home, '.claude', 'settings.json'));
    ccotel('install-hooks');
    expect(lstatSync(join(home, '.claude', 'settings.json')).isSymbolicLink()).toBe(true);
    expect(Object.keys(hooksOf(real)).length).toBeGreaterThan(SPOOLED_EVENTS.length - 1);
  });

  it('refuses a settings file that is not JSON, with a clear error and no change', () => {
    const path = join(home, '.claude', 'settings.json');
    mkdirSync(join(home, '.claude'));
    writeFileSync(path, '{ "model": "opus", // a comment\n}');
    expect(() => ccotel('install-hooks')).toThrow(CommanderError);
    expect(output).toMatch(/settings\.json is not valid JSON.*nothing was changed/);
    expect(readFileSync(path, 'utf8')).toBe('{ "model": "opus", // a comment\n}');
    expect(backups(path)).toEqual([]);
  });

  it('refuses a hooks entry of the wrong shape instead of overwriting it', () => {
    const path = join(home, '.claude', 'settings.json');
    mkdirSync(join(home, '.claude'));
    writeFileSync(path, '{"hooks": {"Stop": "not a list"}}');
    expect(() => ccotel('install-hooks')).toThrow(CommanderError);
    expect(output).toContain('hooks.Stop is not an array');
  });
});
