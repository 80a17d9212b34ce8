// The directories of a projects root that can hold transcripts, and nothing else: the root, its project
// dirs (`<project>/<session>.jsonl`, legacy `<project>/agent-<id>.jsonl`), session dirs and their
// `subagents` dir (`<project>/<session>/subagents/agent-<id>.jsonl`). The walk lists only those (so it is
// bounded by their shape, whatever else a tree holds) and never follows a symlink: a symlinked directory
// (a loop such as `loop -> ..`, or a link out of the root) is reported once and skipped. A symlinked
// transcript is not read through the link: if its target is itself a transcript inside a root, it is
// followed there, under its own name; any other link is reported once and skipped.
// A root named `sessions` is a Codex home's: its rollouts tree (codex/rollout-tree.ts) is followed the same way.
import type { Dirent } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import type { TranscriptFile } from '../records/transcript.js';
import { isRolloutName, isRolloutPath, isRolloutsRoot, rolloutChildRole, type RolloutDirRole } from './codex/rollout-tree.js';
import { isOutOfDescriptors } from './out-of-descriptors.js';
import { readRegularFileSync } from './regular-file.js';

const AGENT_FILE = /^agent-(.+)\.jsonl$/;

/** What a `.jsonl` path under a root is, or undefined for files that are not transcripts. */
export function classifyTranscriptPath(projectsDir: string, path: string): TranscriptFile | undefined {
  if (!path.endsWith('.jsonl')) return undefined;
  const parts = relative(projectsDir, path).split(sep);
  const name = basename(path);
  if (rootRole(projectsDir) === 'rollouts') return isRolloutPath(parts) ? { path, kind: 'main', agent: 'codex' } : undefined;
  const agent = AGENT_FILE.exec(name);
  // <project>/<session>.jsonl or <project>/agent-<id>.jsonl (legacy subagent layout)
  if (parts.length === 2) {
    return agent ? { path, kind: 'subagent', agentId: agent[1] } : { path, kind: 'main' };
  }
  // <project>/<session>/subagents/agent-<id>.jsonl
  if (parts.length === 4 && parts[2] === 'subagents' && agent) {
    return { path, kind: 'subagent', agentId: agent[1], agentType: readAgentType(path) };
  }
  return undefined;
}

function readAgentType(agentPath: string): string | undefined {
  const metaPath = join(dirname(agentPath), basename(agentPath, '.jsonl') + '.meta.json');
  try {
    const meta = JSON.parse(readRegularFileSync(metaPath)) as { agentType?: unknown };
    return typeof meta.agentType === 'string' ? meta.agentType : undefined;
  } catch {
    return undefined;
  }
}

export interface DiscoveredTranscript extends TranscriptFile {
  size: number;
  mtimeMs: number;
  dev: number;
  ino: number;
}

/** lstat calls in flight at once while discovering: the thread pool's width, not one round trip per file. */
const STATS_AT_ONCE = 16;

/** Claude Code's: root, project, session, subagents; Codex's: rollouts (its sessions dir), year, month, day. */
export type DirRole = 'root' | 'project' | 'session' | 'subagents' | RolloutDirRole;

/** The role of a root: Codex's sessions dir, or a Claude Code projects dir. */
export function rootRole(root: string): 'root' | 'rollouts' {
  return isRolloutsRoot(root) ? 'rollouts' : 'root';
}

function isRolloutRole(role: DirRole): role is RolloutDirRole {
  return role === 'rollouts' || role === 'year' || role === 'month' || role === 'day';
}

export function isRootRole(role: DirRole): boolean {
  return role === 'root' || role === 'rollouts';
}

export interface TreeDir {
  path: string;
  role: DirRole;
}

/** The role of a subdirectory `name` of a `role` dir, or undefined when no transcript can be below it. */
export function childRole(role: DirRole, name: string): DirRole | undefined {
  if (isRolloutRole(role)) return rolloutChildRole(role, name);
  if (role === 'root') return 'project';
  if (role === 'project') return 'session';
  if (role === 'session' && name === 'subagents') return 'subagents';
  return undefined;
}

/** Whether a file `name` directly in a `role` dir is a transcript (or a rollout). */
export function isTranscriptName(role: DirRole, name: string): boolean {
  if (isRolloutRole(role)) return isRolloutName(role, name);
  return (role === 'project' || role === 'subagents') && name.endsWith('.jsonl');
}

export class TranscriptTree {
  /** Paths already reported, so a loop met on every walk is reported once. */
  private readonly reported = new Set<string>();

  constructor(
    readonly roots: string[],
    private readonly log?: (message: string) => void,
  ) {}

  /** The root `path` is under, if any. */
  rootOf(path: string): string | undefined {
    return this.roots.find((root) => path.startsWith(root + sep));
  }

