import { homedir } from 'node:os';
import { isAbsolute } from 'node:path';
import type { SettingsChange } from './settings-file.js';

export interface InstallOptions {
  /** Environment to resolve HOME and the ccotel state dir from. */
  env: Record<string, string | undefined>;
  /** Edit `<projectDir>/.claude/settings.json` instead of the user's `~/.claude/settings.json`. */
  projectDir?: string;
  /** Plan only: report the diff, write nothing. */
  dryRun?: boolean;
  /** Clock for the backup file name. */
  now?: Date;
}

export interface InstallReport {
  change: SettingsChange;
  /** The copy of settings.json taken before writing, when there was one to take. */
  backupPath?: string;
  warnings: string[];
}

export function homeOf(env: Record<string, string | undefined>): string {
  return env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
}
