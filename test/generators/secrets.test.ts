import { describe, expect, it } from 'vitest';
import { SECRET_KINDS, WRAPPINGS, findLeaks, mixedCorpus, negativeText, plantSecret, wrap } from './secrets.js';

describe('planted-secret generator', () => {
  it('plants fresh secrets of every kind, each listed and present in its text', () => {
    for (const kind of SECRET_KINDS) {
      const [first, second] = [plantSecret(kind), plantSecret(kind)];
      expect(first.secrets.length).toBeGreaterThan(0);
      for (const secret of first.secrets) {
        expect(secret.length).toBeGreaterThanOrEqual(8);
        expect(first.text).toContain(secret);
      }
      expect(second.secrets).not.toEqual(first.secrets);
    }
  });

  it('wraps content in JSON strings that decode back to it', () => {
    const { text } = plantSecret('private-key-long');
    expect(JSON.parse(wrap(text, 'json')).content).toBe(text);
    expect(JSON.parse(JSON.parse(wrap(text, 'json-in-json')).input).content).toBe(text);
    expect(wrap(text, 'json-in-json')).toContain('\\\\n');
  });

  it('builds a mixed corpus of the requested size with every kind in every wrapping', () => {
    const corpus = mixedCorpus(400_000, 4);
    expect(corpus.texts.join('').length).toBeGreaterThanOrEqual(400_000);
    expect(corpus.plantedCount).toBeGreaterThanOrEqual(SECRET_KINDS.length * WRAPPINGS.length);
    expect(findLeaks(Array.from({ length: 500 }, negativeText).join('\n'), corpus.secrets)).toEqual([]);
  });

  it('finds any 8-character piece of a planted secret, and nothing else', () => {
    const { secrets } = plantSecret('stripe-secret-key');
    expect(findLeaks(`prefix ${secrets[0].slice(5, 13)} suffix`, secrets)).toEqual([secrets[0].slice(5, 13)]);
    expect(findLeaks(`prefix ${secrets[0].slice(5, 12)} suffix`, secrets)).toEqual([]);
    expect(findLeaks(`prefix ${secrets[0].slice(5, 13)} suffix`, secrets, `chance ${secrets[0].slice(5, 13)} match`)).toEqual([]);
  });
});
