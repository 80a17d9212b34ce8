// `ccotel install-service` / `uninstall-service`: put the systemd user units in place, enable them,
// and turn on lingering so the sidecar survives SSH logout. Every systemctl/loginctl call goes through
// a CommandRunner; where systemd is not running the files are still written and the report lists the
// commands the user has to run once it is.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { loadConfig } from '../config.js';
import { homeOf } from '../install/options.js';
import { isServerUrl } from '../store/open-store.js';
import { firstLine, succeeded, type CommandRunner } from './command-runner.js';
import { environmentFileText, RETENTION_SERVICE_UNIT, RETENTION_TIMER_UNIT, renderUnits, SIDECAR_UNIT, WRITTEN_BY, type UnitProgram } from './units.js';

type Env = Record<string, string | undefined>;

export interface ServiceOptions {
  env: Env;
  run: CommandRunner;
  program: UnitProgram;
}

export interface FileAction {
  path: string;
  action: 'written' | 'unchanged' | 'removed' | 'absent' | 'kept: not written by ccotel';
}

export interface ServiceReport {
  unitDir: string;
  files: FileAction[];
  /** Commands run, each with whether it worked and what it said. */
  commands: { command: string; ok: boolean; output: string }[];
  /** Commands the user still has to run (systemd not reachable, lingering not allowed, …). */
  manual: string[];
  notes: string[];
}

/** `${XDG_CONFIG_HOME:-~/.config}/systemd/user`, where systemd looks for a user's own units. */
export function userUnitDir(env: Env): string {
  const xdg = env.XDG_CONFIG_HOME;
  return join(xdg && xdg.startsWith('/') ? xdg : join(homeOf(env), '.config'), 'systemd', 'user');
}

/** `${XDG_CONFIG_HOME:-~/.config}/ccotel/service.env`: the variables the units run with (mode 0600). */
export function serviceEnvironmentPath(env: Env): string {
  return join(dirname(dirname(userUnitDir(env))), 'ccotel', 'service.env');
}

/** What install-service did beyond the unit files, so uninstall undoes exactly that. */
interface InstallRecord {
  lingerEnabledByCcotel: boolean;
  /** Directories it created for the units, outermost first. */
  createdDirs: string[];
}

function recordPath(env: Env): string {
  return join(loadConfig({}, env).paths.stateDir, 'service-install.json');
}

function readRecord(env: Env): InstallRecord | undefined {
  try {
    return JSON.parse(readFileSync(recordPath(env), 'utf8')) as InstallRecord;
  } catch {
    return undefined; // never installed, or installed by a version that kept no record
  }
}

function writeRecord(env: Env, record: InstallRecord): void {
  const path = recordPath(env);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, JSON.stringify(record), { mode: 0o600 });
}

/** mkdir -p that returns the directories it created, outermost first. */
function makeDirs(dir: string, mode = 0o755): string[] {
  const missing: string[] = [];
  for (let at = dir; !existsSync(at); at = dirname(at)) missing.unshift(at);
  mkdirSync(dir, { recursive: true, mode });
  return missing;
}

function userName(env: Env): string {
  return env.USER || userInfo().username;
}

/** Runs one command and notes it in the report. */
function step(report: ServiceReport, run: CommandRunner, command: string, args: string[]): boolean {
  const result = run(command, args);
  const ok = succeeded(result);
  report.commands.push({ command: [command, ...args].join(' '), ok, output: ok ? '' : firstLine(result) });
  return ok;
}

function writeIfChanged(path: string, text: string, mode = 0o644): FileAction {
  if (existsSync(path) && readFileSync(path, 'utf8') === text && (statSync(path).mode & 0o777) === mode) return { path, action: 'unchanged' };
  rmSync(`${path}.tmp`, { force: true }); // a left-over of another mode would keep it
  writeFileSync(`${path}.tmp`, text, { mode });
  chmodSync(`${path}.tmp`, mode); // whatever the umask
  renameSync(`${path}.tmp`, path);
  return { path, action: 'written' };
}

/** Removes a file only if install-service wrote it. */
function removeOurs(path: string): FileAction {
  if (!existsSync(path)) return { path, action: 'absent' };
  if (!readFileSync(path, 'utf8').startsWith(WRITTEN_BY)) return { path, action: 'kept: not written by ccotel' };
  rmSync(path);
  return { path, action: 'removed' };
}

