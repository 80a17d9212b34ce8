// The directories ccotel keeps its state in (events, shell logs, read positions, the scripts settings.json
// runs, the store) are private to their owner. Another local user who could write one could read prompts,
// plant events, or replace the hook script that then runs as this user. So every such directory is
// created 0700; an existing one of ours that is open to others is made 0700; one another user owns, or one
// under a parent in which another user could replace it, is refused. Modes and owners are checked, not
// tried: root may write anywhere, and what matters is who else can.
import { chmodSync, mkdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type { StatePaths } from './paths.js';

/** A directory ccotel will not use: someone else could have written what is in it. */
export class UntrustedPathError extends Error {}

/** A problem found on a path, and the command that fixes it. */
export interface PathProblem {
  problem: string;
  fix: string;
}

/** The directories of the state dir, by what they hold (the names errors and `doctor` use). */
export const STATE_DIRS = {
  stateDir: 'state dir',
  binDir: 'script dir',
  spoolDir: 'spool dir',
  shellLogDir: 'shell log dir',
  checkpointDir: 'checkpoint dir',
  deadLetterDir: 'dead-letter dir',
  otlpQueueDir: 'OTLP queue dir',
} as const satisfies Partial<Record<keyof StatePaths, string>>;

export type StateDir = keyof typeof STATE_DIRS;

const ELSEWHERE = 'move it away, or point ccotel at a directory of your own (CCOTEL_STATE_DIR, CCOTEL_DATA_DIR, --store)';

const ownUid = (): number | undefined => process.getuid?.();

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** Every existing directory above `path`, as written and as resolved (a symlink's target has parents of its own). */
function existingAncestors(path: string): string[] {
  const above = (from: string) => {
    const dirs: string[] = [];
    for (let dir = dirname(from); ; dir = dirname(dir)) {
      dirs.push(dir);
      if (dirname(dir) === dir) return dirs;
    }
  };
  const written = resolve(path);
  let deepest = written;
  while (!statOrUndefined(deepest)) deepest = dirname(deepest);
  const real = join(realpathSync(deepest), relative(deepest, written));
  return [...new Set([...above(written), ...above(real)])].filter((dir) => statOrUndefined(dir));
}

/**
 * The first parent of `path` in which another user could replace it: one anyone may write without the
 * sticky bit, or one that belongs to someone other than this user and root.
 */
function openAncestor(path: string): PathProblem | undefined {
  const uid = ownUid();
  for (const dir of existingAncestors(path)) {
    const info = statSync(dir);
    if (uid !== undefined && info.uid !== uid && info.uid !== 0) {
      return { problem: `${dir} belongs to uid ${info.uid}`, fix: ELSEWHERE };
    }
    if ((info.mode & 0o002) !== 0 && (info.mode & 0o1000) === 0) {
      return { problem: `${dir} is world-writable (${(info.mode & 0o777).toString(8)}) without the sticky bit`, fix: `chmod o-w ${dir}` };
    }
  }
  return undefined;
}

/** A parent of an existing `path` in which another user could replace it, for `doctor`. */
export function ancestorProblem(what: string, path: string): PathProblem | undefined {
  const ancestor = statOrUndefined(path) && openAncestor(path);
  return ancestor && { problem: `${ancestor.problem}, so another user could replace ${what} ${path}`, fix: ancestor.fix };
}

/**
 * What makes `path` itself untrusted, changing nothing (for `doctor`): another owner, or a mode open to
 * others (`mode` is what it should be). A missing path has no problem.
 */
export function pathProblems(what: string, path: string, mode: number): PathProblem[] {
  const info = statOrUndefined(path);
  if (!info) return [];
  const problems: PathProblem[] = [];
  const uid = ownUid();
  if (uid !== undefined && info.uid !== uid) problems.push({ problem: `${what} ${path} belongs to uid ${info.uid}, not to this user (${uid})`, fix: `chown -R ${uid} ${path}` });
  if ((info.mode & 0o077) !== 0) problems.push({ problem: `${what} ${path} is ${(info.mode & 0o777).toString(8)}, should be ${mode.toString(8)}`, fix: `chmod ${mode.toString(8)} ${path}` });
  return problems;
}

/**
 * `mkdir -p` with 0700 directories whatever the umask, then: refused (UntrustedPathError) when another user
 * owns it or could replace it; made 0700 when it is ours and open to others. Returns the directory.
 */
export function ensurePrivateDir(dir: string, what = 'directory'): string {
  const refuse = (why: string, fix: string) =>
    new UntrustedPathError(`${what} ${dir} is not used: ${why}, so another user could change what ccotel keeps or runs there; ${fix}`);
  const ancestor = openAncestor(dir);
  if (ancestor) throw refuse(`its parent ${ancestor.problem}`, ancestor.fix);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const info = statSync(dir);
  const uid = ownUid();
  if (uid !== undefined && info.uid !== uid) throw refuse(`it belongs to uid ${info.uid}, not to this user (uid ${uid})`, ELSEWHERE);
  if ((info.mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
  return dir;
}

/**
 * One directory of the state dir, private. The state dir is made so first: a 0777 state dir of ours is
 * then fixed, not refused as an open parent of its subdirectory.
 */
export function ensureStateDir(paths: StatePaths, dir: StateDir): string {
  ensurePrivateDir(paths.stateDir, STATE_DIRS.stateDir);
  return ensurePrivateDir(paths[dir], STATE_DIRS[dir]);
}

/** Every directory of the state dir, private: what `run` and `backfill` make sure of before anything else. */
export function ensureStateDirs(paths: StatePaths): void {
  for (const [dir, what] of Object.entries(STATE_DIRS) as Array<[StateDir, string]>) ensurePrivateDir(paths[dir], what); // the state dir first
}
