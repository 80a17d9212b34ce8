// Tell the tailer which transcript paths may have changed: one inotify watch per directory of the
// transcript shape (TranscriptTree), not one per file, and every event passed on unthrottled (a directory
// watch reports each write to a file in it). New directories are watched and walked as they appear; a root
// that does not exist yet is waited for by watching its nearest existing ancestor, so a sidecar started
// before Claude Code ever ran follows what it writes later. `polling` (network filesystems, or when a
// watch cannot be added: the inotify limits) walks the tree every interval and compares sizes and times.
import { watch, type FSWatcher } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { inodeIdentity } from './inode-identity.js';
import { OUT_OF_DESCRIPTORS_RETRY_MS } from './out-of-descriptors.js';
import { childRole, isRootRole, isTranscriptName, rootRole, TranscriptTree, type TreeDir } from './transcript-tree.js';

export interface TranscriptWatcherOptions {
  tree: TranscriptTree;
  /** A transcript path that may have been created, written, renamed or deleted: the tailer looks. */
  onPath: (path: string) => void;
  usePolling: boolean;
  pollIntervalMs: number;
  log?: (message: string) => void;
}

interface Watched extends TreeDir {
  watcher: FSWatcher;
  /** Which directory is watched: one deleted and created again at the same path is another one, whose old watch sees nothing. */
  identity: string;
}

/** Of a polled file: what tells a change. */
type Seen = `${number}:${number}:${number}`;

export class TranscriptWatcher {
  mode: 'inotify' | 'polling' | 'stopped' = 'stopped';
  private readonly watched = new Map<string, Watched>();
  /** Missing roots, by the existing ancestor watched for them. */
  private readonly waiting = new Map<string, { watcher?: FSWatcher; steps: Map<string, Set<string>> }>();
  private readonly seen = new Map<string, Seen>();
  private pollTimer?: NodeJS.Timeout;
  private polling?: Promise<void>;

  constructor(private readonly options: TranscriptWatcherOptions) {}

  /** Resolves once every existing root is watched (events from then on are reported). */
  async start(): Promise<void> {
    if (this.options.usePolling) return this.startPolling(false);
    this.mode = 'inotify';
    for (const root of this.options.tree.roots) await this.watchRoot(root);
  }

  async stop(): Promise<void> {
    this.mode = 'stopped';
    clearTimeout(this.pollTimer);
    await this.polling;
    this.closeAll();
  }

  /** Watches held (directories, and ancestors of roots still missing). */
  get watchCount(): number {
    return this.watched.size + this.waiting.size;
  }

  private closeAll(): void {
    for (const entry of this.watched.values()) entry.watcher.close();
    for (const entry of this.waiting.values()) entry.watcher?.close();
    this.watched.clear();
    this.waiting.clear();
  }

  /** Watch a root and everything on the transcript shape below it; wait for it when it does not exist. */
  private async watchRoot(root: string, announce = false): Promise<void> {
    const info = await lstat(root).catch(() => undefined);
    if (!info?.isDirectory()) return this.waitFor(root);
    await this.watchTree({ path: root, role: rootRole(root) }, announce);
  }

  /** Watch `top` and its subdirectories; with `announce`, report every transcript found (they are new). */
  private async watchTree(top: TreeDir, announce: boolean): Promise<void> {
    const pending: TreeDir[] = [top];
    for (let dir = pending.pop(); dir && this.mode === 'inotify'; dir = pending.pop()) {
      const identity = await directoryIdentity(dir.path);
      if (identity === undefined) continue; // gone meanwhile: its parent's event says so
      const watched = this.watched.get(dir.path);
      if (watched?.identity === identity) continue;
      if (watched) this.unwatchBelow(dir.path);
      if (!this.addWatch(dir, identity)) continue;
      // Listed after the watch is in place: nothing created in between is missed.
      const listed = await this.options.tree.list(dir);
      if (listed.outOfDescriptors) {
        this.listAgain(dir);
        continue;
      }
      if (announce) for (const path of listed.transcripts) this.options.onPath(path);
      pending.push(...listed.dirs);
    }
  }

  /** A directory that could not be listed (no descriptor left): watched and listed anew a second later, what it holds reported. */
  private listAgain(dir: TreeDir): void {
    this.unwatchBelow(dir.path);
    setTimeout(() => void this.watchTree(dir, true), OUT_OF_DESCRIPTORS_RETRY_MS).unref();
  }

  private addWatch(dir: TreeDir, identity: string): boolean {
    let watcher: FSWatcher;
    try {
      watcher = watch(dir.path, { persistent: false }, (_event, name) => void this.onEvent(dir, name?.toString()));
    } catch (error) {
      this.watchFailed(dir.path, error as NodeJS.ErrnoException);
      return false;
    }
    watcher.on('error', (error) => this.watchFailed(dir.path, error as NodeJS.ErrnoException));
    this.watched.set(dir.path, { ...dir, watcher, identity });
    return true;
  }

