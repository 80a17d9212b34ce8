// `ccotel install-hooks --agent codex`: the spool hook Claude Code gets — the same script and handler; Codex gives a
// hook its event as JSON on stdin in Claude Code's shape (`session_id` = the thread, `hook_event_name`,
// `tool_use_id` = the call id, `source` of a SessionStart) — registered in `$CODEX_HOME/hooks.json` for every event
// Codex fires hooks for, and trusted. Codex runs a user's hook only when its config.toml holds the hook's hash under
// `[hooks.state."<hooks.json path>:<event>:<group>:<handler>"] trusted_hash` (0.130 on; 0.171 can skip the check
// per run with --dangerously-bypass-hook-trust). The hash is Codex's own: sha256 of the hook's normalized identity
// as JSON with sorted keys (codex-rs/hooks/src/engine/discovery.rs, codex-rs/config/src/fingerprint.rs).
// Both files are edited in part: hooks.json as Claude Code's settings.json is (every other hook kept), and
// config.toml gains one marked block of ccotel's trust entries (config-block.ts), which uninstall takes out again.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { loadConfig } from '../../config.js';
import { isSpoolHook, spoolHookHandler } from '../../install/hooks.js';
import type { InstallReport } from '../../install/options.js';
import { installedScriptPath, installScript } from '../../install/scripts.js';
import { planSettingsChange, planTextChange, type Settings } from '../../install/settings-file.js';
import { addHandler, removeHandlers, type HookHandler } from '../../install/settings-hooks.js';
import { statePaths } from '../../paths.js';
import { ensureStateDir } from '../../secure-dir.js';
import { withBlock, withoutBlock } from './config-block.js';

/**
 * The events ccotel registers: those of 0.130 (SessionStart … Stop) and those 0.171 added (SessionEnd, SubagentStart,
 * SubagentStop), which 0.130 ignores (checked: its hooks.json with them still runs the others).
 */
export const CODEX_HOOK_EVENTS = [
  'SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PermissionRequest', 'PostToolUse', 'PreCompact', 'PostCompact', 'Stop',
  'SessionEnd', 'SubagentStart', 'SubagentStop',
] as const;

/** Codex caps a SessionEnd hook at 3 seconds (and hashes the capped value): ccotel writes what Codex would use. */
const SESSION_END_MAX_TIMEOUT_SECONDS = 3;

const TRUST_BLOCK = 'install-hooks: Codex runs these hooks of hooks.json only with their hash here (ccotel uninstall-hooks --agent codex removes this block)';

export interface CodexInstallOptions {
  env: Record<string, string | undefined>;
  /** `--codex-home`, else as `run` finds it (CODEX_HOME, `codex_home` in the config file, ~/.codex). */
  codexHome?: string;
  dryRun?: boolean;
  now?: Date;
}

