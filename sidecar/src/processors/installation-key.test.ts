import { mkdtempSync, rmSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadOrCreateInstallationKey } from './installation-key.js';

describe('installation key', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'ccotel-key-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('creates 32 random bytes once, owner-only, and reuses them', () => {
    const path = join(tempDir(), 'state', 'installation.key');
    const key = loadOrCreateInstallationKey(path);
    expect(key).toHaveLength(32);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(path, '..')).mode & 0o777).toBe(0o700);
    expect(loadOrCreateInstallationKey(path).equals(key)).toBe(true);
    expect(loadOrCreateInstallationKey(join(tempDir(), 'other.key')).equals(key)).toBe(false);
  });

  it('tightens a key file others can read', () => {
    const path = join(tempDir(), 'installation.key');
    const key = loadOrCreateInstallationKey(path);
    chmodSync(path, 0o644);
    expect(loadOrCreateInstallationKey(path).equals(key)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('refuses a key file of the wrong size with a clear error', () => {
    const path = join(tempDir(), 'installation.key');
    writeFileSync(path, 'short', { mode: 0o600 });
    expect(() => loadOrCreateInstallationKey(path)).toThrow(/holds 5 bytes, expected 32/);
  });
});
