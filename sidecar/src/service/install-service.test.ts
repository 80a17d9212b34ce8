import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerServiceCommands } from '../commands/service.js';
import type { CommandResult, CommandRunner } from './command-runner.js';
import { installService, uninstallService, userUnitDir } from './install-service.js';
import { RETENTION_SERVICE_UNIT, RETENTION_TIMER_UNIT, SIDECAR_UNIT } from './units.js';

/** Stands in for systemctl/loginctl: records each call and answers from `answer`. */
function recorder(answer: (command: string, args: string[]) => Partial<CommandResult> = () => ({})) {
  const calls: string[] = [];
  const run: CommandRunner = (command, args) => {
    calls.push([command, ...args].join(' '));
    return { status: 0, stdout: '', stderr: '', ...answer(command, args) };
  };
  return { calls, run };
}

/** systemd as it is in a container: no bus, no logind. */
const noSystemd = () => ({ status: 1, stderr: 'System has not been booted with systemd as init system (PID 1). Can\'t operate.\n' });
const lingerOff = (command: string, args: string[]) => (args[0] === 'show-user' ? { stdout: 'no\n' } : {});

let home: string;
let env: Record<string, string>;
const program = { node: process.execPath, cli: '/opt/ccotel/dist/sidecar/src/cli.js' };

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'ccotel-service-'));
  env = { HOME: home, USER: 'agent' };
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

function unitText(name: string): string {
  return readFileSync(join(userUnitDir(env), name), 'utf8');
}