/** `PreToolUse` → `pre_tool_use`: the event's name in Codex's state keys and hashes. */
export const eventLabel = (event: string) => event.replace(/[A-Z]/g, (letter, at: number) => `${at === 0 ? '' : '_'}${letter.toLowerCase()}`);

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, v]) => `${JSON.stringify(key)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The hash Codex trusts a command hook by (no matcher: ccotel's run on every occurrence). */
export function codexHookTrustHash(event: string, handler: HookHandler): string {
  const identity = { event_name: eventLabel(event), hooks: [{ type: 'command', command: handler.command, timeout: handler.timeout, async: false }] };
  return `sha256:${createHash('sha256').update(canonicalJson(identity)).digest('hex')}`;
}

function handlerFor(event: string, handler: HookHandler): HookHandler {
  return event === 'SessionEnd' ? { ...handler, timeout: Math.min(Number(handler.timeout), SESSION_END_MAX_TIMEOUT_SECONDS) } : handler;
}

export function codexHomeOf(options: CodexInstallOptions): string {
  const home = resolve(loadConfig({ codexHome: options.codexHome }, options.env).codexHome);
  // Codex keys a hook's trust by the path of its hooks.json under the home it resolved (links followed).
  return existsSync(home) ? realpathSync(home) : home;
}

/** `[hooks.state."<key>"]` with `trusted_hash` for each of ccotel's handlers where it stands in `hooks`. */
function trustEntries(hooksPath: string, hooks: Settings): Array<{ key: string; hash: string }> {
  const events = (hooks.hooks ?? {}) as Record<string, unknown>;
  return Object.entries(events).flatMap(([event, groups]) =>
    (Array.isArray(groups) ? groups : []).flatMap((group, g) => {
      const handlers = (group as { hooks?: unknown } | null)?.hooks;
      return (Array.isArray(handlers) ? handlers : []).flatMap((handler, h) =>
        isSpoolHook(handler) ? [{ key: `${hooksPath}:${eventLabel(event)}:${g}:${h}`, hash: codexHookTrustHash(event, handler as HookHandler) }] : [],
      );
    }),
  );
}

/** ccotel's trust block holding `entries`; a key the user's own text already has is left to it. */
function withTrust(text: string, entries: Array<{ key: string; hash: string }>, warnings: string[], configPath: string): string {
  const theirs = withoutBlock(text, TRUST_BLOCK);
  const lines = entries.flatMap(({ key, hash }) => {
    const header = `[hooks.state.${JSON.stringify(key)}]`;
    if (theirs.includes(JSON.stringify(key))) {
      warnings.push(`${configPath} already has ${header} of its own: ccotel left it as it is (Codex runs that hook only if its trusted_hash is ${hash})`);
      return [];
    }
    return [header, `trusted_hash = ${JSON.stringify(hash)}`];
  });
  return withBlock(theirs, TRUST_BLOCK, lines);
}

function plan(options: CodexInstallOptions, install: boolean) {
  const codexHome = codexHomeOf(options);
  const hooksPath = join(codexHome, 'hooks.json');
  const configPath = join(codexHome, 'config.toml');
  const paths = statePaths(options.env);
  const handler = spoolHookHandler(installedScriptPath('hook', paths.binDir), paths.spoolDir, 'codex');
  const hooks = planSettingsChange(hooksPath, (settings) =>
    install ? CODEX_HOOK_EVENTS.reduce((next, event) => addHandler(next, event, handlerFor(event, handler), isSpoolHook), settings) : removeHandlers(settings, isSpoolHook),
  );
  const warnings: string[] = [];
  const entries = install ? trustEntries(hooks.path, JSON.parse(hooks.after || '{}') as Settings) : [];
  const config = planTextChange(configPath, (text) => (install ? withTrust(text, entries, warnings, configPath) : withoutBlock(text, TRUST_BLOCK)));
  return { paths, hooks, config, warnings, codexHome: dirname(hooksPath) };
}

function apply(changes: ReturnType<typeof plan>, options: CodexInstallOptions): InstallReport[] {
  const { hooks, config, warnings } = changes;
  if (options.dryRun) return [{ change: hooks, warnings }, { change: config, warnings: [] }];
  // hooks.json last on install (a hook trusted before it exists does nothing), first on uninstall.
  const order = config.after.includes(TRUST_BLOCK) ? [config, hooks] : [hooks, config];
  const backups = new Map(order.map((change) => [change, change.apply(options.now)]));
  return [
    { change: hooks, backupPath: backups.get(hooks), warnings },
    { change: config, backupPath: backups.get(config), warnings: [] },
  ];
}

/**
 * ccotel's hooks in Codex's home and those of them config.toml does not trust (Codex skips those without a word: a
 * home moved, or hooks.json edited by hand, leaves the entries stale). For `doctor`.
 */
export function codexHookTrust(codexHome: string): { installed: number; untrusted: number } {
  const hooksPath = join(codexHome, 'hooks.json');
  let hooks: Settings;
  let config = '';
  try {
    hooks = JSON.parse(readFileSync(hooksPath, 'utf8')) as Settings;
  } catch {
    return { installed: 0, untrusted: 0 }; // none, or not Codex's to read: Codex itself warns of a bad file
  }
  try {
    config = readFileSync(join(codexHome, 'config.toml'), 'utf8');
  } catch {
    // no config: nothing is trusted
  }
  const entries = trustEntries(existsSync(hooksPath) ? realpathSync(hooksPath) : hooksPath, hooks);
  return { installed: entries.length, untrusted: entries.filter(({ key, hash }) => !config.includes(JSON.stringify(key)) || !config.includes(JSON.stringify(hash))).length };
}

/** Registers and trusts the spool hook in Codex's home: the two files' changes (hooks.json, config.toml). */
export function installCodexHooks(options: CodexInstallOptions): InstallReport[] {
  const changes = plan(options, true);
  if (!options.dryRun) {
    ensureStateDir(changes.paths, 'spoolDir'); // first: an untrusted spool refuses the install before anything is written
    installScript('hook', changes.paths);
  }
  return apply(changes, options);
}

/** Removes exactly what installCodexHooks added: its handlers in hooks.json and its block in config.toml. */
export function uninstallCodexHooks(options: CodexInstallOptions): InstallReport[] {
  return apply(plan(options, false), options);
}
