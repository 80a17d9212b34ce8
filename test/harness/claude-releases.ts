import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

// Claude Code releases other than the pinned devDependency, for recording the version matrix. Releases
// up to early 2.1.x are one `cli.js` that runs on Node 20 (package @anthropic-ai/claude-code); later
// ones ship a native binary in a platform package (@anthropic-ai/claude-code-linux-x64). Each is
// unpacked once into a cache outside the repository; nothing here is a dependency of the project.

export const RELEASE_CACHE = process.env.CCOTEL_CLAUDE_RELEASES ?? join(homedir(), '.cache', 'ccotel', 'claude-code');

/** How to start one release: `command ...args` then the CLI's own arguments. */
export interface ClaudeRelease {
  version: string;
  command: string;
  args: string[];
  /** The hook events this release accepts in settings.json (older ones drop every hook on an unknown event). */
  hookEvents?: string[];
}

/** The first release whose npm package no longer holds cli.js (its bin is the native binary). */
const FIRST_NATIVE_ONLY = '2.1.113';

/**
 * Where the harness scripts `Agent` instead of `Task`. Releases offer `Agent` from 2.1.63 (docs/VERSIONS.md, "Features
 * by release") but still run a `Task` call; the samples of 2.1.63…2.1.113 were recorded with `Task`.
 */
export const FIRST_AGENT_TOOL = '2.1.114';

export function parseVersion(version: string): number[] {
  const parts = version.split('.').map(Number);
  if (parts.length !== 3 || parts.some((p) => !Number.isInteger(p))) throw new Error(`not a Claude Code version: ${version}`);
  return parts;
}

/** a < b: -1, a = b: 0, a > b: 1 (x.y.z, numerically). */
export function compareVersions(a: string, b: string): number {
  const [pa, pb] = [parseVersion(a), parseVersion(b)];
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i] < pb[i] ? -1 : 1;
  return 0;
}

export function isNativeRelease(version: string): boolean {
  return compareVersions(version, FIRST_NATIVE_ONLY) >= 0;
}

function packageDir(version: string): string {
  return join(RELEASE_CACHE, version, 'package');
}

/** The release as cached, or undefined when it has not been fetched (see fetchRelease). */
export function cachedRelease(version: string): ClaudeRelease | undefined {
  const dir = packageDir(version);
  if (isNativeRelease(version)) {
    const binary = join(dir, 'claude');
    return existsSync(binary) ? { version, command: binary, args: [] } : undefined;
  }
  const cli = join(dir, 'cli.js');
  return existsSync(cli) ? { version, command: process.execPath, args: [cli], hookEvents: hookEventsOf(cli) } : undefined;
}

/** The longest list of hook event names in a cli.js (its settings schema's enum). */
function hookEventsOf(cli: string): string[] | undefined {
  const lists = readFileSync(cli, 'utf8').match(/\["PreToolUse","PostToolUse"[^\]]*\]/g) ?? [];
  const longest = lists.sort((a, b) => b.length - a.length)[0];
  return longest ? (JSON.parse(longest) as string[]) : undefined;
}

/** Fetches a release with `npm pack` into the cache (once) and unpacks it. */
export function fetchRelease(version: string): ClaudeRelease {
  const cached = cachedRelease(version);
  if (cached) return cached;
  const name = isNativeRelease(version) ? '@anthropic-ai/claude-code-linux-x64' : '@anthropic-ai/claude-code';
  const dir = join(RELEASE_CACHE, version);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('npm', ['pack', `${name}@${version}`, '--silent'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  const [tarball] = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
  execFileSync('tar', ['xzf', tarball], { cwd: dir });
  rmSync(join(dir, tarball));
  const release = cachedRelease(version);
  if (!release) throw new Error(`${name}@${version} unpacked into ${dir} but holds no ${isNativeRelease(version) ? 'claude binary' : 'cli.js'}`);
  return release;
}
