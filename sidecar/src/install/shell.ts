import { statePaths } from '../paths.js';
import { ensureStateDir } from '../secure-dir.js';
import { HOOK_TIMEOUT_SECONDS } from './hook-events.js';
import { homeOf, type InstallOptions, type InstallReport } from './options.js';
import { addHandler, removeHandlers, writtenBy, type HookHandler } from './settings-hooks.js';
import { planSettingsChange, settingsPathFor, type Settings } from './settings-file.js';
import { installedScriptPath, installScript, SCRIPTS, shQuote, untrustedScriptTest } from './scripts.js';

/**
 * How the shell log gets into Claude Code's Bash tool: Claude Code pastes the files a SessionStart
 * hook wrote to $CLAUDE_ENV_FILE into every Bash tool command, right after its shell snapshot and
 * before the command (checked against Claude Code 2.1.332). So install-shell adds a SessionStart
 * hook that writes one line there: the log dir and `. ccotel-shell.bash`. Only Bash tool shells
 * source it; the user's own terminals and scripts are left alone.
 */
export const SHELL_HOOK_EVENT = 'SessionStart';

/**
 * The line Claude Code will run before each Bash tool command: the script is sourced only when it and its
 * directory are this user's (a planted one would run in every Bash command).
 */
export function shellSourceLine(scriptPath: string, shellLogDir: string): string {
  return `__ccotel_shell_log_dir=${shQuote(shellLogDir)}; ${untrustedScriptTest(scriptPath)} || . ${shQuote(scriptPath)}`;
}

function handlerWriting(line: string): HookHandler {
  return {
    type: 'command',
    command: `[ -z "$CLAUDE_ENV_FILE" ] || printf '%s\\n' ${shQuote(line)} >>"$CLAUDE_ENV_FILE" 2>/dev/null; exit 0`,
    timeout: HOOK_TIMEOUT_SECONDS,
  };
}

export function shellHookHandler(scriptPath: string, shellLogDir: string): HookHandler {
  return handlerWriting(shellSourceLine(scriptPath, shellLogDir));
}

/** The handler of an earlier ccotel, whose line sourced the script unchecked: still ccotel's own. */
const earlierShellHookHandler = (scriptPath: string, shellLogDir: string) => handlerWriting(`__ccotel_shell_log_dir=${shQuote(shellLogDir)}; . ${shQuote(scriptPath)}`);

const shellHookForms = [shellHookHandler, earlierShellHookHandler].map((form) => writtenBy(form, SCRIPTS.shell.name));
const isShellHook = (handler: unknown) => shellHookForms.some((isForm) => isForm(handler));

export function withShellHook(settings: Settings, handler: HookHandler): Settings {
  return addHandler(settings, SHELL_HOOK_EVENT, handler, isShellHook);
}

export function withoutShellHook(settings: Settings): Settings {
  return removeHandlers(settings, isShellHook);
}

export function installShell(options: InstallOptions): InstallReport {
  const paths = statePaths(options.env);
  const handler = shellHookHandler(installedScriptPath('shell', paths.binDir), paths.shellLogDir);
  const change = planSettingsChange(settingsPathFor(homeOf(options.env), options.projectDir), (s) => withShellHook(s, handler));
  if (options.dryRun) return { change, warnings: [] };
  ensureStateDir(paths, 'shellLogDir'); // first: an untrusted log dir refuses the install before anything is written
  installScript('shell', paths);
  return { change, backupPath: change.apply(options.now), warnings: [] };
}

/**
 * Removes the SessionStart hook. The script stays: sessions already running still source it, and
 * a missing file would put an error in front of every Bash command's output.
 */
export function uninstallShell(options: InstallOptions): InstallReport {
  const change = planSettingsChange(settingsPathFor(homeOf(options.env), options.projectDir), withoutShellHook);
  if (options.dryRun) return { change, warnings: [] };
  return { change, backupPath: change.apply(options.now), warnings: [] };
}
