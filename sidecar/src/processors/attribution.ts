// Where a session's rows come from (DESIGN §11): its project directory, the git repository holding it (the remote
// URL normalised, credentials never kept), the branch as the rows say it, and a ticket taken from the branch by a
// configured pattern. The transcript correlator keeps a session's place as its rows go (a row naming another
// branch moves it from that row on); the encoder puts it on every span and log record of the session.
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Place } from '../events.js';
import type { Attributes } from '../model.js';
import { ATTRS } from '../semconv.js';


/** The attributes a place puts on a span or log record (only what is known). */
export function placeAttributes(place: Place | undefined): Attributes | undefined {
  if (!place) return undefined;
  const attributes: Attributes = {};
  if (place.cwd) attributes[ATTRS.cwd] = place.cwd;
  if (place.repository) attributes[ATTRS.repository] = place.repository;
  if (place.branch) attributes[ATTRS.branch] = place.branch;
  if (place.ticket) attributes[ATTRS.ticket] = place.ticket;
  return Object.keys(attributes).length > 0 ? attributes : undefined;
}

/** A git config larger than this is no config a person wrote: not read. */
const MAX_CONFIG_BYTES = 1 << 20;

/** A regular file's text, or undefined (absent, a directory, a FIFO, too big): never blocks on a FIFO. */
function readSmallFile(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > MAX_CONFIG_BYTES) return undefined;
    const buffer = Buffer.alloc(stat.size);
    const read = readSync(fd, buffer, 0, stat.size, 0);
    return buffer.subarray(0, read).toString('utf8');
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The git directory of the repository holding `dir` (a `.git` directory, or the one a `.git` file names). */
function gitDirOf(dir: string): string | undefined {
  for (let at = resolve(dir); ; at = dirname(at)) {
    const dotGit = join(at, '.git');
    let isDirectory: boolean | undefined;
    try {
      isDirectory = statSync(dotGit).isDirectory();
    } catch {
      isDirectory = undefined;
    }
    if (isDirectory === true) return dotGit;
    if (isDirectory === false) {
      // A worktree or submodule: `gitdir: <path>`, relative to the directory holding the file.
      const named = /^gitdir:\s*(.+?)\s*$/m.exec(readSmallFile(dotGit) ?? '')?.[1];
      return named === undefined ? undefined : resolve(at, named);
    }
    if (dirname(at) === at) return undefined;
  }
}

/** `remote.<name>.url` out of a git config file's text (sections as git writes them; the last value wins). */
export function remoteUrlIn(config: string, remote = 'origin'): string | undefined {
  let inRemote = false;
  let url: string | undefined;
  for (const raw of config.split(/\r?\n/)) {
    const line = raw.trim();
    const section = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(line);
    if (section) {
      const [name, sub] = [section[1].toLowerCase(), section[2]?.replace(/\\(.)/g, '$1')];
      inRemote = (name === 'remote' && sub === remote) || (sub === undefined && name === `remote.${remote.toLowerCase()}`);
      continue;
    }
    if (!inRemote) continue;
    const entry = /^url\s*=\s*(.*)$/i.exec(line);
    if (entry) url = configValue(entry[1]);
  }
  return url;
}

/** A config value: quotes removed, escapes resolved, a comment outside quotes dropped. */
function configValue(text: string): string {
  let value = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length) value += { n: '\n', t: '\t', b: '\b' }[text[++i]] ?? text[i];
    else if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '#' || c === ';')) break;
    else value += c;
  }
  return value.trim();
}

/**
 * A remote URL as one repository has one name, whichever way it was cloned, and with no credentials:
 * `git@host:org/repo.git` and `ssh://git@host/org/repo` → `https://host/org/repo`; `https://user:token@host/…`
 * → `https://host/…`; no trailing `.git`, query or fragment. A local path stays a path. Anything else is not
 * kept (undefined): what cannot be read surely cannot be stored surely without a secret.
 */
