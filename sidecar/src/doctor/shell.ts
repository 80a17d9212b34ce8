// Shell integration: the SessionStart handler install-shell writes is in settings.json (and the script it
// sources exists), or the ccotel plugin, which writes the same line, is enabled there; and when the last command
// was logged.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { homeOf } from '../install/options.js';
import { installedScriptPath } from '../install/scripts.js';
import { settingsPathFor } from '../install/settings-file.js';
import { shellHookHandler, withShellHook } from '../install/shell.js';
import { age, result, type Check } from './check.js';
import { pluginEnabledIn, settingsHave } from './hooks.js';

function newestLogMs(dir: string): number | undefined {
  let newest: number | undefined;
  try {
    for (const name of readdirSync(dir)) {
      if (name.endsWith('.jsonl')) newest = Math.max(newest ?? 0, statSync(join(dir, name)).mtimeMs);
    }
  } catch {
    return undefined;
  }
  return newest;
}

export const shellCheck: Check = async (context) => {
  const { paths } = context.config;
  const settingsPath = settingsPathFor(homeOf(context.env));
  const script = installedScriptPath('shell', paths.binDir);
  const installed = settingsHave(settingsPath, (settings) => withShellHook(settings, shellHookHandler(script, paths.shellLogDir)));
  if (typeof installed === 'string') return result('shell', 'fail', installed, `fix ${settingsPath} by hand, then run ccotel install-shell`);
  const plugin = installed ? undefined : pluginEnabledIn(settingsPath);
  if (!installed && plugin === undefined) {
    return result('shell', 'warn', `shell integration is not in ${settingsPath}, nor is the ccotel plugin enabled there: no shell spans, exit codes or process failure modes`, 'ccotel install-shell, or the ccotel plugin: claude plugin install ccotel@ccotel');
  }
  if (installed && !existsSync(script)) {
    return result('shell', 'fail', `every Bash tool command sources ${script}, which does not exist: nothing is logged (and sessions set up by an earlier ccotel show an error before each command)`, 'ccotel install-shell (copies the script again)');
  }
  const how = plugin === undefined ? 'installed' : `set up by the Claude Code plugin ${plugin}`;
  const newest = newestLogMs(paths.shellLogDir);
  return result(
    'shell',
    'ok',
    newest === undefined
      ? `${how}; no command logged yet (takes effect in sessions started after the install)`
      : `${how} and active: last command logged ${age(context.now() - newest)} ago`,
  );
};
