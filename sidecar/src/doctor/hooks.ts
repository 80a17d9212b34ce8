// Hooks installed (the same handler install-hooks writes, found with its settings helpers, or the ccotel plugin
// enabled in the same settings) and firing: the age of the newest spooled event against the newest transcript
// activity, and the hook's own count of events it had to drop.
import { accessSync, constants, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { spoolHookHandler, withSpoolHooks } from '../install/hooks.js';
import { homeOf } from '../install/options.js';
import { enabledPlugin } from '../install/plugin.js';
import { installedScriptPath } from '../install/scripts.js';
import { planSettingsChange, readSettings, settingsPathFor, SettingsError } from '../install/settings-file.js';
import { age, result, type Check, type CheckResult } from './check.js';

/** Hook activity older than the newest transcript write by more than this means the hook is not running. */
const FIRING_TOLERANCE_MS = 10 * 60_000;

const RESTART_SESSIONS = 'restart the Claude Code sessions (settings are read at start); check `claude --debug` for hook errors';

/** Spool files of hooks before 0.1 carry the firing time in their name (ns, 20 digits; docs/HOOKS.md). */
export function newestSpoolEventMs(spoolDir: string): number | undefined {
  let names: string[];
  try {
    names = readdirSync(spoolDir);
  } catch {
    return undefined;
  }
  const newest = names.filter((name) => /^\d{20}-.*\.json$/.test(name)).sort().at(-1);
  return newest === undefined ? undefined : Number(BigInt(newest.slice(0, 20)) / 1_000_000n);
}

/**
 * When a hook event last reached the spool: the directory's own change time (a file created or renamed in,
 * or deleted once delivered, touches it), or the newest timed name.
 */
function lastSpoolActivityMs(spoolDir: string): number | undefined {
  let changedMs: number;
  try {
    changedMs = statSync(spoolDir).mtimeMs;
  } catch {
    return undefined;
  }
  return Math.max(changedMs, newestSpoolEventMs(spoolDir) ?? 0);
}

/** Lines of $STATE/hook-dropped: `<ns> <mkdir|write|clash|rename|untrusted>` per event the hook could not keep. */
function droppedEvents(path: string): string[] {
  try {
    return readFileSync(path, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** Whether settings.json already holds what an install would write (i.e. installing changes nothing). */
export function settingsHave(settingsPath: string, install: (settings: Record<string, unknown>) => Record<string, unknown>): boolean | string {
  try {
    return !planSettingsChange(settingsPath, install).changed;
  } catch (error) {
    if (error instanceof SettingsError) return error.message;
    throw error;
  }
}

/** The ccotel plugin's id when the settings file enables it (a file that cannot be read enables nothing). */
export function pluginEnabledIn(settingsPath: string): string | undefined {
  try {
    return enabledPlugin(readSettings(settingsPath));
  } catch (error) {
    if (error instanceof SettingsError) return undefined;
    throw error;
  }
}

function installedScriptProblem(script: string): CheckResult | undefined {
  if (!existsSync(script)) return result('hooks', 'fail', `settings.json runs ${script}, which does not exist (the hook spools nothing)`, 'ccotel install-hooks (copies the script again)');
  try {
    accessSync(script, constants.R_OK); // the hook command sources it
  } catch {
    return result('hooks', 'fail', `${script} is not readable (the hook spools nothing)`, `chmod 700 ${script}`);
  }
  return undefined;
}

export const hooksCheck: Check = async (context) => {
  const { paths } = context.config;
  const settingsPath = settingsPathFor(homeOf(context.env));
  const script = installedScriptPath('hook', paths.binDir);
  const installed = settingsHave(settingsPath, (settings) => withSpoolHooks(settings, spoolHookHandler(script, paths.spoolDir)));
  if (typeof installed === 'string') return result('hooks', 'fail', installed, `fix ${settingsPath} by hand, then run ccotel install-hooks`);
  const plugin = pluginEnabledIn(settingsPath);
  if (!installed && plugin === undefined) {
    return result(
      'hooks',
      'warn',
      `the ccotel hook is not (fully) in ${settingsPath}, nor is the ccotel plugin enabled there: no hook events, permission decisions or session ends`,
      'ccotel install-hooks, or: claude plugin marketplace add <ccotel checkout> && claude plugin install ccotel@ccotel',
    );
  }
  try {
    const settings = JSON.parse(readFileSync(settingsPath, 'utf8')) as { disableAllHooks?: unknown };
    if (settings.disableAllHooks === true) {
      return result('hooks', 'fail', `${settingsPath} sets "disableAllHooks": true, so Claude Code runs no hook`, `remove "disableAllHooks" from ${settingsPath}`);
    }
  } catch {
    // read just above by planSettingsChange; a race with an editor is not worth a report
  }
  const scriptProblem = installed ? installedScriptProblem(script) : undefined; // the plugin's files are Claude Code's to keep
  if (scriptProblem) return scriptProblem;
  const dropped = droppedEvents(paths.hookDroppedPath);
  if (dropped.length > 0) {
    const last = dropped.at(-1)!.split(' ');
    const cause =
      last[1] === 'untrusted'
        ? `the spool ${paths.spoolDir} or the state dir belongs to another user (see the permissions check)`
        : `the spool ${paths.spoolDir} was not writable or the disk was full`;
    return result(
      'hooks',
      'fail',
      `the hook dropped ${dropped.length} events (last: ${last[1] ?? '?'} failed at ${new Date(Number(BigInt(last[0] ?? '0') / 1_000_000n)).toISOString()}): ${cause}`,
      `make ${paths.spoolDir} a writable directory with free space, then clear the count: rm ${paths.hookDroppedPath}`,
    );
  }
  context.facts.newestSpoolEventMs = newestSpoolEventMs(paths.spoolDir);
  const how = installed ? 'installed' : `enabled as the Claude Code plugin ${plugin}`;
  const lastActivity = lastSpoolActivityMs(paths.spoolDir);
  const firing =
    lastActivity === undefined
      ? `${how}; no event spooled yet (hooks fire in sessions started after the install)`
      : `${how} and firing: last hook event ${age(context.now() - lastActivity)} ago, none dropped`;
  const transcriptActivity = context.facts.newestTranscriptMtimeMs;
  if (lastActivity !== undefined && transcriptActivity !== undefined && transcriptActivity - lastActivity > FIRING_TOLERANCE_MS) {
    return result(
      'hooks',
      'fail',
      `${how}, but not firing: Claude Code wrote a transcript ${age(transcriptActivity - lastActivity)} after the last hook event reached the spool (${new Date(lastActivity).toISOString()})`,
      RESTART_SESSIONS,
    );
  }
  if (installed && plugin !== undefined) {
    return result(
      'hooks',
      'warn',
      `both ways at once: ccotel's handlers in ${settingsPath} and the plugin ${plugin}. The plugin's hook stands down where the handlers are, so each event is spooled once, but it starts a shell for nothing on every event (${firing})`,
      `keep one: ccotel uninstall-hooks, or claude plugin uninstall ${plugin}`,
    );
  }
  return result('hooks', 'ok', firing);
};
