import { describe, expect, it, vi } from 'vitest';
import { plantSecret } from '../../../test/generators/secrets.js';
import { createSecretDetector } from './secret-detector.js';

// What secretlint is given to scan, every call's source text.
const scanned = vi.hoisted(() => ({ sources: [] as string[] }));
vi.mock('@secretlint/core', async (importOriginal) => {
  const original = await importOriginal<typeof import('@secretlint/core')>();
  return {
    ...original,
    lintSource: (...args: Parameters<typeof original.lintSource>) => {
      scanned.sources.push(args[0].source.content);
      return original.lintSource(...args);
    },
  };
});

describe('secret detector on a batch that repeats texts', () => {
  it('scans a repeated text once (a repository URL on every record of a session) and gives each copy its findings', async () => {
    const url = 'https://git.example.com/acme/widgets';
    const planted = plantSecret('github-token');
    const texts = [...Array.from({ length: 500 }, () => url), planted.text, planted.text, 'plain'];
    const findings = await createSecretDetector().detect(texts);
    const copies = scanned.sources.join('\n').split(url).length - 1;
    expect(copies).toBe(1);
    expect(findings.slice(0, 500).every((found) => found.length === 0)).toBe(true);
    expect(findings[500].length).toBeGreaterThan(0);
    expect(findings[501]).toEqual(findings[500]);
    expect(findings[502]).toEqual([]);
  });
});
