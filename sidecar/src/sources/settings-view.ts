// What a Claude Code settings file says about what the agent may do (issue 37): the permission rules, the mode,
// the hooks, the environment it runs with, the sandbox and MCP switches. Everything else in the file (model, theme,
// status line, …) is left out, so rewriting it changes nothing here. A view is flat: sets of entries (rules,
// directories, hook handlers) and single values (JSON text), which makes a change a list of added / removed / set /
// unset entries, and the rules in force the union of every file's view.
import { createHash } from 'node:crypto';
import type { SettingsChange, SettingsView } from '../events/settings.js';

export const EMPTY_VIEW: SettingsView = { sets: {}, values: {} };

const SET_KEYS = ['permissions.allow', 'permissions.deny', 'permissions.ask', 'permissions.additionalDirectories', 'enabledMcpjsonServers', 'disabledMcpjsonServers'];
const VALUE_KEYS = [
  'permissions.defaultMode', 'permissions.disableBypassPermissionsMode', 'disableAllHooks', 'allowManagedHooksOnly',
  'allowManagedPermissionRulesOnly', 'enableAllProjectMcpServers', 'apiKeyHelper', 'forceLoginMethod',
];
/** Objects whose every leaf counts: the environment of the agent and its tools, the sandbox, the plugins on. */
const TREE_KEYS = ['env', 'sandbox', 'enabledPlugins'];

const at = (object: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((value, key) => (isObject(value) ? value[key] : undefined), object);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Environment names whose values are credentials: a view holds a keyed digest of them, never the value. */
const SECRET_NAME = /TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_?KEY|AUTH|PRIVATE/i;

/**
 * The permission-relevant view of a parsed settings file (anything not an object: an empty view). `digest` names a
 * credential's value (keyed, so a digest cannot be checked against guesses): a change of it still shows.
 */
export function settingsView(settings: unknown, digest: (value: string) => string): SettingsView {
  const view: SettingsView = { sets: {}, values: {} };
  for (const key of SET_KEYS) {
    const list = at(settings, key);
    if (Array.isArray(list)) addSet(view, key, list.map((item) => (typeof item === 'string' ? item : JSON.stringify(item))));
  }
  for (const key of VALUE_KEYS) {
    const value = at(settings, key);
    if (value !== undefined) view.values[key] = JSON.stringify(value);
  }
  for (const key of TREE_KEYS) addLeaves(view, key, at(settings, key));
  for (const key of Object.keys(view.values)) {
    if (key.startsWith('env.') && SECRET_NAME.test(key)) view.values[key] = JSON.stringify(`[withheld:${digest(view.values[key])}]`);
  }
  addSet(view, 'hooks', hookHandlers(at(settings, 'hooks')));
  return view;
}

function addSet(view: SettingsView, key: string, items: string[]): void {
  const unique = [...new Set(items)].sort();
  if (unique.length > 0) view.sets[key] = unique;
}

function addLeaves(view: SettingsView, prefix: string, value: unknown): void {
  if (!isObject(value)) {
    if (value !== undefined) view.values[prefix] = JSON.stringify(value);
    return;
  }
  for (const [key, inner] of Object.entries(value)) addLeaves(view, `${prefix}.${key}`, inner);
}

/** Every hook handler as `<Event> <matcher>: <what it runs>` (matcher `*` when it has none). */
function hookHandlers(hooks: unknown): string[] {
  if (!isObject(hooks)) return [];
  return Object.entries(hooks).flatMap(([event, groups]) =>
    (Array.isArray(groups) ? groups : []).flatMap((group: unknown) => {
      if (!isObject(group)) return [];
      const matcher = typeof group.matcher === 'string' && group.matcher !== '' ? group.matcher : '*';
      const handlers = Array.isArray(group.hooks) ? group.hooks : [];
      return handlers.map((handler: unknown) => `${event} ${matcher}: ${handlerText(handler)}`);
    }));
}

function handlerText(handler: unknown): string {
  if (!isObject(handler)) return JSON.stringify(handler);
  for (const field of ['command', 'url', 'prompt', 'tool']) if (typeof handler[field] === 'string') return handler[field];
  return JSON.stringify(handler);
}

/** What changed from `before` to `after`, sets first, each in key order. */
export function diffViews(before: SettingsView, after: SettingsView): SettingsChange[] {
  const changes: SettingsChange[] = [];
  for (const key of sortedKeys(before.sets, after.sets)) {
    const was = new Set(before.sets[key] ?? []);
    const now = new Set(after.sets[key] ?? []);
    for (const value of now) if (!was.has(value)) changes.push({ key, op: 'added', value });
    for (const value of was) if (!now.has(value)) changes.push({ key, op: 'removed', value });
  }
  for (const key of sortedKeys(before.values, after.values)) {
    const previous = before.values[key];
    const value = after.values[key];
    if (previous === value) continue;
    if (previous === undefined) changes.push({ key, op: 'set', value });
    else if (value === undefined) changes.push({ key, op: 'unset', previous });
    else changes.push({ key, op: 'changed', value, previous });
  }
  return changes;
}

function sortedKeys(first: Record<string, unknown>, second: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(first), ...Object.keys(second)])].sort();
}

/**
 * The rules in force from several files, lowest precedence first (user, project, local, managed): sets are the
 * union, as Claude Code merges rules and hooks; a value is the one of the file with the highest precedence.
 */
export function mergeViews(views: readonly SettingsView[]): SettingsView {
  const merged: SettingsView = { sets: {}, values: {} };
  for (const view of views) {
    for (const [key, items] of Object.entries(view.sets)) addSet(merged, key, [...(merged.sets[key] ?? []), ...items]);
    Object.assign(merged.values, view.values);
  }
  return merged;
}

/** A short stable name of a view: equal views, and only they, have the same one. */
export function viewFingerprint(view: SettingsView): string {
  return createHash('sha256').update(JSON.stringify(canonical(view))).digest('hex').slice(0, 16);
}

function canonical(view: SettingsView): [string, string[] | string][] {
  return [
    ...Object.keys(view.sets).sort().map((key): [string, string[]] => [`set:${key}`, view.sets[key]]),
    ...Object.keys(view.values).sort().map((key): [string, string] => [`value:${key}`, view.values[key]]),
  ];
}
