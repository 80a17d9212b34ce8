// What the settings watcher tells (sources/settings-watcher.ts): versions of Claude Code's settings files with what
// changed, and the rules in force for a directory at a moment, as permission-relevant views (sources/settings-view.ts).

export interface SettingsView {
  /** e.g. `permissions.allow` → its rules, `hooks` → `PreToolUse Bash: <command>`; only non-empty sets. */
  sets: Record<string, string[]>;
  /** e.g. `permissions.defaultMode` → `"plan"`, `env.ANTHROPIC_BASE_URL` → `"https://…"`, as JSON text. */
  values: Record<string, string>;
}

export interface SettingsChange {
  key: string;
  op: 'added' | 'removed' | 'set' | 'unset' | 'changed';
  value?: string;
  previous?: string;
}

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

/** A version as handed over: with the one it replaced (none: the first look at the file) and what changed. */
export interface SettingsChanged extends SettingsVersion {
  previous?: SettingsVersion;
  changes: SettingsChange[];
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