  private watchFailed(path: string, error: NodeJS.ErrnoException): void {
    if (error.code === 'ENOENT' || this.mode !== 'inotify') return; // gone meanwhile: its parent's event says so
    // Typically the inotify watch limit: poll everything rather than miss changes.
    this.options.log?.(`cannot watch ${path} (${error.message}); polling every ${this.options.pollIntervalMs} ms instead`);
    this.closeAll();
    void this.startPolling(true); // what changed while the watches were failing is reported by the first walk
  }

  private async onEvent(dir: TreeDir, name: string | undefined): Promise<void> {
    if (this.mode !== 'inotify') return;
    if (name === undefined || (name === basename(dir.path) && (await this.replacedOrGone(dir.path)))) {
      // The directory itself went away, or was deleted and created again (or the kernel gave no name): look again.
      return this.recheckDir(dir);
    }
    const path = join(dir.path, name);
    if (isTranscriptName(dir.role, name)) this.options.onPath(path);
    const role = childRole(dir.role, name);
    if (!role || name.endsWith('.jsonl')) return; // a write to a transcript: no directory to look at
    const info = await lstat(path).catch(() => undefined);
    if (info?.isDirectory()) await this.watchTree({ path, role }, true);
    else if (info?.isSymbolicLink()) await this.options.tree.symlinkedDirectory(path);
    else this.unwatchBelow(path);
  }

  /** Whether the directory watched at `path` is gone or another one now. */
  private async replacedOrGone(path: string): Promise<boolean> {
    return (await directoryIdentity(path)) !== this.watched.get(path)?.identity;
  }

  private async recheckDir(dir: TreeDir): Promise<void> {
    if (await exists(dir.path)) {
      await this.watchTree(dir, true);
      return;
    }
    this.unwatchBelow(dir.path);
    if (isRootRole(dir.role)) await this.watchRoot(dir.path, true);
  }

  private unwatchBelow(top: string): void {
    for (const [path, entry] of this.watched) {
      if (path !== top && !path.startsWith(top + sep)) continue;
      entry.watcher.close();
      this.watched.delete(path);
    }
  }

  /** Watch the nearest existing ancestor of a missing root; when the next step towards it appears, go on. */
  private async waitFor(root: string): Promise<void> {
    let ancestor = dirname(root);
    while (!(await exists(ancestor)) && dirname(ancestor) !== ancestor) ancestor = dirname(ancestor);
    const next = relative(ancestor, root).split(sep)[0];
    const waiting = this.waiting.get(ancestor) ?? { steps: new Map<string, Set<string>>() };
    waiting.steps.set(next, (waiting.steps.get(next) ?? new Set()).add(root));
    this.waiting.set(ancestor, waiting);
    if (!waiting.watcher) {
      try {
        waiting.watcher = watch(ancestor, { persistent: false }, (_event, name) => {
          if (name === null || waiting.steps.has(name.toString())) void this.stepTowards(ancestor);
        });
        waiting.watcher.on('error', () => void this.stepTowards(ancestor));
      } catch (error) {
        this.watchFailed(ancestor, error as NodeJS.ErrnoException);
        return;
      }
    }
    // It may have appeared between the check and the watch.
    if (await exists(join(ancestor, next))) await this.stepTowards(ancestor);
  }

  /** Something appeared next to the roots waited for: watch those that exist now, wait closer for the rest. */
  private async stepTowards(ancestor: string): Promise<void> {
    const waiting = this.waiting.get(ancestor);
    if (!waiting || this.mode !== 'inotify') return;
    waiting.watcher?.close();
    this.waiting.delete(ancestor);
    for (const root of new Set([...waiting.steps.values()].flatMap((roots) => [...roots]))) {
      if (await exists(root)) this.options.log?.(`transcript root ${root} appeared: following it`);
      await this.watchRoot(root, true);
    }
  }

  private async startPolling(reportFirstWalk: boolean): Promise<void> {
    this.mode = 'polling';
    await this.pollOnce(reportFirstWalk);
    const tick = () => {
      this.pollTimer = setTimeout(() => {
        this.polling = this.pollOnce(true).then(() => {
          if (this.mode === 'polling') tick();
        });
      }, this.options.pollIntervalMs);
    };
    tick();
  }

  /** Walk every root and report transcripts that appeared, changed or went away since the last walk. */
  private async pollOnce(report: boolean): Promise<void> {
    const found = new Map<string, Seen>();
    for (const root of this.options.tree.roots) {
      for (const path of await this.options.tree.walk(root)) {
        const info = await lstat(path).catch(() => undefined);
        if (info) found.set(path, `${info.ino}:${info.size}:${info.mtimeMs}`);
      }
    }
    if (report) {
      for (const [path, seen] of found) if (this.seen.get(path) !== seen) this.options.onPath(path);
      for (const path of this.seen.keys()) if (!found.has(path)) this.options.onPath(path);
    }
    this.seen.clear();
    for (const [path, seen] of found) this.seen.set(path, seen);
  }
}

async function exists(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => undefined)) !== undefined;
}

/** A directory's identity (inodeIdentity); undefined when it is not a directory. */
async function directoryIdentity(path: string): Promise<string | undefined> {
  const info = await lstat(path, { bigint: true }).catch(() => undefined);
  return info?.isDirectory() ? inodeIdentity(info) : undefined;
}
