import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

// Codex CLI releases for recording its rollouts. The npm package @openai/codex is a launcher; the linux-x64 native
// binary is in the optional dependency published as the version `<version>-linux-x64`. Each is unpacked once into
// a cache outside the repository (like claude-releases.ts); nothing here is a dependency of the project.

export const CODEX_CACHE = process.env.CCOTEL_CODEX_RELEASES ?? join(homedir(), '.cache', 'ccotel', 'codex');

/** The releases the fixtures are recorded from: the first one looked at, and the newest served when recorded. */
export const CODEX_VERSIONS = ['0.130.0', '0.150.0', '0.171.0'] as const;

const VENDOR = join('package', 'vendor', 'x86_64-unknown-linux-musl');

/** The binary of a cached release (its place in the package moved between releases), or undefined. */
export function cachedCodex(version: string): string | undefined {
  const dir = join(CODEX_CACHE, version, VENDOR);
  return [join(dir, 'bin', 'codex'), join(dir, 'codex', 'codex')].find((path) => existsSync(path));
}

/**
 * Fetches a release with `npm pack` into the cache (once), unpacks it, and returns its binary. Unpacked beside the
 * cache's folder and renamed into place, so test files fetching the same release at once never see half of it.
 */
export function fetchCodex(version: string): string {
  const cached = cachedCodex(version);
  if (cached) return cached;
  const dir = join(CODEX_CACHE, version);
  const unpacking = `${dir}.${process.pid}`;
  rmSync(unpacking, { recursive: true, force: true });
  mkdirSync(unpacking, { recursive: true });
  try {
    execFileSync('npm', ['pack', `@openai/codex@${version}-linux-x64`, '--silent'], { cwd: unpacking, stdio: ['ignore', 'ignore', 'inherit'] });
    const [tarball] = readdirSync(unpacking).filter((f) => f.endsWith('.tgz'));
    execFileSync('tar', ['xzf', tarball], { cwd: unpacking });
    rmSync(join(unpacking, tarball));
    rmSync(dir, { recursive: true, force: true });
    renameSync(unpacking, dir);
  } catch (error) {
    // Another process put the same release in place first: theirs is as good.
    if (!cachedCodex(version)) throw error;
  } finally {
    rmSync(unpacking, { recursive: true, force: true });
  }
  const binary = cachedCodex(version);
  if (!binary) throw new Error(`@openai/codex@${version}-linux-x64 unpacked into ${dir} but holds no codex binary`);
  return binary;
}

/**
 * A release's binary for a test: the cached one; under CI, fetched (CI installs what its tests need, as the Claude
 * Code releases are); elsewhere undefined, so the suite says how to fetch it and skips.
 */
export function codexForTests(version: string): string | undefined {
  const ci = process.env.CI === 'true' || process.env.CI === '1';
  return ci ? fetchCodex(version) : cachedCodex(version);
}

/** Each recorded release with its binary for a suite, and what the suite says as it skips without one. */
export function codexReleasesForTests(): { version: string; binary: string | undefined; missing: string | undefined }[] {
  return CODEX_VERSIONS.map((version) => {
    const binary = codexForTests(version);
    return { version, binary, missing: binary === undefined ? `Codex ${version} is not cached (npx vite-node test/harness/record-codex.ts ${version})` : undefined };
  });
}
