// Follow every settings file Claude Code reads (issue 37): managed policy (/etc/claude-code/managed-settings.json and
// its managed-settings.d drop-ins), each config dir's settings.json, and each project directory a session ran in
// (.claude/settings.json, .claude/settings.local.json). Each is looked at every interval (a stat; read only when
// its size, times or inode moved); a version whose permission-relevant view (settings-view.ts) differs
// from the last one is handed over with the view it replaced. A rewrite that changes nothing in that view is no
// version. Files are read as input is everywhere else: never blocking (a FIFO), only regular files, at most
// MAX_SETTINGS_BYTES; a file that does not parse keeps its last version and is reported once.
//
// Every version is kept with the time it came into force (the file's modification time), so the rules in force at
// any moment are known from the first look at a file on: a turn before that has no known rules. The versions
// acknowledged by the sinks are written to a state file, so a restart neither repeats nor misses a change.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse, type ParseError } from 'jsonc-parser';
import type { Ack } from '../model.js';
import type { RulesInForce, SettingsChanged, SettingsScope, SettingsVersion, SettingsView } from '../events/settings.js';
import { diffViews, EMPTY_VIEW, mergeViews, settingsView, viewFingerprint } from './settings-view.js';
import { readRegularFileSync } from './regular-file.js';
import { writeFileAtomic, type StateWrites } from './state-file.js';

/** The precedence of the scopes, lowest first: a value of a later scope overrides an earlier one. */
const PRECEDENCE: readonly SettingsScope[] = ['user', 'project', 'local', 'managed'];

export const MAX_SETTINGS_BYTES = 1024 * 1024;
/** Versions of a file kept for the rules at a past moment (the catch-up after a restart reads turns of the past). */
const VERSIONS_KEPT = 20;
/** A project with no session for this long is a quiet one: its files are looked at every QUIET_PROJECT_LOOK_MS. */
const ACTIVE_MS = 30 * 60_000;
/** How often a quiet project's files are looked at (a host keeps every project it ever ran a session in). */
const QUIET_PROJECT_LOOK_MS = 60_000;

/** A new version as seen, before it is handed over with what changed. */
type Seen = Omit<SettingsChanged, 'changes'>;

interface WatchedFile {
  path: string;
  scope: SettingsScope;
  /** The project directory of a project or local file. */
  project?: string;
  /** Oldest first; the last is the one in force now. */
  versions: SettingsVersion[];
  /** size, times and inode at the last read: unchanged, the file is not read again. */
  signature?: string;
  /** The last parse error reported, so it is reported once. */
  broken?: string;
  /** When a follow-mode look last read it. */
  lookedAtMs?: number;
  /** A new version seen once while following: handed over when the next look finds the file the same. */
  unsettled?: { change: Seen; signature: string | undefined };
}

interface SavedState {
  version: 1;
  projects: string[];
  files: Record<string, SettingsVersion[]>;
}

export interface SettingsWatcherOptions {
  /** Config dirs (each one's settings.json is the user's). */
  configDirs: string[];
  /** Managed policy dir (default /etc/claude-code). */
  managedDir: string;
  /** A keyed digest for credential values (the installation key's fingerprint). */
  digest: (value: string) => string;
  emit: (change: SettingsChanged, ack: Ack) => void;
  intervalMs: number;
  /** Follow mode: where acknowledged versions are kept. */
  statePath?: string;
  stateWrites?: StateWrites;
  log?: (message: string) => void;
}

const run = promisify(execFile);

export class SettingsWatcher {
  private readonly files = new Map<string, WatchedFile>();
  /** The same files: those every directory reads (user, managed), and each project directory's own. */
  private readonly sharedFiles: WatchedFile[] = [];
  private readonly projectFiles = new Map<string, WatchedFile[]>();
  private readonly projects = new Set<string>();
  /** When a session last ran in each project directory. */
  private readonly activeAt = new Map<string, number>();
  /** Acknowledged versions by file: what the state file holds. */
  private readonly acknowledged = new Map<string, SettingsVersion[]>();
  private timer?: NodeJS.Timeout;
  private polling: Promise<void> = Promise.resolve();

  constructor(private readonly options: SettingsWatcherOptions) {
    const saved = this.loadState();
    for (const [path, versions] of Object.entries(saved.files)) this.acknowledged.set(path, versions);
    for (const dir of options.configDirs) this.add(join(dir, 'settings.json'), 'user');
    this.add(join(options.managedDir, 'managed-settings.json'), 'managed');
    for (const project of saved.projects) this.register(project);
  }

  /** Read every file once now (backfill): each new version is handed over at once. */
  async readAll(): Promise<void> {
    this.addManagedDropIns();
    for (const file of this.files.values()) {
      file.lookedAtMs = Date.now();
      await this.look(file, false);
    }
  }

  /**
   * Follow: a new version is handed over at the next look if the file is still the same then: an editor that writes
   * in two steps makes one change, and the ConfigChange hook Claude Code fires on noticing it comes first.
   */
  private async poll(): Promise<void> {
    this.addManagedDropIns();
    const now = Date.now();
    for (const file of this.files.values()) {
      const quiet = file.project !== undefined && this.idle(file.project, now) && !file.unsettled;
      if (quiet && now - (file.lookedAtMs ?? 0) < QUIET_PROJECT_LOOK_MS) continue;
      file.lookedAtMs = now;
      await this.look(file, true);
    }
  }

