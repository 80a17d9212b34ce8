import { describe, expect, it, vi } from 'vitest';
import { plantSecret } from '../../../test/generators/secrets.js';
import { createSecretDetector } from './secret-detector.js';

// Whether secretlint was imported yet (its rules are ~10 MB of an idle sidecar's memory).
const loaded = vi.hoisted(() => ({ secretlint: false }));
vi.mock('@secretlint/core', async (importOriginal) => {
  loaded.secretlint = true;
  return importOriginal();
});

describe('secret detector loading', () => {
  it('loads secretlint only once a text may hold a secret', async () => {
    const detector = createSecretDetector();
    expect(await detector.detect(['please do step 1', 'done 1'])).toEqual([[], []]);
    expect(loaded.secretlint).toBe(false);
    const planted = plantSecret('github-token');
    const [findings] = await detector.detect([planted.text]);
    expect(loaded.secretlint).toBe(true);
    expect(findings.length).toBeGreaterThan(0);
  });
});
