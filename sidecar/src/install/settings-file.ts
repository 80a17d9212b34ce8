import { copyFileSync, lstatSync, mkdirSync, readFileSync, readlinkSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { applyJsonChange } from './json-edit.js';

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

/** Where a chain of symlinks ends, even when it ends at nothing yet (a dangling link is written through). */
function linkTarget(path: string): string {
  let current = path;
  for (let hops = 0; hops < 40; hops++) {
    let isLink: boolean;
    try {
      isLink = lstatSync(current).isSymbolicLink();
    } catch {
      return current; // nothing there: the file to create
    }
    if (!isLink) return current;
    current = resolve(dirname(current), readlinkSync(current));
  }
  throw new SettingsError(`${path} is a loop of symbolic links; nothing was changed`);
}

function readSettingsText(path: string): SettingsText {
  const realPath = linkTarget(path);
  let text: string;
  try {
    text = readFileSync(realPath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { path: realPath, text: undefined, settings: {} };
    throw new SettingsError(`${path} cannot be read (${(error as Error).message}); nothing was changed`);
  }
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

/** The settings in a file ({} when there is none); SettingsError when it cannot be read or is not a JSON object. */
export function readSettings(path: string): Settings {
  return readSettingsText(path).settings;
}

/**
 * The file with only what changed rewritten (json-edit.ts), in the file's own indentation (two spaces when
 * there is nothing to go by).
 */
function editedText(original: string | undefined, before: Settings, after: Settings): string {
  const indent = /^[ \t]+(?=")/m.exec(original ?? '')?.[0] ?? '  ';
  return applyJsonChange(original ?? '', before, after, indent);
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
  const after = changed ? editedText(current.text, current.settings, next) : before;
  return {
    path: current.path,
    changed,
    before,
    after,
    diff: changed ? createTwoFilesPatch(path, path, before, after, 'current', 'proposed') : '',
    apply: (now = new Date()) => (changed ? writeWithBackup(current.path, current.text, after, now) : undefined),
  };
}

/**
 * Plans an edit of a text file ccotel changes only in part (Codex's config.toml): `edit` gets the text ('' when
 * there is no file) and returns the new text; written as planSettingsChange writes (a backup first, then a rename).
 */
export function planTextChange(path: string, edit: (text: string) => string): SettingsChange {
  const realPath = linkTarget(path);
  let text: string | undefined;
  try {
    text = readFileSync(realPath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new SettingsError(`${path} cannot be read (${(error as Error).message}); nothing was changed`);
  }
  const before = text ?? '';
  const after = edit(before);
  const changed = after !== before;
  return {
    path: realPath,
    changed,
    before,
    after,
    diff: changed ? createTwoFilesPatch(path, path, before, after, 'current', 'proposed') : '',
    apply: (now = new Date()) => (changed ? writeWithBackup(realPath, text, after, now) : undefined),
  };
}

function backupStamp(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace('.', '-'); // 20261129T171800-123Z
}

function writeWithBackup(path: string, original: string | undefined, text: string, now: Date): string | undefined {
  let backupPath: string | undefined;
  let mode = 0o644;
  if (original !== undefined) {
    mode = statSync(path).mode & 0o777;
    // Checked on the mode, not with access(): root may write anything, and a read-only settings file is a choice.
    if ((mode & 0o200) === 0) {
      throw new SettingsError(`${path} is read-only (mode ${mode.toString(8).padStart(4, '0')}); nothing was changed. Make it writable (chmod u+w) and run again, or make the change by hand`);
    }
    backupPath = `${path}.ccotel-backup-${backupStamp(now)}`;
    copyFileSync(path, backupPath);
  } else {
    mkdirSync(dirname(path), { recursive: true });
  }
  // Write beside it and rename, so Claude Code never reads a half-written settings file.
  const temporary = `${path}.ccotel-tmp-${process.pid}`;
  writeFileSync(temporary, text, { mode });
  renameSync(temporary, path);
  return backupPath;
}