  /** No session ran in `dir` for ACTIVE_MS (or none since the start): its files are looked at less often. */
  private idle(dir: string, now: number): boolean {
    return now - (this.activeAt.get(dir) ?? 0) >= ACTIVE_MS;
  }

  /** Read every file (the rules of the first turns read are known), then look again every interval. */
  async start(): Promise<void> {
    await this.readAll();
    const tick = () => {
      this.polling = this.polling.then(() => this.poll()).catch((error: unknown) => this.options.log?.(`settings: ${(error as Error).message}`));
      void this.polling.then(() => {
        if (this.timer) this.timer = setTimeout(tick, this.options.intervalMs);
      });
    };
    this.timer = setTimeout(tick, this.options.intervalMs);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.polling;
  }

  /**
   * A session ran in `dir`: its project files are followed from now on, and read at once when new or quiet until
   * now (a change made while they were looked at seldom is in force from its modification time all the same).
   */
  watchProject(dir: string): void {
    if (dir === '') return;
    const now = Date.now();
    const lookNow = !this.projects.has(dir) || this.idle(dir, now);
    this.activeAt.set(dir, now);
    if (!this.projects.has(dir)) this.register(dir);
    if (lookNow) for (const file of this.filesOf(dir)) this.lookSync(file);
  }

  private register(dir: string): void {
    this.projects.add(dir);
    this.add(join(dir, '.claude', 'settings.json'), 'project', dir);
    this.add(join(dir, '.claude', 'settings.local.json'), 'local', dir);
  }

  /** The rules in force in `dir` at `timeMs`, or undefined when a file's version then is not known. */
  rulesAt(dir: string, timeMs: number): RulesInForce | undefined {
    const inForce: SettingsVersion[] = [];
    for (const file of [...this.sharedFiles, ...this.filesOf(dir)]) {
      const version = versionAt(file.versions, timeMs);
      if (version === null) return undefined;
      if (version) inForce.push(version);
    }
    inForce.sort((a, b) => PRECEDENCE.indexOf(a.scope) - PRECEDENCE.indexOf(b.scope) || a.path.localeCompare(b.path));
    const view = mergeViews(inForce.map((version) => version.view));
    return { fingerprint: viewFingerprint(view), view, files: inForce.filter((v) => v.present).map(({ path, scope, fingerprint }) => ({ path, scope, fingerprint })) };
  }

  private filesOf(dir: string): WatchedFile[] {
    return this.projectFiles.get(dir) ?? [];
  }

  private add(path: string, scope: SettingsScope, project?: string): void {
    if (this.files.has(path)) return;
    const file: WatchedFile = { path, scope, project, versions: [...(this.acknowledged.get(path) ?? [])] };
    this.files.set(path, file);
    if (project === undefined) this.sharedFiles.push(file);
    else this.projectFiles.set(project, [...this.filesOf(project), file]);
  }

