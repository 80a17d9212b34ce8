import { describe, expect, it } from 'vitest';
import { recordIdOf, spanIdOf, traceIdOf } from './ids.js';
import { IdSet } from './id-set.js';

describe('IdSet', () => {
  it('holds exactly the ids added, of every width, across growth', () => {
    const ids = new IdSet();
    const added: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const id = [spanIdOf, recordIdOf][i % 2](String(i));
      ids.add(id);
      added.push(id);
    }
    expect(ids.size).toBe(20_000);
    for (const id of added) expect(ids.has(id)).toBe(true);
    for (let i = 0; i < 20_000; i++) expect(ids.has(spanIdOf('other', String(i)))).toBe(false);
    for (let i = 0; i < 2_000; i++) expect(ids.has(recordIdOf('other', String(i)))).toBe(false);
  });

  it('tells ids that differ only past their first word apart, and counts an id added twice once', () => {
    const ids = new IdSet();
    expect(ids.add('0123456789abcdef')).toBe(true);
    expect(ids.add('0123456789abcdef')).toBe(false);
    expect(ids.size).toBe(1);
    expect(ids.has('01234567ffffffff')).toBe(false);
    // A 16-digit id is not a 32-digit id starting with it.
    expect(ids.has('0123456789abcdef0000000000000000')).toBe(false);
    ids.add(traceIdOf('t'));
    expect(ids.has(traceIdOf('t'))).toBe(true);
  });

  it('holds ids that are not hex digests (or are all zero), apart from the digest ids', () => {
    const ids = new IdSet();
    const others = ['hook:1', '', '0000000000000000', 'ABCDEF0123456789', ...Array.from({ length: 5_000 }, (_, i) => `${spanIdOf(String(i))}:cost:input`)];
    for (const id of others) expect(ids.add(id)).toBe(true);
    expect(ids.add('hook:1')).toBe(false);
    expect(ids.size).toBe(others.length);
    for (const id of others) expect(ids.has(id)).toBe(true);
    expect(ids.has('hook:2')).toBe(false);
    expect(ids.has('abcdef0123456789')).toBe(false);
    expect(ids.has(`${spanIdOf('0')}:cost:output`)).toBe(false);
    expect(ids.has(spanIdOf('0'))).toBe(false);
  });
});
