import { mkdirSync } from 'node:fs';
import { statePaths } from '../paths.js';
import { SPOOLED_EVENTS } from './hook-events.js';
import { homeOf, type InstallOptions, type InstallReport } from './options.js';
import { addHandler, removeHandlers, runsScript, type HookHandler } from './settings-hooks.js';
import { planSettingsChange, settingsPathFor, type Settings } from './settings-file.js';
import { installedScriptPath, installScript, SCRIPTS, shQuote } from './scripts.js';

/**
 * Seconds Claude Code lets the hook run. The hook takes milliseconds; the bound only matters if the
 * spool sits on a hung filesystem, and a timed-out hook never blocks the agent.
 */
export const HOOK_TIMEOUT_SECONDS = 5;

const isSpoolHook = runsScript(SCRIPTS.hook.name);

/** The settings.json handler: the installed script with the absolute spool dir baked in. */
export function spoolHookHandler(scriptPath: string, spoolDir: string): HookHandler {
  return { type: 'command', command: `${shQuote(scriptPath)} ${shQuote(spoolDir)}`, timeout: HOOK_TIMEOUT_SECONDS };
}

export function withSpoolHooks(settings: Settings, handler: HookHandler): Settings {
  return SPOOLED_EVENTS.reduce((next, event) => addHandler(next, event, handler, isSpoolHook), settings);
}

export function withoutSpoolHooks(settings: Settings): Settings {
  return removeHandlers(settings, isSpoolHook);
}

export function installHooks(options: InstallOptions): InstallReport {
  const paths = statePaths(options.env);
  const scriptPath = installedScriptPath('hook', paths.binDir);
  const handler = spoolHookHandler(scriptPath, paths.spoolDir);
  const change = planSettingsChange(settingsPathFor(homeOf(options.env), options.projectDir), (s) => withSpoolHooks(s, handler));
  const warnings: string[] = [];
  if (change.changed && JSON.parse(change.after).disableAllHooks === true) {
    warnings.push(`${change.path} sets "disableAllHooks": true, so Claude Code will not run the hook until that is removed`);
  }
  if (options.dryRun) return { change, warnings };
  installScript('hook', paths.binDir);
  mkdirSync(paths.spoolDir, { recursive: true, mode: 0o700 });
  return { change, backupPath: change.apply(options.now), warnings };
}

/** Removes exactly the handlers installHooks added; the installed script stays for other settings files. */
export function uninstallHooks(options: InstallOptions): InstallReport {
  const change = planSettingsChange(settingsPathFor(homeOf(options.env), options.projectDir), withoutSpoolHooks);
  if (options.dryRun) return { change, warnings: [] };
  return { change, backupPath: change.apply(options.now), warnings: [] };
}
