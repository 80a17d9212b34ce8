import { describe, expect, it } from 'vitest';
import { applyJsonChange } from './json-edit.js';

type Groups = { g: Array<{ hooks: unknown[] }> };

const edit = <T>(text: string, change: (value: T) => unknown) => {
  const before = JSON.parse(text) as T;
  return applyJsonChange(text, before, change(structuredClone(before)), '  ');
};

describe('applyJsonChange', () => {
  it('rewrites only the lines of the paths that change', () => {
    const text = '{\n  "big": 12345678901234567890,\n  "dup": 1, "dup": 2,\n  "a": [1, 2],\n  "keep":   "as is"\n}\n';
    const result = edit<Record<string, unknown>>(text, (value) => ({ ...value, a: [1, 2, 3] }));
    expect(result.startsWith('{\n  "big": 12345678901234567890,\n  "dup": 1, "dup": 2,\n')).toBe(true);
    expect(result.endsWith('\n  "keep":   "as is"\n}\n')).toBe(true);
    expect((JSON.parse(result) as { a: number[] }).a).toEqual([1, 2, 3]);
  });

  it('removes the element that went, not an earlier one that looks like what stayed', () => {
    // Two groups; the first (ours alone) is removed, the second keeps the user's handler, whose number must survive.
    const text = '{"g": [{"hooks": [{"c": "ours"}]}, {"hooks": [{"c": "ours"}, {"c": "user", "n": 18446744073709551615}]}]}';
    const result = edit<Groups>(text, (value) => ({ g: [{ hooks: [value.g[1].hooks[1]] }] }));
    expect(result).toContain('"n": 18446744073709551615');
    expect((JSON.parse(result) as Groups).g).toHaveLength(1);
    expect(result).not.toContain('ours');
  });

  it('starts an empty file as an object', () => {
    expect(JSON.parse(applyJsonChange('', {}, { hooks: { Stop: [] } }, '  '))).toEqual({ hooks: { Stop: [] } });
  });
});
