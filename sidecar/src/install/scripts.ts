import { randomBytes } from 'node:crypto';
import { chmodSync, constants, copyFileSync, existsSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StatePaths } from '../paths.js';
import { ensureStateDir } from '../secure-dir.js';

/** The shell scripts ccotel installs, by file name, and where they live in the package. */
export const SCRIPTS = {
  hook: { name: 'ccotel-hook.sh', packagePath: 'sidecar/hook/ccotel-hook.sh', mode: 0o700 },
  shell: { name: 'ccotel-shell.bash', packagePath: 'sidecar/shell/ccotel-shell.bash', mode: 0o600 },
} as const;

export type ScriptKind = keyof typeof SCRIPTS;

/** The package root: the nearest folder above this module holding the scripts (works from src/ and dist/). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, SCRIPTS.hook.packagePath))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find ${SCRIPTS.hook.packagePath} above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  return dir;
}

export function packagedScriptPath(kind: ScriptKind): string {
  return join(packageRoot(), SCRIPTS[kind].packagePath);
}

/** Where settings.json and CLAUDE_ENV_FILE refer to the script: a private copy under the state dir. */
export function installedScriptPath(kind: ScriptKind, binDir: string): string {
  return join(binDir, SCRIPTS[kind].name);
}

/**
 * Copies the packaged script into the private script dir, replacing an older copy atomically: a new file
 * (never one already there) in the same dir, renamed over it, so a hook never sources half a script.
 */
export function installScript(kind: ScriptKind, paths: StatePaths): string {
  const target = installedScriptPath(kind, ensureStateDir(paths, 'binDir'));
  const temporary = `${target}.tmp-${randomBytes(6).toString('hex')}`;
  copyFileSync(packagedScriptPath(kind), temporary, constants.COPYFILE_EXCL);
  chmodSync(temporary, SCRIPTS[kind].mode);
  renameSync(temporary, target);
  return target;
}

/**
 * The test a handler runs before it sources an installed script: true (and so nothing is sourced) unless the
 * script and its directory are this user's (`-O`, a builtin test: no process). A script another user planted,
 * or one in a directory another user could swap it in, is never run; neither is a missing or unreadable one,
 * since `.` of that exits 2, which Claude Code takes as "block". (`dir/.` keeps the path a prefix of the
 * script's, which is how ccotel tells its own handlers.)
 */
export function untrustedScriptTest(scriptPath: string): string {
  const script = shQuote(scriptPath);
  return `[ ! -O ${shQuote(`${dirname(scriptPath)}/.`)} ] || [ ! -O ${script} ] || [ ! -r ${script} ]`;
}

/** Quotes a string for POSIX sh, so any path survives being pasted into a hook command. */
export function shQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
