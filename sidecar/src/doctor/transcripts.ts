// Transcript roots: found, readable, and what the newest record says (for the clock check).
import { accessSync, constants, openSync, readSync, closeSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { homeOf } from '../install/options.js';
import { discoverTranscripts, transcriptRoots } from '../sources/transcript-discovery.js';
import { result, type Check } from './check.js';

const TAIL_BYTES = 64 * 1024;

/** The newest `"timestamp"` among the last lines of a transcript. */
function lastRecordTime(path: string, size: number): number | undefined {
  const length = Math.min(size, TAIL_BYTES);
  const buffer = Buffer.alloc(length);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buffer, 0, length, size - length);
  } finally {
    closeSync(fd);
  }
  let newest: number | undefined;
  for (const match of buffer.toString('utf8').matchAll(/"timestamp":"([^"]+)"/g)) {
    const time = Date.parse(match[1]!);
    if (!Number.isNaN(time)) newest = Math.max(newest ?? time, time);
  }
  return newest;
}

/** This user may not access `path` with `mode` (R_OK, X_OK). */
export function unreadable(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return false;
  } catch {
    return true;
  }
}

export const transcriptsCheck: Check = async (context) => {
  const env = context.env as NodeJS.ProcessEnv;
  const roots = transcriptRoots(env, homeOf(env));
  if (roots.length === 0) {
    const home = homeOf(env);
    return result(
      'transcripts',
      'fail',
      `no transcript root: none of ${[env.CLAUDE_CONFIG_DIR, join(home, '.claude'), join(home, '.config', 'claude')].filter(Boolean).join(', ')} has a projects/ directory`,
      'run Claude Code once as this user, or set CLAUDE_CONFIG_DIR to the directory Claude Code uses (where projects/ is)',
    );
  }
  const notDirectories = roots.filter((root) => !statSync(root).isDirectory());
  if (notDirectories.length > 0) {
    return result('transcripts', 'fail', `${notDirectories.join(', ')} is not a directory, so Claude Code cannot keep transcripts there`, `move it away; Claude Code recreates ${notDirectories[0]} as a directory`);
  }
  const problems: string[] = [];
  for (const root of roots) {
    if (unreadable(root, constants.R_OK | constants.X_OK)) problems.push(root);
    else for (const project of readdirSync(root)) {
      const path = join(root, project);
      if (statSync(path).isDirectory() && unreadable(path, constants.R_OK | constants.X_OK)) problems.push(path);
    }
  }
  const transcripts = problems.length > 0 ? [] : await discoverTranscripts(roots);
  problems.push(...transcripts.filter((file) => unreadable(file.path, constants.R_OK)).map((file) => file.path));
  if (problems.length > 0) {
    return result(
      'transcripts',
      'fail',
      `${problems.length} transcript ${problems.length === 1 ? 'path is' : 'paths are'} not readable by this user: ${problems.slice(0, 5).join(', ')}${problems.length > 5 ? ', …' : ''}`,
      `run the sidecar as the user that runs Claude Code, or give it read access (chmod u+rX ${problems[0]})`,
    );
  }
  const newest = transcripts.reduce<(typeof transcripts)[number] | undefined>((best, file) => (!best || file.mtimeMs > best.mtimeMs ? file : best), undefined);
  if (newest) {
    context.facts.newestTranscriptMtimeMs = newest.mtimeMs;
    context.facts.newestTranscriptRecordMs = lastRecordTime(newest.path, newest.size);
  }
  return result(
    'transcripts',
    'ok',
    `${roots.join(', ')}: ${transcripts.length} transcripts readable${newest ? `, newest written ${new Date(newest.mtimeMs).toISOString()}` : ' (none yet)'}`,
  );
};
