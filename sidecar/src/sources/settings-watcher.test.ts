import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SettingsChanged } from '../events/settings.js';
import { MAX_SETTINGS_BYTES, SettingsWatcher } from './settings-watcher.js';
import { StateWrites } from './state-file.js';

describe('settings watcher', () => {
  let root: string;
  let configDir: string;
  let statePath: string;
  let logs: string[];

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ccotel-settings-watcher-'));
    configDir = join(root, 'claude');
    mkdirSync(configDir);
    statePath = join(root, 'state', 'settings.json');
    logs = [];
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** A watcher reading once (as backfill does), acknowledging at once what it hands over. */
  async function readOnce(withState = true): Promise<SettingsChanged[]> {
    const changes: SettingsChanged[] = [];
    const watcher = new SettingsWatcher({
      configDirs: [configDir], managedDir: join(root, 'managed'), digest: () => 'd', intervalMs: 50,
      emit: (change, ack) => {
        changes.push(change);
        ack();
      },
      log: (message) => logs.push(message),
      ...(withState ? { statePath, stateWrites: new StateWrites() } : {}),
    });
    await watcher.readAll();
    return changes;
  }
  const userFile = () => join(configDir, 'settings.json');

  it('a restart neither repeats a change it recorded nor misses one made while it was down', async () => {
    writeFileSync(userFile(), JSON.stringify({ permissions: { allow: ['Read'] } }));
    expect((await readOnce()).map((change) => change.previous)).toEqual([undefined]);
    expect(await readOnce()).toEqual([]);
    writeFileSync(userFile(), JSON.stringify({ permissions: { allow: ['Read', 'Grep'] } }));
    const [missed] = await readOnce();
    expect(missed.previous?.view.sets['permissions.allow']).toEqual(['Read']);
    expect(missed.view.sets['permissions.allow']).toEqual(['Grep', 'Read']);
    expect(await readOnce()).toEqual([]);
  });

  it('reads a settings file through a symlink (dotfiles), but never a FIFO, a device or an oversized file', async () => {
    const dotfiles = join(root, 'dotfiles.json');
    writeFileSync(dotfiles, JSON.stringify({ permissions: { deny: ['WebFetch'] } }));
    symlinkSync(dotfiles, userFile());
    expect((await readOnce(false))[0].view.sets['permissions.deny']).toEqual(['WebFetch']);

    rmSync(userFile());
    execFileSync('mkfifo', [userFile()]);
    expect(await readOnce(false)).toEqual([]); // returns: nothing blocks on a FIFO without a writer
    rmSync(userFile());
    symlinkSync('/dev/zero', userFile());
    expect(await readOnce(false)).toEqual([]);
    rmSync(userFile());
    writeFileSync(userFile(), `{"permissions": {"allow": ["${'x'.repeat(MAX_SETTINGS_BYTES)}"]}}`);
    expect(await readOnce(false)).toEqual([]);
    expect(logs.join('\n')).toMatch(/not a regular file[\s\S]*not a regular file[\s\S]*more than the 1048576 read/);
  });

  it('keeps the last version of a file that stops parsing, and says so once', async () => {
    writeFileSync(userFile(), JSON.stringify({ permissions: { allow: ['Read'] } }));
    expect(await readOnce()).toHaveLength(1);
    writeFileSync(userFile(), '{"permissions": {"allow": ["Read", ');
    expect(await readOnce()).toEqual([]);
    expect(logs.filter((line) => line.includes('ignored until it changes'))).toHaveLength(1);
    writeFileSync(userFile(), JSON.stringify({ permissions: { allow: [] } }));
    const [change] = await readOnce();
    expect(change.previous?.view.sets['permissions.allow']).toEqual(['Read']);
  });

  it('knows the rules in force at a moment only from the first look on (a file older than the turn is known)', async () => {
    const project = join(root, 'project');
    mkdirSync(join(project, '.claude'), { recursive: true });
    writeFileSync(join(project, '.claude', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash(ls)'] } }));
    const modifiedMs = Date.now() - 3_600_000;
    utimesSync(join(project, '.claude', 'settings.json'), modifiedMs / 1000, modifiedMs / 1000);
    const watcher = new SettingsWatcher({ configDirs: [configDir], managedDir: join(root, 'managed'), digest: () => 'd', intervalMs: 50, emit: () => {} });
    watcher.watchProject(project);
    expect(watcher.rulesAt(project, Date.now())).toBeUndefined(); // the user's file not looked at yet
    await watcher.readAll();
    expect(watcher.rulesAt(project, modifiedMs - 60_000)).toBeUndefined();
    const rules = watcher.rulesAt(project, modifiedMs + 60_000)!;
    expect(rules.view.sets['permissions.allow']).toEqual(['Bash(ls)']);
    expect(rules.files.map((file) => file.scope)).toEqual(['project']);
  });

  it('reads a quiet project again as soon as a session runs in it (it is looked at only once a minute meanwhile)', async () => {
    const project = join(root, 'quiet');
    mkdirSync(join(project, '.claude'), { recursive: true });
    const settings = join(project, '.claude', 'settings.json');
    writeFileSync(settings, JSON.stringify({ permissions: { allow: ['Read'] } }));
    const changes: SettingsChanged[] = [];
    const options = {
      configDirs: [configDir], managedDir: join(root, 'managed'), digest: () => 'd', intervalMs: 50, statePath, stateWrites: new StateWrites(),
      emit: (change: SettingsChanged, ack: () => void) => {
        changes.push(change);
        ack();
      },
    };
    new SettingsWatcher(options).watchProject(project); // an earlier run: the project is in the state from now on
    const watcher = new SettingsWatcher(options);
    await watcher.start();
    writeFileSync(settings, JSON.stringify({ permissions: { allow: ['Read', 'Bash'] } }));
    await new Promise((resolve) => setTimeout(resolve, 300)); // six intervals: a quiet project is not looked at
    expect(changes).toHaveLength(1);
    watcher.watchProject(project);
    await watcher.stop();
    expect(changes.map((change) => change.view.sets['permissions.allow'])).toEqual([['Read'], ['Bash', 'Read']]);
  });

  it('names the commit that brought a tracked file, and whether the file differs from it', async () => {
    const git = (...args: string[]) => execFileSync('git', ['-C', configDir, '-c', 'user.name=Test Author', '-c', 'user.email=t@example.invalid', ...args]);
    git('init', '-q');
    writeFileSync(userFile(), JSON.stringify({ permissions: { allow: ['Read'] } }));
    git('add', 'settings.json');
    git('commit', '-q', '-m', 'rules');
    const commit = git('rev-parse', 'HEAD').toString().trim();
    expect((await readOnce())[0].git).toEqual({ commit, author: 'Test Author', uncommitted: false });
    writeFileSync(userFile(), JSON.stringify({ permissions: { allow: ['Read', 'Bash'] } }));
    expect((await readOnce())[0].git).toEqual({ commit, author: 'Test Author', uncommitted: true });
  });
});