  private addManagedDropIns(): void {
    const dir = join(this.options.managedDir, 'managed-settings.d');
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) if (name.endsWith('.json')) this.add(join(dir, name), 'managed');
  }

  /**
   * Look at a file. A new version is in force from when it is seen (the rules of a turn read meanwhile are known);
   * it is handed over, with its owner and git provenance, at once or (settle) once the next look finds the file the
   * same. A version replaced before it settled is not handed over: the next one is told as the change from the one
   * before it.
   */
  private async look(file: WatchedFile, settle: boolean): Promise<void> {
    const waiting = file.unsettled;
    file.unsettled = undefined;
    const info = statOf(file.path);
    const now = info && signature(info);
    if (waiting && waiting.signature === now) {
      this.hand(file, waiting.change);
      return;
    }
    const seen = this.read(file, info);
    if (!seen) {
      if (waiting) file.unsettled = { ...waiting, signature: now };
      return;
    }
    inForce(file, seen);
    const change: Seen = waiting ? { ...seen, previous: waiting.change.previous } : seen;
    if (change.previous && change.previous.present === change.present && change.previous.fingerprint === change.fingerprint) return; // back as it was
    const withGit = { ...change, git: change.present ? await gitProvenance(file.path) : undefined };
    if (settle) file.unsettled = { change: withGit, signature: now };
    else this.hand(file, withGit);
  }

  /**
   * As `look`, at once and without the git provenance (a look from inside a pipeline round must not wait): a version
   * waiting to settle is handed over first.
   */
  private lookSync(file: WatchedFile): void {
    if (file.unsettled) this.hand(file, file.unsettled.change);
    file.unsettled = undefined;
    const change = this.read(file, statOf(file.path));
    if (!change) return;
    inForce(file, change);
    this.hand(file, change);
  }

  private hand(file: WatchedFile, seen: Seen): void {
    const change = { ...seen, changes: diffViews(seen.previous?.view ?? EMPTY_VIEW, seen.view) };
    this.options.emit(change, () => this.acknowledge(file.path, versionOf(change)));
  }

  /** The file's new version, if its view changed since the last look (`info`: its stat now, none when it is gone). */
  private read(file: WatchedFile, info: Stats | undefined): Seen | undefined {
    const last = file.versions.at(-1);
    if (!info) {
      file.signature = undefined;
      // Gone: a change if it was there; never seen, it is taken as absent since ever (most projects have none).
      if (last && !last.present) return undefined;
      const gone = { path: file.path, scope: file.scope, fromMs: last ? Date.now() : 0, present: false, view: EMPTY_VIEW, fingerprint: viewFingerprint(EMPTY_VIEW) };
      if (!last) {
        inForce(file, gone);
        return undefined;
      }
      return { ...gone, previous: last };
    }
    if (signature(info) === file.signature) return undefined;
    const view = this.parse(file, info);
    if (!view) return undefined;
    file.signature = signature(info);
    const fingerprint = viewFingerprint(view);
    if (last?.present && last.fingerprint === fingerprint) return undefined;
    return {
      path: file.path, scope: file.scope, fromMs: Math.floor(info.mtimeMs), present: true, view, fingerprint,
      ...(last ? { previous: last } : {}),
      owner: { uid: info.uid, name: userNameOf(info.uid) },
    };
  }

  private parse(file: WatchedFile, info: Stats): SettingsView | undefined {
    let problem: string;
    try {
      const errors: ParseError[] = [];
      const settings: unknown = parse(readRegularFileSync(file.path, { followSymlink: true, maxBytes: MAX_SETTINGS_BYTES }), errors, { allowTrailingComma: true });
      if (errors.length === 0) {
        file.broken = undefined;
        return settingsView(settings, this.options.digest);
      }
      problem = `not JSON (at offset ${errors[0].offset})`;
    } catch (error) {
      problem = (error as Error).message;
    }
    if (file.broken !== problem) this.options.log?.(`settings file ${file.path} ignored until it changes: ${problem}; its last version stays in force`);
    file.broken = problem;
    file.signature = signature(info);
    return undefined;
  }

  private acknowledge(path: string, version: SettingsVersion): void {
    const versions = [...(this.acknowledged.get(path) ?? []), version].slice(-VERSIONS_KEPT);
    this.acknowledged.set(path, versions);
    const { statePath, stateWrites } = this.options;
    if (!statePath || !stateWrites) return;
    const state: SavedState = { version: 1, projects: [...this.projects], files: Object.fromEntries(this.acknowledged) };
    stateWrites.attempt(statePath, () => writeFileAtomic(statePath, JSON.stringify(state), false));
  }

  private loadState(): SavedState {
    const empty: SavedState = { version: 1, projects: [], files: {} };
    if (!this.options.statePath) return empty;
    try {
      const saved = JSON.parse(readRegularFileSync(this.options.statePath)) as SavedState;
      return saved.version === 1 ? saved : empty;
    } catch {
      return empty;
    }
  }
}

/** A version seen is in force from its time on (for the rules of the turns read meanwhile). */
function inForce(file: WatchedFile, version: SettingsVersion): void {
  file.versions.push(versionOf(version));
  if (file.versions.length > VERSIONS_KEPT) file.versions.shift();
}

function statOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** What changes whenever a file's content may have: then it is read again. */
function signature(info: Stats): string {
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
}

function versionOf({ path, scope, fromMs, present, view, fingerprint }: SettingsVersion): SettingsVersion {
  return { path, scope, fromMs, present, view, fingerprint };
}

/** The version in force at `timeMs`: undefined when the file was absent then, null when it is not known. */
function versionAt(versions: readonly SettingsVersion[], timeMs: number): SettingsVersion | undefined | null {
  const version = versions.findLast((v) => v.fromMs <= timeMs);
  if (!version) return null;
  return version.present ? version : undefined;
}

let passwd: Map<number, string> | undefined;
function userNameOf(uid: number): string | undefined {
  passwd ??= new Map(
    (() => {
      try {
        return readFileSync('/etc/passwd', 'utf8').split('\n').map((line) => line.split(':')).filter((f) => f.length > 2).map((f) => [Number(f[2]), f[0]] as [number, string]);
      } catch {
        return [];
      }
    })(),
  );
  return passwd.get(uid);
}

/**
 * The last commit that touched `path`, with no repository configuration able to run a program (fsmonitor, hooks):
 * the directory may be anyone's checkout. None when git is missing, the file is not tracked, or it takes too long.
 */
async function gitProvenance(path: string): Promise<SettingsChanged['git']> {
  const dir = join(path, '..');
  const git = (...args: string[]) => run('git', ['-C', dir, '-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', ...args], { timeout: 5_000 });
  try {
    const { stdout } = await git('log', '-1', '--format=%H%x09%an', '--', path);
    const [commit, author] = stdout.trim().split('\t');
    if (!commit) return undefined;
    const uncommitted = await git('diff', '--quiet', 'HEAD', '--', path).then(() => false, () => true);
    return { commit, author: author ?? '', uncommitted };
  } catch {
    return undefined;
  }
}
