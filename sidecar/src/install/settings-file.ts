import { copyFileSync, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createTwoFilesPatch } from 'diff';

/** A Claude Code settings.json: a JSON object whose keys ccotel mostly leaves alone. */
export type Settings = Record<string, unknown>;

export class SettingsError extends Error {}

/** `~/.claude/settings.json`, or `<project>/.claude/settings.json` with a project directory. */
export function settingsPathFor(home: string, projectDir?: string): string {
  return join(projectDir === undefined ? home : resolve(projectDir), '.claude', 'settings.json');
}

interface SettingsText {
  /** The file that is really written: a symlinked settings.json (dotfile managers) stays a symlink. */
  path: string;
  /** The text on disk, or undefined when there is no file yet. */
  text: string | undefined;
  settings: Settings;
}

function readSettingsText(path: string): SettingsText {
  const realPath = existsSync(path) ? realpathSync(path) : path;
  if (!existsSync(realPath)) return { path: realPath, text: undefined, settings: {} };
  const text = readFileSync(realPath, 'utf8');
  let parsed: unknown;
  try {
    parsed = text.trim() === '' ? {} : JSON.parse(text);
  } catch (err) {
    throw new SettingsError(`${path} is not valid JSON (${(err as Error).message}); fix it first, nothing was changed`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new SettingsError(`${path} does not hold a JSON object; nothing was changed`);
  }
  return { path: realPath, text, settings: parsed as Settings };
}

/** Keeps the file's own indentation (two spaces when there is nothing to go by) and final newline. */
function formatLike(original: string | undefined, settings: Settings): string {
  const indent = /^[ \t]+(?=")/m.exec(original ?? '')?.[0] ?? '  ';
  const endsWithNewline = original === undefined || original.endsWith('\n');
  return JSON.stringify(settings, null, indent) + (endsWithNewline ? '\n' : '');
}

export interface SettingsChange {
  path: string;
  changed: boolean;
  before: string;
  after: string;
  /** Unified diff of the file, empty when nothing changes. */
  diff: string;
  /** Writes the change (backup first); returns the backup's path, if there was a file to back up. */
  apply(now?: Date): string | undefined;
}

/**
 * Plans an edit of a settings file: `edit` gets a deep copy of the parsed settings and returns the
 * new settings. When the result is structurally equal to what is on disk nothing is rewritten,
 * so running an install twice leaves the file byte-for-byte the same.
 */
export function planSettingsChange(path: string, edit: (settings: Settings) => Settings): SettingsChange {
  const current = readSettingsText(path);
  const next = edit(structuredClone(current.settings));
  const changed = JSON.stringify(next) !== JSON.stringify(current.settings);
  const before = current.text ?? '';
  const after = changed ? formatLike(current.text, next) : before;
  return {
    path: current.path,
    changed,
    before,
    after,
    diff: changed ? createTwoFilesPatch(path, path, before, after, 'current', 'proposed') : '',
    apply: (now = new Date()) => (changed ? writeWithBackup(current.path, current.text, after, now) : undefined),
  };
}

function backupStamp(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace('.', '-'); // 20261129T171800-123Z
}

function writeWithBackup(path: string, original: string | undefined, text: string, now: Date): string | undefined {
  let backupPath: string | undefined;
  let mode = 0o644;
  if (original !== undefined) {
    backupPath = `${path}.ccotel-backup-${backupStamp(now)}`;
    copyFileSync(path, backupPath);
    mode = statSync(path).mode & 0o777;
  } else {
    mkdirSync(dirname(path), { recursive: true });
  }
  // Write beside it and rename, so Claude Code never reads a half-written settings file.
  const temporary = `${path}.ccotel-tmp-${process.pid}`;
  writeFileSync(temporary, text, { mode });
  renameSync(temporary, path);
  return backupPath;
}
