import { SettingsError, type Settings } from './settings-file.js';

/** One hook handler in settings.json, e.g. `{ "type": "command", "command": "…", "timeout": 5 }`. */
export interface HookHandler {
  type: string;
  command?: string;
  [key: string]: unknown;
}

/** Tells a handler ccotel installed from everything else in the file. */
export type HandlerOwner = (handler: unknown) => boolean;

function commandOf(handler: unknown): string | undefined {
  const command = typeof handler === 'object' && handler !== null ? (handler as HookHandler).command : undefined;
  return typeof command === 'string' ? command : undefined;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A handler whose command mentions the named script anywhere (ccotel's own, or a user's command calling it). */
export function callsScript(scriptName: string): HandlerOwner {
  const pattern = new RegExp(`/${escapeRegExp(scriptName)}(?=['"\\s]|$)`);
  return (handler) => pattern.test(commandOf(handler) ?? '');
}

const SCRIPT_MARK = '/ccotel-script-dir/';
const ARGUMENT_MARK = '/ccotel-argument';

/**
 * ccotel's own handler: exactly the command `handlerFor` writes, for any script location and directory
 * argument. A longer command of the user's that also calls the script (`guard.sh || exit 2; …`) is not it.
 */
export function writtenBy(handlerFor: (scriptPath: string, directory: string) => HookHandler, scriptName: string): HandlerOwner {
  const template = escapeRegExp(handlerFor(`${SCRIPT_MARK}${scriptName}`, ARGUMENT_MARK).command ?? '');
  const pattern = new RegExp(`^${template.split(escapeRegExp(SCRIPT_MARK)).join("[^']*/").split(escapeRegExp(ARGUMENT_MARK)).join("[^']*")}$`);
  return (handler) => pattern.test(commandOf(handler)?.trim() ?? '');
}

/** Where (hooks.<event>[group].hooks[index]) a user's own command calls the script; ccotel leaves those alone. */
export function userCommandsCalling(settings: Settings, calls: HandlerOwner, owner: HandlerOwner): Array<{ event: string; where: string }> {
  const hooks = settings.hooks;
  if (typeof hooks !== 'object' || hooks === null) return [];
  return Object.entries(hooks).flatMap(([event, groups]) =>
    (Array.isArray(groups) ? groups : []).flatMap((group, g) => {
      const handlers = (group as { hooks?: unknown } | null)?.hooks;
      return (Array.isArray(handlers) ? handlers : []).flatMap((handler, h) =>
        calls(handler) && !owner(handler) ? [{ event, where: `hooks.${event}[${g}].hooks[${h}]` }] : [],
      );
    }),
  );
}

function objectAt(settings: Settings, key: string, path: string): Record<string, unknown> | undefined {
  const value = settings[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new SettingsError(`${path} is not an object`);
  return value as Record<string, unknown>;
}

function arrayAt(object: Record<string, unknown>, key: string, path: string): unknown[] | undefined {
  const value = object[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw new SettingsError(`${path} is not an array`);
  return value;
}

/**
 * Adds `handler` for `event` in a matcher group of its own (no matcher = every occurrence). If a
 * handler of the same owner is already there it is updated in place, so a second install with the
 * same handler changes nothing and one with a new path does not leave the old one behind.
 */
export function addHandler(settings: Settings, event: string, handler: HookHandler, owner: HandlerOwner): Settings {
  const hooks = objectAt(settings, 'hooks', 'hooks') ?? {};
  const groups = arrayAt(hooks, event, `hooks.${event}`) ?? [];
  let found = false;
  for (const group of groups) {
    const handlers = (group as { hooks?: unknown }).hooks;
    if (!Array.isArray(handlers)) continue;
    handlers.forEach((existing, i) => {
      if (owner(existing)) {
        handlers[i] = handler;
        found = true;
      }
    });
  }
  if (!found) groups.push({ hooks: [handler] });
  return { ...settings, hooks: { ...hooks, [event]: groups } };
}

/**
 * Removes every handler of `owner`, then the matcher groups, event lists and `hooks` object that
 * removal left empty, so the file reads as it did before the install. Empty containers ccotel did
 * not touch stay; an event list that was empty before and got ccotel's handler goes with it (it
 * cannot be told from one ccotel created).
 */
export function removeHandlers(settings: Settings, owner: HandlerOwner): Settings {
  const hooks = objectAt(settings, 'hooks', 'hooks');
  if (hooks === undefined) return settings;
  const remainingHooks: Record<string, unknown> = {};
  for (const [event, value] of Object.entries(hooks)) {
    if (!Array.isArray(value)) {
      remainingHooks[event] = value;
      continue;
    }
    const groups = value.flatMap((group) => {
      const handlers = (group as { hooks?: unknown }).hooks;
      if (!Array.isArray(handlers) || !handlers.some(owner)) return [group];
      const kept = handlers.filter((handler) => !owner(handler));
      return kept.length === 0 ? [] : [{ ...(group as object), hooks: kept }];
    });
    if (groups.length > 0 || value.length === 0) remainingHooks[event] = groups;
  }
  const { hooks: _removed, ...rest } = settings;
  return Object.keys(remainingHooks).length > 0 || Object.keys(hooks).length === 0 ? { ...settings, hooks: remainingHooks } : rest;
}