export function normaliseRemoteUrl(url: string): string | undefined {
  const text = url.trim();
  if (text === '') return undefined;
  const tidy = (path: string) => path.replace(/\/+$/, '').replace(/\.git$/, '').replace(/\/+$/, '');
  if (/^(\/|\.\.?\/|~)/.test(text)) return tidy(text);
  // scp-like: [user@]host:path, no scheme (git takes `host:path` as ssh when no slash precedes the colon).
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/\/)(.+)$/.exec(text);
  if (scp && !text.includes('://')) return tidy(`https://${scp[1].toLowerCase()}/${scp[2].replace(/^\/+/, '')}`);
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return undefined;
  }
  const scheme = parsed.protocol.replace(/:$/, '').toLowerCase();
  if (scheme === 'file') return tidy(parsed.pathname);
  if (!['http', 'https', 'ssh', 'git', 'git+ssh', 'ssh+git'].includes(scheme) || parsed.hostname === '') return undefined;
  // ssh and git ports are not https ports: the name is the host's.
  const web = scheme === 'http' || scheme === 'https';
  const host = web && parsed.port ? `${parsed.hostname}:${parsed.port}` : parsed.hostname;
  return tidy(`${web ? scheme : 'https'}://${host}${parsed.pathname}`);
}

/**
 * The normalised `origin` URL of the repository holding `dir`, read from its config file (a worktree's from the
 * common directory); undefined when `dir` does not exist (a backfill after the project was removed: its parents
 * are not its repository), is in no repository, or the repository has no origin.
 */
export function repositoryOf(dir: string): string | undefined {
  try {
    if (!statSync(dir).isDirectory()) return undefined;
  } catch {
    return undefined;
  }
  const gitDir = gitDirOf(dir);
  if (gitDir === undefined) return undefined;
  const common = readSmallFile(join(gitDir, 'commondir'))?.trim();
  const config = readSmallFile(join(common ? resolve(gitDir, common) : gitDir, 'config'));
  const url = config === undefined ? undefined : remoteUrlIn(config);
  return url === undefined ? undefined : normaliseRemoteUrl(url);
}

/** The ticket in `branch`: the pattern's first group if it has one, else its whole match. */
export function ticketOf(branch: string | undefined, pattern: RegExp | undefined): string | undefined {
  if (!branch || !pattern) return undefined;
  const match = pattern.exec(branch);
  if (!match) return undefined;
  return (match.length > 1 ? match[1] : match[0]) || undefined;
}

export interface PlacesOptions {
  /** Applied to each branch; none: no tickets. */
  ticketPattern?: RegExp;
  /** How a directory's repository is found (tests give their own). */
  repositoryOf?: (dir: string) => string | undefined;
}

/** Directories whose repository is remembered at most (a year of history has tens to hundreds). */
const MAX_DIRECTORIES = 10_000;

/** Places of (cwd, branch): one object each, a directory's repository read once. */
export class Places {
  private readonly repositories = new Map<string, string | undefined>();
  private readonly places = new Map<string, Place>();
  private readonly lookUp: (dir: string) => string | undefined;

  constructor(private readonly options: PlacesOptions = {}) {
    this.lookUp = options.repositoryOf ?? repositoryOf;
  }

  of(cwd: string | undefined, branch: string | undefined): Place {
    const key = `${cwd ?? ''}\n${branch ?? ''}`;
    let place = this.places.get(key);
    if (!place) {
      if (this.places.size >= MAX_DIRECTORIES * 4) this.places.clear();
      place = { cwd: cwd || undefined, repository: cwd ? this.repository(cwd) : undefined, branch: branch || undefined, ticket: ticketOf(branch, this.options.ticketPattern) };
      this.places.set(key, place);
    }
    return place;
  }

  private repository(cwd: string): string | undefined {
    if (this.repositories.has(cwd)) return this.repositories.get(cwd);
    if (this.repositories.size >= MAX_DIRECTORIES) this.repositories.clear();
    const url = this.lookUp(cwd);
    this.repositories.set(cwd, url);
    return url;
  }
}
