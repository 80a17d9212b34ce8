// What the settings watcher hands on (sources/settings-watcher.ts): versions of Claude Code's settings files, and
// the rules in force for a directory at a moment.
import type { SettingsView } from '../processors/settings-view.js';

export type SettingsScope = 'managed' | 'user' | 'project' | 'local';

export interface SettingsVersion {
  path: string;
  scope: SettingsScope;
  /** In force from (the file's modification time; for a file found gone, when it was found so). */
  fromMs: number;
  present: boolean;
  view: SettingsView;
  fingerprint: string;
}

/** A version as handed over: with the one it replaced (none: the first look at the file). */
export interface SettingsChanged extends SettingsVersion {
  previous?: SettingsVersion;
  owner?: { uid: number; name?: string };
  /** The last commit that touched the file, when it is tracked by git, and whether the file differs from it. */
  git?: { commit: string; author: string; uncommitted: boolean };
}

/** The rules in force for a directory at a moment: every file's version then, merged. */
export interface RulesInForce {
  fingerprint: string;
  view: SettingsView;
  files: { path: string; scope: SettingsScope; fingerprint: string }[];
}