export function installService(options: ServiceOptions): ServiceReport {
  const { env, run } = options;
  const config = loadConfig({}, env);
  const embedded = config.store !== '' && !isServerUrl(config.store);
  const unitDir = userUnitDir(env);
  const report: ServiceReport = { unitDir, files: [], commands: [], manual: [], notes: [] };
  const environmentPath = serviceEnvironmentPath(env);
  const units = renderUnits(options.program, env, embedded, environmentPath);
  const record = readRecord(env) ?? { lingerEnabledByCcotel: false, createdDirs: [] };
  record.createdDirs.push(...makeDirs(unitDir));
  for (const [name, text] of units) report.files.push(writeIfChanged(join(unitDir, name), text));
  const environment = environmentFileText(env);
  if (environment === undefined) {
    if (existsSync(environmentPath)) report.files.push(removeOurs(environmentPath));
  } else {
    record.createdDirs.push(...makeDirs(dirname(environmentPath), 0o700));
    report.files.push(writeIfChanged(environmentPath, environment, 0o600));
  }
  if (!embedded) {
    report.notes.push(
      `no retention timer: the store is ${config.store === '' ? 'off (OTLP only)' : 'a ClickHouse server'}, whose retention runs as one central job (deploy/retention/)`,
    );
  }
  const enabled = [...units.keys()].filter((name) => name !== RETENTION_SERVICE_UNIT);
  const changed = report.files.some((file) => file.action === 'written');
  const systemdSteps: string[][] = [
    ['--user', 'daemon-reload'],
    // A changed unit must replace the running one; an unchanged one is only made sure of.
    ...(changed ? [['--user', 'enable', ...enabled], ['--user', 'restart', ...enabled]] : [['--user', 'enable', '--now', ...enabled]]),
  ];
  const failedAt = systemdSteps.findIndex((args) => !step(report, run, 'systemctl', args));
  if (failedAt >= 0) {
    report.manual.push(...systemdSteps.slice(failedAt).map((args) => `systemctl ${args.join(' ')}`));
    report.notes.push(`systemd's user manager did not answer (${report.commands.at(-1)?.output}); the unit files are in place, run the commands below once it does`);
  }
  record.lingerEnabledByCcotel = enableLinger(report, run, userName(env)) || record.lingerEnabledByCcotel;
  writeRecord(env, record);
  return report;
}

/**
 * Lingering starts the user's manager at boot and keeps it after the last logout (SSH, tmux hosts).
 * Returns whether this call turned it on.
 */
function enableLinger(report: ServiceReport, run: CommandRunner, user: string): boolean {
  const current = run('loginctl', ['show-user', user, '--property=Linger', '--value']);
  if (succeeded(current) && current.stdout.trim() === 'yes') {
    report.notes.push(`lingering is on for ${user}: the sidecar keeps running after logout`);
    return false;
  }
  if (step(report, run, 'loginctl', ['enable-linger', user])) {
    report.notes.push(`lingering enabled for ${user}: the sidecar starts at boot and survives logout`);
    return true;
  }
  report.manual.push(`sudo loginctl enable-linger ${user}`);
  report.notes.push(
    `lingering could not be enabled (${report.commands.at(-1)?.output}): without it the sidecar stops when ${user}'s last session ends; an administrator can run the command below`,
  );
  return false;
}

/** A `*.wants/` link systemctl enable made to one of our units (removed with it when systemctl cannot). */
function wantsLinks(unitDir: string, name: string): string[] {
  return ['default.target.wants', 'timers.target.wants']
    .map((wants) => join(unitDir, wants, name))
    .filter((link) => {
      try {
        return readlinkSync(link) === join(unitDir, name);
      } catch {
        return false;
      }
    });
}

export function uninstallService(options: Pick<ServiceOptions, 'env' | 'run'>): ServiceReport {
  const { env, run } = options;
  const unitDir = userUnitDir(env);
  const report: ServiceReport = { unitDir, files: [], commands: [], manual: [], notes: [] };
  const ours = [RETENTION_TIMER_UNIT, RETENTION_SERVICE_UNIT, SIDECAR_UNIT].filter((name) => {
    const path = join(unitDir, name);
    if (!existsSync(path)) {
      report.files.push({ path, action: 'absent' });
      return false;
    }
    if (readFileSync(path, 'utf8').startsWith(WRITTEN_BY)) return true;
    report.files.push({ path, action: 'kept: not written by ccotel' });
    return false;
  });
  const enabled = ours.filter((name) => name !== RETENTION_SERVICE_UNIT);
  const systemdUp = enabled.length === 0 || step(report, run, 'systemctl', ['--user', 'disable', '--now', ...enabled]);
  for (const name of ours) {
    for (const link of wantsLinks(unitDir, name)) rmSync(link);
    rmSync(join(unitDir, name));
    report.files.push({ path: join(unitDir, name), action: 'removed' });
  }
  if (ours.length > 0 && !(systemdUp && step(report, run, 'systemctl', ['--user', 'daemon-reload']))) {
    report.manual.push(`systemctl --user stop ${enabled.join(' ')}`, 'systemctl --user daemon-reload');
    report.notes.push('systemd did not answer: the unit files are gone, stop whatever still runs with the commands below');
  }
  if (existsSync(serviceEnvironmentPath(env))) report.files.push(removeOurs(serviceEnvironmentPath(env)));
  const record = readRecord(env);
  if (record) {
    // directories it made, innermost first, as long as nothing else was put there since
    for (const dir of [...record.createdDirs].reverse()) if (existsSync(dir) && readdirSync(dir).length === 0) rmdirSync(dir);
    if (record.lingerEnabledByCcotel && !step(report, run, 'loginctl', ['disable-linger', userName(env)])) report.manual.push(`loginctl disable-linger ${userName(env)}`);
    rmSync(recordPath(env), { force: true });
  }
  return report;
}

