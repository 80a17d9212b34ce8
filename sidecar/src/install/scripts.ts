import { chmodSync, copyFileSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

/** Copies the packaged script into binDir (0700 dir), replacing an older copy atomically. */
export function installScript(kind: ScriptKind, binDir: string): string {
  mkdirSync(binDir, { recursive: true, mode: 0o700 });
  const target = installedScriptPath(kind, binDir);
  const temporary = `${target}.tmp-${process.pid}`;
  copyFileSync(packagedScriptPath(kind), temporary);
  chmodSync(temporary, SCRIPTS[kind].mode);
  renameSync(temporary, target);
  return target;
}

/** Quotes a string for POSIX sh, so any path survives being pasted into a hook command. */
export function shQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
