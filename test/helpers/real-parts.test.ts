import { afterEach, describe, expect, it } from 'vitest';
import { skipWithout } from './real-parts.js';

describe('skipWithout', () => {
  const ci = process.env.CI;
  afterEach(() => {
    if (ci === undefined) delete process.env.CI;
    else process.env.CI = ci;
  });

  it('runs a suite whose parts are there', () => {
    process.env.CI = 'true';
    expect(skipWithout(undefined)).toBe(false);
  });

  it('skips a suite whose part is missing on a developer machine, and fails it under CI=true, naming the part', () => {
    delete process.env.CI;
    expect(skipWithout('tmux is not installed')).toBe(true);
    process.env.CI = 'true';
    expect(() => skipWithout('tmux is not installed')).toThrow('CI runs every suite with its real parts: tmux is not installed');
  });
});