  /**
   * The subdirectories on the transcript shape and the transcripts of one directory; [] when it is gone, and
   * `outOfDescriptors` when it could not be listed for want of a descriptor (nothing is known of it then).
   */
  async list(dir: TreeDir): Promise<{ dirs: TreeDir[]; transcripts: string[]; outOfDescriptors?: boolean }> {
    const listed = { dirs: [] as TreeDir[], transcripts: [] as string[] };
    let entries: Dirent[];
    try {
      entries = await readdir(dir.path, { withFileTypes: true });
    } catch (error) {
      return isOutOfDescriptors(error) ? { ...listed, outOfDescriptors: true } : listed; // else vanished or unreadable: nothing we can use
    }
    for (const entry of entries) {
      const path = join(dir.path, entry.name);
      const role = childRole(dir.role, entry.name);
      const transcriptName = isTranscriptName(dir.role, entry.name);
      if (entry.isSymbolicLink()) {
        if (transcriptName) await this.symlinkedTranscript(path);
        else if (role) await this.symlinkedDirectory(path);
      } else if (entry.isDirectory() && role) {
        listed.dirs.push({ path, role });
      } else if (entry.isFile() && transcriptName) {
        listed.transcripts.push(path);
      }
    }
    return listed;
  }

  /** Every transcript under `root`, calling `onDir` for each directory listed (the root included). */
  async walk(root: string, onDir?: (dir: TreeDir) => void): Promise<string[]> {
    const transcripts: string[] = [];
    const pending: TreeDir[] = [{ path: root, role: rootRole(root) }];
    for (let dir = pending.pop(); dir; dir = pending.pop()) {
      onDir?.(dir);
      const listed = await this.list(dir);
      transcripts.push(...listed.transcripts);
      pending.push(...listed.dirs);
    }
    return transcripts;
  }

  /**
   * Every transcript under the roots. Main transcripts come oldest first, each followed by the subagents of
   * its session dir (a subagent is attached to the tool call that started it, which lives in the main
   * transcript), so a reader that closes sessions idle in record time has read all of a session first.
   * Subagents with no main transcript and legacy `agent-*.jsonl` files (their session is known only from
   * their rows) come last.
   */
  async discover(): Promise<DiscoveredTranscript[]> {
    const found: DiscoveredTranscript[] = [];
    for (const root of this.roots) {
      const paths = await this.walk(root);
      let next = 0;
      const statNext = async (): Promise<void> => {
        for (let path = paths[next++]; path !== undefined; path = paths[next++]) {
          const info = await lstat(path).catch(() => undefined); // undefined: deleted since it was listed
          if (info?.isFile()) found.push({ ...classifyTranscriptPath(root, path)!, size: info.size, mtimeMs: info.mtimeMs, dev: info.dev, ino: info.ino });
        }
      };
      await Promise.all(Array.from({ length: STATS_AT_ONCE }, statNext));
    }
    const byAge = (a: DiscoveredTranscript, b: DiscoveredTranscript) => a.mtimeMs - b.mtimeMs || a.path.localeCompare(b.path);
    const mains = found.filter((file) => file.kind === 'main').sort(byAge);
    const subagentsOf = new Map(mains.map((main) => [main.path.slice(0, -'.jsonl'.length), [] as DiscoveredTranscript[]]));
    const rest: DiscoveredTranscript[] = [];
    for (const file of found) {
      if (file.kind === 'main') continue;
      const ofSession = subagentsOf.get(dirname(dirname(file.path)));
      (ofSession ?? rest).push(file);
    }
    return [...mains.flatMap((main) => [main, ...subagentsOf.get(main.path.slice(0, -'.jsonl'.length))!.sort(byAge)]), ...rest.sort(byAge)];
  }

  /** A `.jsonl` that is a symlink: reported unless its target is a transcript followed under its own name. */
  async symlinkedTranscript(path: string): Promise<void> {
    let target: string;
    try {
      target = await realpath(path);
    } catch (error) {
      this.report(path, `${path} is a broken symlink or a symlink loop (${(error as NodeJS.ErrnoException).code}): not followed`);
      return;
    }
    for (const root of this.roots) {
      const realRoot = await realpath(root).catch(() => root);
      if (target.startsWith(realRoot + sep) && classifyTranscriptPath(realRoot, target)) return;
    }
    this.report(path, `${path} is a symlink to ${target}, which is not a transcript inside a transcript root: not followed`);
  }

  async symlinkedDirectory(path: string): Promise<void> {
    try {
      if (!(await stat(path)).isDirectory()) return;
      this.report(path, `${path} is a symlinked directory: not followed (discovery stays inside the roots)`);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') this.report(path, `${path} is a symlink loop: skipped`);
    }
  }

  private report(path: string, message: string): void {
    if (this.reported.has(path)) return;
    this.reported.add(path);
    this.log?.(message);
  }
}
