import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { statePaths } from '../paths.js';
import { SPOOLED_EVENTS } from './hook-events.js';
import { installHooks } from './hooks.js';
import { pluginHooks } from './plugin.js';
import { packagedScriptPath } from './scripts.js';

const REPO = resolve(import.meta.dirname, '../../..');
const marketplace = JSON.parse(readFileSync(join(REPO, '.claude-plugin/marketplace.json'), 'utf8')) as { name: string; plugins: { name: string; source: string }[] };
const ROOT = join(REPO, marketplace.plugins[0].source);
const HOOKS_JSON = join(ROOT, 'hooks/hooks.json');
const commandsOf = (event: string) => pluginHooks().hooks[event][0].hooks.map((handler) => handler.command!);

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'ccotel-plugin-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** A hooks.json command run as Claude Code 2.1.332 runs a plugin's: the placeholder put in, `sh -c`, the event on stdin. */
function runPluginHook(command: string, input: string, env: Record<string, string> = {}) {
  const root = env.CLAUDE_PLUGIN_ROOT ?? ROOT;
  return spawnSync('sh', ['-c', command.replaceAll('${CLAUDE_PLUGIN_ROOT}', root)], {
    input,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: home, CLAUDE_PLUGIN_ROOT: root, CLAUDE_PROJECT_DIR: join(home, 'project'), CLAUDE_PID: '4242', ...env },
  });
}

const spoolFiles = () => {
  const spool = statePaths({ HOME: home }).spoolDir;
  return existsSync(spool) ? readdirSync(spool).map((name) => ({ name, text: readFileSync(join(spool, name), 'utf8') })) : [];
};

describe('the ccotel plugin', () => {
  it('is listed by the repository marketplace, with the packaged hook and shell scripts', () => {
    expect(marketplace.name).toBe('ccotel');
    expect(marketplace.plugins.map((p) => p.name)).toEqual(['ccotel']);
    expect(JSON.parse(readFileSync(join(ROOT, '.claude-plugin/plugin.json'), 'utf8')).name).toBe('ccotel');
    expect(realpathSync(join(ROOT, 'hook/ccotel-hook.sh'))).toBe(realpathSync(packagedScriptPath('hook')));
    expect(realpathSync(join(ROOT, 'shell/ccotel-shell.bash'))).toBe(realpathSync(packagedScriptPath('shell')));
  });

  it('has hooks.json as pluginHooks() writes it: the spool hook on every event install-hooks registers, the shell line at SessionStart', () => {
    const text = `${JSON.stringify(pluginHooks(), null, 2)}\n`;
    if (process.env.CCOTEL_UPDATE_PLUGIN) writeFileSync(HOOKS_JSON, text);
    expect(readFileSync(HOOKS_JSON, 'utf8'), 'rewrite it: CCOTEL_UPDATE_PLUGIN=1 npx vitest run sidecar/src/install/plugin.test.ts').toBe(text);
    const hooks = JSON.parse(text);
    expect(Object.keys(hooks.hooks)).toEqual([...SPOOLED_EVENTS]);
    expect(commandsOf('SessionStart')).toHaveLength(2);
  });

  it('spools the event byte for byte, silently, exit 0', () => {
    const payload = '{"hook_event_name":"PreToolUse","tool_input":{"command":"echo ✓"}}';
    const run = runPluginHook(commandsOf('PreToolUse')[0], payload);
    expect([run.status, run.stdout, run.stderr]).toEqual([0, '', '']);
    const files = spoolFiles();
    expect(files.map((f) => f.text)).toEqual([payload]);
    expect(files[0].name).toMatch(/^\d+-[0-9a-f]{8}-[0-9a-f]{4}-4242\.json$/);
  });

  it.each([
    ["the user's settings", undefined],
    ["the project's settings", 'project'],
  ])('stands down where install-hooks put its handler (%s): one spool file per event', (_where, projectDir) => {
    installHooks({ env: { HOME: home }, projectDir: projectDir && join(home, projectDir) });
    const run = runPluginHook(commandsOf('Stop')[0], '{"hook_event_name":"Stop"}');
    expect([run.status, run.stdout, run.stderr]).toEqual([0, '', '']);
    expect(spoolFiles()).toEqual([]);
  });

  it('spools where the settings only mention the script, outside a hook command', () => {
    mkdirSync(join(home, '.claude'));
    writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash(cat ~/.local/state/ccotel/bin/ccotel-hook.sh)'] } }, null, 2));
    expect(runPluginHook(commandsOf('Stop')[0], '{"hook_event_name":"Stop"}').status).toBe(0);
    expect(spoolFiles()).toHaveLength(1);
  });

  it('makes install-hooks say that the plugin is enabled too (enabledPlugins as `claude plugin install` writes it)', () => {
    expect(installHooks({ env: { HOME: home } }).warnings).toEqual([]);
    const settings = join(home, '.claude', 'settings.json');
    writeFileSync(settings, JSON.stringify({ ...JSON.parse(readFileSync(settings, 'utf8')), enabledPlugins: { 'ccotel@ccotel': true } }));
    expect(installHooks({ env: { HOME: home }, projectDir: join(home, 'project') }).warnings).toEqual([
      `${settings} enables the Claude Code plugin ccotel@ccotel too: its hook stands down where these handlers are, so each event is spooled once; keep one of the two (ccotel uninstall-hooks, or claude plugin uninstall ccotel@ccotel)`,
    ]);
  });

  it('does nothing, exit 0, when the plugin directory is gone', () => {
    const run = runPluginHook(commandsOf('PreToolUse')[0], '{}', { CLAUDE_PLUGIN_ROOT: join(home, 'gone') });
    expect([run.status, run.stdout, run.stderr]).toEqual([0, '', '']);
  });

  it("at SessionStart writes the shell log's line to CLAUDE_ENV_FILE, which logs a Bash tool command", () => {
    const envFile = join(home, 'session-env', 'sessionstart-hook-0.sh');
    mkdirSync(join(home, 'session-env'));
    writeFileSync(envFile, '');
    const run = runPluginHook(commandsOf('SessionStart')[1], '{"hook_event_name":"SessionStart"}', { CLAUDE_ENV_FILE: envFile });
    expect([run.status, run.stdout, run.stderr]).toEqual([0, '', '']);
    const line = readFileSync(envFile, 'utf8');
    expect(line).toContain(join(ROOT, 'shell/ccotel-shell.bash'));

    const bash = spawnSync('bash', ['-c', `${line}exit 4`], { env: { PATH: process.env.PATH, HOME: home, CLAUDE_CODE_SESSION_ID: 's1' }, encoding: 'utf8' });
    expect([bash.status, bash.stdout, bash.stderr]).toEqual([4, '', '']);
    const records = readFileSync(join(statePaths({ HOME: home }).shellLogDir, 's1.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(records.map((r) => [r.ev, r.status])).toEqual([['start', undefined], ['end', 4]]);
  });
});
