// `ccotel install-shell --agent codex`: the commands Codex runs source the shell log script. Codex runs a command as
// `bash -lc <command>` with the environment its `[shell_environment_policy]` gives, so one marked block in config.toml
// sets BASH_ENV (bash sources that file in every non-interactive shell, a login one too) and the log dir there; the
// script logs where CODEX_THREAD_ID (every release) is set, with CODEX_TOOL_CALL_ID (0.171) naming the call, so each
// command's span goes under its exec_command span (correlate-shell.ts). Only bash reads BASH_ENV, and every bash
// script such a command starts sources it too (each logs itself under the same call), as HOOKS.md says of BASH_ENV.
import { join } from 'node:path';
import type { InstallReport } from '../../install/options.js';
import { installedScriptPath, installScript } from '../../install/scripts.js';
import { planTextChange } from '../../install/settings-file.js';
import { statePaths } from '../../paths.js';
import { ensureStateDir } from '../../secure-dir.js';
import { withBlock, withoutBlock } from './config-block.js';
import { codexHomeOf, type CodexInstallOptions } from './install-hooks.js';

const SHELL_BLOCK = 'install-shell: the commands Codex runs source the shell log script (ccotel uninstall-shell --agent codex removes this block)';

/**
 * Whether the user's own text already sets `shell_environment_policy.set` (a `[shell_environment_policy.set]` table,
 * a `set` key of `[shell_environment_policy]`, or the dotted key): a second definition would make Codex refuse the file.
 */
function setsPolicyEnvironment(text: string): boolean {
  let table = '';
  for (const line of text.split('\n')) {
    const header = /^\s*\[\s*([^\]]+?)\s*\]/.exec(line);
    if (header) table = header[1].replace(/\s+/g, '');
    if (table === 'shell_environment_policy.set' || /^\s*shell_environment_policy\s*\.\s*set\b/.test(line)) return true;
    if (table === 'shell_environment_policy' && /^\s*set\s*[.=]/.test(line)) return true;
  }
  return false;
}

function plan(options: CodexInstallOptions, install: boolean) {
  const configPath = join(codexHomeOf(options), 'config.toml');
  const paths = statePaths(options.env);
  const warnings: string[] = [];
  const change = planTextChange(configPath, (text) => {
    if (!install) return withoutBlock(text, SHELL_BLOCK);
    if (setsPolicyEnvironment(withoutBlock(text, SHELL_BLOCK))) {
      warnings.push(`${configPath} sets shell_environment_policy.set itself: ccotel changed nothing; add BASH_ENV = ${JSON.stringify(installedScriptPath('shell', paths.binDir))} there to log the commands Codex runs`);
      return text;
    }
    const variables = { BASH_ENV: installedScriptPath('shell', paths.binDir), __ccotel_shell_log_dir: paths.shellLogDir };
    return withBlock(text, SHELL_BLOCK, ['[shell_environment_policy.set]', ...Object.entries(variables).map(([name, value]) => `${name} = ${JSON.stringify(value)}`)]);
  });
  return { paths, change, warnings };
}

export function installCodexShell(options: CodexInstallOptions): InstallReport {
  const { paths, change, warnings } = plan(options, true);
  if (options.dryRun) return { change, warnings };
  ensureStateDir(paths, 'shellLogDir'); // first: an untrusted log dir refuses the install before anything is written
  installScript('shell', paths);
  return { change, backupPath: change.apply(options.now), warnings };
}

/** Takes the block out; the script stays, as `uninstall-shell` leaves it for Claude Code. */
export function uninstallCodexShell(options: CodexInstallOptions): InstallReport {
  const { change, warnings } = plan(options, false);
  return { change, backupPath: options.dryRun ? undefined : change.apply(options.now), warnings };
}
