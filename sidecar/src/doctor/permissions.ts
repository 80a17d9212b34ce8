// Permissions: hook events, shell logs, checkpoints, the installation key and the store hold prompts,
// commands and paths, and the scripts in the state dir run as this user in every hook and Bash command:
// only their owner may read or change them (directories 0700, files 0600, the hook script 0700), and no
// parent may let another user replace them. The rules are those `run` and the installs enforce.
import { existsSync, readdirSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { installedScriptPath } from '../install/scripts.js';
import { ancestorProblem, pathProblems, STATE_DIRS, type PathProblem, type StateDir } from '../secure-dir.js';
import { isServerUrl } from '../store/open-store.js';
import { result, type Check } from './check.js';

/**
 * Files of `dir` ending in `suffix` that others may read, and files another user put there (ccotel would read
 * them as this user's events or commands), each reported as one problem.
 */
function untrustedFiles(what: string, dir: string, suffix: string): PathProblem[] {
  let files: Array<{ name: string; info: Stats }>;
  try {
    files = readdirSync(dir)
      .filter((name) => name.endsWith(suffix))
      .flatMap((name) => {
        try {
          return [{ name, info: statSync(join(dir, name)) }];
        } catch {
          return []; // delivered and deleted meanwhile
        }
      });
  } catch {
    return []; // not created yet: nothing to protect
  }
  const uid = process.getuid?.();
  const open = files.filter(({ info }) => (info.mode & 0o077) !== 0);
  const foreign = files.filter(({ info }) => uid !== undefined && info.uid !== uid);
  return [
    ...(open.length === 0 ? [] : [{ problem: `${open.length} of ${files.length} ${what} are readable by others (should be 600), e.g. ${open[0].name}`, fix: `chmod 600 ${dir}/*${suffix}` }]),
    ...(foreign.length === 0 ? [] : [{ problem: `${foreign.length} of ${files.length} ${what} belong to another user, e.g. ${foreign[0].name}`, fix: `look at them and remove them: find ${dir} ! -user ${uid}` }]),
  ];
}

export const permissionsCheck: Check = async (context) => {
  const { paths, store } = context.config;
  const storeDir = store !== '' && !isServerUrl(store) ? store : undefined;
  const expectations = [
    ...(Object.entries(STATE_DIRS) as Array<[StateDir, string]>).map(([dir, what]) => ({ what, path: paths[dir], mode: 0o700 })),
    { what: 'installation key', path: paths.keyPath, mode: 0o600 },
    { what: 'hook script', path: installedScriptPath('hook', paths.binDir), mode: 0o700 },
    { what: 'shell script', path: installedScriptPath('shell', paths.binDir), mode: 0o600 },
    ...(storeDir ? [{ what: 'store dir', path: storeDir, mode: 0o700 }] : []),
  ];
  const problems = [
    // Parents only above the state and store dirs: everything else lives inside those, checked themselves.
    ...[ancestorProblem(STATE_DIRS.stateDir, paths.stateDir), storeDir && ancestorProblem('store dir', storeDir)].filter((p): p is PathProblem => !!p),
    ...expectations.flatMap(({ what, path, mode }) => pathProblems(what, path, mode)),
    ...untrustedFiles('spool files', paths.spoolDir, '.json'),
    ...untrustedFiles('shell log files', paths.shellLogDir, '.jsonl'),
  ];
  const present = expectations.filter(({ path }) => existsSync(path));
  return problems.length === 0
    ? result('permissions', 'ok', `${present.map((e) => e.what).join(', ') || 'nothing created yet'}: private to this user`)
    : result('permissions', 'fail', problems.map((p) => p.problem).join('; '), [...new Set(problems.map((p) => p.fix))].join(' && '));
};