describe('install-service', () => {
  it('writes the sidecar and retention units with absolute paths, enables them and turns lingering on', () => {
    const { calls, run } = recorder(lingerOff);
    const report = installService({ env, run, program });
    expect(userUnitDir(env)).toBe(join(home, '.config', 'systemd', 'user'));
    expect(report.files.map((file) => file.action)).toEqual(['written', 'written', 'written']);
    expect(unitText(SIDECAR_UNIT)).toContain(`ExecStart=${process.execPath} ${program.cli} run\n`);
    expect(unitText(SIDECAR_UNIT)).toMatch(/^Restart=on-failure$/m);
    expect(unitText(RETENTION_SERVICE_UNIT)).toContain(`ExecStart=${process.execPath} ${program.cli} retention\n`);
    expect(unitText(SIDECAR_UNIT)).not.toMatch(/@[A-Z_]+@/);
    expect(calls).toEqual([
      'systemctl --user daemon-reload',
      `systemctl --user enable ${SIDECAR_UNIT} ${RETENTION_TIMER_UNIT}`,
      `systemctl --user restart ${SIDECAR_UNIT} ${RETENTION_TIMER_UNIT}`,
      'loginctl show-user agent --property=Linger --value',
      'loginctl enable-linger agent',
    ]);
    expect(report.manual).toEqual([]);
  });

  it('changes nothing the second time, and only makes sure the units are enabled and running', () => {
    installService({ env, run: recorder(lingerOff).run, program });
    const before = unitText(SIDECAR_UNIT);
    const { calls, run } = recorder(() => ({ stdout: 'yes\n' }));
    const report = installService({ env, run, program });
    expect(report.files.every((file) => file.action === 'unchanged')).toBe(true);
    expect(unitText(SIDECAR_UNIT)).toBe(before);
    expect(calls).toContain(`systemctl --user enable --now ${SIDECAR_UNIT} ${RETENTION_TIMER_UNIT}`);
    expect(calls.some((call) => call.includes('restart') || call.includes('enable-linger'))).toBe(false);
  });

  it('keeps the files and tells the user what to run when systemd is not running', () => {
    const report = installService({ env, run: recorder(noSystemd).run, program });
    expect(existsSync(join(userUnitDir(env), SIDECAR_UNIT))).toBe(true);
    expect(report.manual).toEqual([
      'systemctl --user daemon-reload',
      `systemctl --user enable ${SIDECAR_UNIT} ${RETENTION_TIMER_UNIT}`,
      `systemctl --user restart ${SIDECAR_UNIT} ${RETENTION_TIMER_UNIT}`,
      'sudo loginctl enable-linger agent',
    ]);
    expect(report.notes.join('\n')).toMatch(/did not answer \(System has not been booted with systemd/);
    expect(report.notes.join('\n')).toMatch(/lingering could not be enabled .* stops when agent's last session ends/);
  });

  it('bakes the path variables in, quoted, and leaves out the retention timer for a server store', () => {
    env.CCOTEL_STATE_DIR = join(home, 'state dir 100%');
    env.CCOTEL_STORE = 'http://clickhouse.internal:8123';
    const { calls, run } = recorder(lingerOff);
    const report = installService({ env, run, program });
    expect(unitText(SIDECAR_UNIT)).toContain(`EnvironmentFile=${join(home, '.config', 'ccotel', 'service.env')}\n`);
    expect(readFileSync(join(home, '.config', 'ccotel', 'service.env'), 'utf8')).toContain(`CCOTEL_STATE_DIR="${home}/state dir 100%"\n`);
    expect(existsSync(join(userUnitDir(env), RETENTION_TIMER_UNIT))).toBe(false);
    expect(calls).toContain(`systemctl --user enable ${SIDECAR_UNIT}`);
    expect(report.notes.join('\n')).toMatch(/no retention timer: the store is a ClickHouse server/);
  });

  it('renders units systemd itself accepts', () => {
    const analyze = spawnSync('systemd-analyze', ['--version']);
    if (analyze.error) return; // systemd-analyze not installed: nothing to ask
    installService({ env, run: recorder().run, program: { node: process.execPath, cli: __filename } });
    const dir = userUnitDir(env);
    const verify = spawnSync('systemd-analyze', ['verify', ...[SIDECAR_UNIT, RETENTION_SERVICE_UNIT, RETENTION_TIMER_UNIT].map((name) => join(dir, name))], { encoding: 'utf8' });
    // systemd older than 254 does not know the growing restart delay yet; anything else is a real complaint
    const complaints = verify.stderr.split('\n').filter((line) => line && !/Unknown key '(RestartSteps|RestartMaxDelaySec)'/.test(line));
    expect(complaints).toEqual([]);
    expect(verify.status).toBe(0);
  });
});

describe('uninstall-service', () => {
  it('undoes install-service exactly: units, their enable links, lingering it turned on', () => {
    const dir = userUnitDir(env);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'other.service'), '[Service]\nExecStart=/bin/true\n');
    installService({ env, run: recorder(lingerOff).run, program });
    // what `systemctl enable` would have made
    mkdirSync(join(dir, 'default.target.wants'));
    symlinkSync(join(dir, SIDECAR_UNIT), join(dir, 'default.target.wants', SIDECAR_UNIT));
    const { calls, run } = recorder();
    const report = uninstallService({ env, run });
    expect(calls).toEqual([
      `systemctl --user disable --now ${RETENTION_TIMER_UNIT} ${SIDECAR_UNIT}`,
      'systemctl --user daemon-reload',
      'loginctl disable-linger agent',
    ]);
    expect(readdirSync(dir).sort()).toEqual(['default.target.wants', 'other.service']);
    expect(readdirSync(join(dir, 'default.target.wants'))).toEqual([]);
    expect(report.manual).toEqual([]);
    // a second uninstall finds nothing to do
    const again = recorder();
    expect(uninstallService({ env, run: again.run }).files.every((file) => file.action === 'absent')).toBe(true);
    expect(again.calls).toEqual([]);
  });

  it('removes the directories it created, and turns off lingering it turned on even after a second install', () => {
    installService({ env, run: recorder(lingerOff).run, program });
    installService({ env, run: recorder(() => ({ stdout: 'yes\n' })).run, program }); // lingering is on now
    const { calls, run } = recorder();
    uninstallService({ env, run });
    expect(calls).toContain('loginctl disable-linger agent');
    expect(existsSync(join(home, '.config'))).toBe(false);
  });

  it('leaves lingering alone when it was on before, and a unit file it did not write', () => {
    installService({ env, run: recorder(() => ({ stdout: 'yes\n' })).run, program });
    const dir = userUnitDir(env);
    writeFileSync(join(dir, RETENTION_TIMER_UNIT), '[Timer]\nOnCalendar=daily\n'); // the user's own
    const { calls, run } = recorder();
    const report = uninstallService({ env, run });
    expect(calls.some((call) => call.startsWith('loginctl'))).toBe(false);
    expect(lstatSync(join(dir, RETENTION_TIMER_UNIT)).isFile()).toBe(true);
    expect(report.files).toContainEqual({ path: join(dir, RETENTION_TIMER_UNIT), action: 'kept: not written by ccotel' });
    expect(existsSync(join(dir, SIDECAR_UNIT))).toBe(false);
  });
});

describe('the install-service / uninstall-service commands', () => {
  async function ccotel(run: CommandRunner, ...args: string[]): Promise<string> {
    let output = '';
    const program = new Command('ccotel').exitOverride();
    registerServiceCommands(program, { env, out: (text) => (output += text) }, run);
    await program.parseAsync(args, { from: 'user' });
    return output;
  }

  it('refuses to write a unit that would start TypeScript sources instead of the built CLI', async () => {
    // this test runs from sidecar/src, where there is no cli.js beside the commands
    await expect(ccotel(recorder().run, 'install-service')).rejects.toThrow(/cli\.js does not exist: build first/);
    expect(existsSync(userUnitDir(env))).toBe(false);
  });

  it('prints what it did and what is left, with exit status 3 while systemd does not answer', async () => {
    installService({ env, run: recorder(lingerOff).run, program });
    process.exitCode = undefined;
    const output = await ccotel(recorder(noSystemd).run, 'uninstall-service');
    expect(output).toContain(`${join(userUnitDir(env), SIDECAR_UNIT)}: removed\n`);
    expect(output).toMatch(/^FAIL systemctl --user disable --now ccotel-retention\.timer ccotel\.service \(System has not been booted/m);
    expect(output).toContain('still to do, by you:\n  systemctl --user stop ccotel-retention.timer ccotel.service\n');
    expect(process.exitCode).toBe(3);
    process.exitCode = undefined;
  });
});
