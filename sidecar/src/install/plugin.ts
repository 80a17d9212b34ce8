// ccotel as a Claude Code plugin (sidecar/plugin, listed by .claude-plugin/marketplace.json): its hooks.json, and
// how install-hooks and doctor tell that the plugin is enabled.
import { HOOK_TIMEOUT_SECONDS, SPOOLED_EVENTS } from './hook-events.js';
import { SHELL_HOOK_EVENT } from './shell.js';
import type { HookHandler } from './settings-hooks.js';
import type { Settings } from './settings-file.js';

/** The plugin's name in its marketplace; Claude Code enables it as `ccotel@<marketplace>`. */
export const PLUGIN_NAME = 'ccotel';

/** The plugin's script; Claude Code puts the plugin's directory in for the placeholder. */
const PLUGIN_SCRIPT = '${CLAUDE_PLUGIN_ROOT}/hooks/ccotel-plugin.sh';

/**
 * A handler sourcing the plugin's script with `what` to do, as install-hooks' handler sources ccotel-hook.sh. The
 * `-r` test first: `.` of a missing file exits 2, which Claude Code takes as "block this tool call".
 */
function pluginHandler(what: 'spool' | 'shell'): HookHandler {
  return { type: 'command', command: `[ ! -r "${PLUGIN_SCRIPT}" ] || { set -- ${what}; . "${PLUGIN_SCRIPT}"; }`, timeout: HOOK_TIMEOUT_SECONDS };
}

/** sidecar/plugin/hooks/hooks.json: the spool hook on every event install-hooks registers, the shell log's line at SessionStart. */
export function pluginHooks(): { hooks: Record<string, Array<{ hooks: HookHandler[] }>> } {
  const hooks = SPOOLED_EVENTS.map((event) => {
    const handlers = [pluginHandler('spool'), ...(event === SHELL_HOOK_EVENT ? [pluginHandler('shell')] : [])];
    return [event, [{ hooks: handlers }]];
  });
  return { hooks: Object.fromEntries(hooks) };
}

/** The plugin id (`ccotel@<marketplace>`) that the settings enable, if any. */
export function enabledPlugin(settings: Settings): string | undefined {
  const enabled = settings.enabledPlugins;
  if (typeof enabled !== 'object' || enabled === null) return undefined;
  return Object.entries(enabled).find(([id, on]) => id.startsWith(`${PLUGIN_NAME}@`) && on === true)?.[0];
}
