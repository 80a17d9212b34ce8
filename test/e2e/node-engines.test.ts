// Issue 31: `npm install` printed 50 EBADENGINE warnings on the Node 20 the README's machine has (secretlint 13,
// puppeteer-core 25, kubernetes-models 5 and the Claude Code launcher want Node ≥ 22). Every package the lock
// installs here must accept the Node that runs the project, and the project states that Node.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const readJson = (path: string) => JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as Record<string, unknown>;

interface LockedPackage {
  engines?: { node?: string } | string[];
}

describe('Node engines', () => {
  it('every installed package accepts the Node that runs the project', () => {
    const lock = readJson('package-lock.json') as { packages: Record<string, LockedPackage> };
    const refusing = Object.entries(lock.packages)
      // Platform packages for other systems are in the lock but not installed.
      .filter(([path]) => path !== '' && existsSync(join(ROOT, path, 'package.json')))
      .flatMap(([path, entry]) => {
        const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
        return range && !semver.satisfies(process.version, range) ? [`${path.replace(/^.*node_modules\//, '')}: node ${range}`] : [];
      });
    expect(refusing).toEqual([]);
  });

  it('the project states the Node it runs on, and this is one', () => {
    const range = (readJson('package.json').engines as { node: string }).node;
    expect(semver.satisfies(process.version, range)).toBe(true);
  });
});
