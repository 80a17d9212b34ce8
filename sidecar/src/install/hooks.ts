import { statePaths } from '../paths.js';
import type { AgentName } from '../semconv.js';
import { ensureStateDir } from '../secure-dir.js';
import { HOOK_TIMEOUT_SECONDS, SPOOLED_EVENTS } from './hook-events.js';
import { homeOf, type InstallOptions, type InstallReport } from './options.js';
import { addHandler, callsScript, removeHandlers, userCommandsCalling, writtenBy, type HookHandler } from './settings-hooks.js';
import { enabledPlugin } from './plugin.js';
import { planSettingsChange, readSettings, settingsPathFor, SettingsError, type Settings } from './settings-file.js';
import { installedScriptPath, installScript, SCRIPTS, shQuote, untrustedScriptTest } from './scripts.js';

/**
 * The settings.json handler: the installed script sourced by the `sh -c` Claude Code starts for the command, with
 * the absolute spool dir as its argument. Sourcing saves the second shell that running the script would exec
 * (docs/HOOKS.md: p50 −14 to −22%). The test first: only a script of this user's, in a dir of this user's, runs.
 */
export function spoolHookHandler(scriptPath: string, spoolDir: string, agent?: AgentName): HookHandler {
  const args = agent === undefined ? shQuote(spoolDir) : `${shQuote(spoolDir)} ${agent}`;
  const command = `${untrustedScriptTest(scriptPath)} || { set -- ${args}; . ${shQuote(scriptPath)}; }`;
  return { type: 'command', command, timeout: HOOK_TIMEOUT_SECONDS };
}

/** Handlers as earlier ccotels wrote them, still ccotel's own: sourced after a readability test only, or run as a command. */
const EARLIER_SPOOL_HOOKS = [
  (script: string, spool: string): HookHandler => ({ type: 'command', command: `[ ! -r ${shQuote(script)} ] || { set -- ${shQuote(spool)}; . ${shQuote(script)}; }` }),
  (script: string, spool: string): HookHandler => ({ type: 'command', command: `${shQuote(script)} ${shQuote(spool)}` }),
];

/** The handler `install-hooks --agent codex` writes: the script told its agent, which names its spool files. */
const codexSpoolHook = (script: string, spool: string) => spoolHookHandler(script, spool, 'codex');
const spoolHookForms = [spoolHookHandler, codexSpoolHook, ...EARLIER_SPOOL_HOOKS].map((form) => writtenBy(form, SCRIPTS.hook.name));
export const isSpoolHook = (handler: unknown) => spoolHookForms.some((isForm) => isForm(handler));
const callsSpoolHook = callsScript(SCRIPTS.hook.name);

/** ccotel's handler for every spooled event, except where a user's own command already calls the hook. */
export function withSpoolHooks(settings: Settings, handler: HookHandler): Settings {
  const theirs = new Set(userCommandsCalling(settings, callsSpoolHook, isSpoolHook).map(({ event }) => event));
  return SPOOLED_EVENTS.filter((event) => !theirs.has(event)).reduce((next, event) => addHandler(next, event, handler, isSpoolHook), settings);
}

/** What install and uninstall leave alone, said to the user. */
function userCommandWarnings(path: string, settings: Settings): string[] {
  return userCommandsCalling(settings, callsSpoolHook, isSpoolHook).map(
    ({ event, where }) => `${path}: ${where} calls ${SCRIPTS.hook.name} inside a command of your own; ccotel left it as it is (and adds no second handler for ${event})`,
  );
}

/**
 * Said when the plugin is enabled too (in the file edited, or the user's settings): where these handlers are, the
 * plugin's hook stands down (sidecar/plugin/hooks/ccotel-plugin.sh), so each event is still spooled once.
 */
function pluginWarnings(paths: string[]): string[] {
  for (const path of new Set(paths)) {
    let id: string | undefined;
    try {
      id = enabledPlugin(readSettings(path));
    } catch (error) {
      if (!(error instanceof SettingsError)) throw error; // another file's problem is not this install's
    }
    if (id !== undefined) {
      return [`${path} enables the Claude Code plugin ${id} too: its hook stands down where these handlers are, so each event is spooled once; keep one of the two (ccotel uninstall-hooks, or claude plugin uninstall ${id})`];
    }
  }
  return [];
}

export function withoutSpoolHooks(settings: Settings): Settings {
  return removeHandlers(settings, isSpoolHook);
}

export function installHooks(options: InstallOptions): InstallReport {
  const paths = statePaths(options.env);
  const scriptPath = installedScriptPath('hook', paths.binDir);
  const handler = spoolHookHandler(scriptPath, paths.spoolDir);
  const change = planSettingsChange(settingsPathFor(homeOf(options.env), options.projectDir), (s) => withSpoolHooks(s, handler));
  const warnings = [
    ...userCommandWarnings(change.path, JSON.parse(change.before || '{}') as Settings),
    ...pluginWarnings([change.path, settingsPathFor(homeOf(options.env))]),
  ];
  if (change.changed && JSON.parse(change.after).disableAllHooks === true) {
    warnings.push(`${change.path} sets "disableAllHooks": true, so Claude Code will not run the hook until that is removed`);
  }
  if (options.dryRun) return { change, warnings };
  ensureStateDir(paths, 'spoolDir'); // first: an untrusted spool refuses the install before anything is written
  installScript('hook', paths);
  return { change, backupPath: change.apply(options.now), warnings };
}

/** Removes exactly the handlers installHooks added; the installed script stays for other settings files. */
export function uninstallHooks(options: InstallOptions): InstallReport {
  const change = planSettingsChange(settingsPathFor(homeOf(options.env), options.projectDir), withoutSpoolHooks);
  const warnings = userCommandWarnings(change.path, JSON.parse(change.before || '{}') as Settings);
  if (options.dryRun) return { change, warnings };
  return { change, backupPath: change.apply(options.now), warnings };
}
