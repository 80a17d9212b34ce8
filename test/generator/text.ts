import type { Rng } from './random.js';

// Filler text for prompts, answers, tool output and the large prompt/request snapshot rows.
// One pool per corpus, cut at random offsets: cheap to produce at hundreds of MB/s and still varied.
// It holds quotes, backslashes, tabs, newlines and non-ASCII (BMP only, so a cut never splits a
// surrogate pair) so that JSON escaping and UTF-8 are exercised.

const WORDS = [
  'the', 'function', 'returns', 'a', 'value', 'when', 'config', 'is', 'missing', 'we', 'should', 'check',
  'test', 'build', 'error', 'file', 'module', 'import', 'export', 'const', 'async', 'await', 'parser',
  'stream', 'buffer', 'index', 'session', 'token', 'request', 'response', 'handler', 'route', 'cache',
  'schema', 'table', 'query', 'column', 'migration', 'deploy', 'review', 'commit', 'branch', 'merge',
  'refactor', 'rename', 'extract', 'inline', 'type', 'interface', 'null', 'undefined', 'retry', 'timeout',
  'café', 'naïve', 'résumé', '→', '—', '"quoted"', 'path\\to\\file', 'x=1,', 'y:2;', '(ok)', '[done]',
];

const POOL_CHARS = 1 << 18;

export class TextPool {
  private readonly pool: string;

  constructor(rng: Rng) {
    const parts: string[] = [];
    let size = 0;
    let lineLength = 0;
    while (size < POOL_CHARS) {
      const word = rng.pick(WORDS);
      const sep = lineLength > 60 + rng.int(0, 40) ? (rng.chance(0.1) ? '\n\t' : '\n') : ' ';
      lineLength = sep === ' ' ? lineLength + word.length + 1 : 0;
      parts.push(word, sep);
      size += word.length + sep.length;
    }
    this.pool = parts.join('');
  }

  /** About `length` characters of text (exactly `length` when length ≤ the pool). */
  text(rng: Rng, length: number): string {
    if (length <= 0) return '';
    if (length >= this.pool.length) return this.pool.repeat(Math.ceil(length / this.pool.length)).slice(0, length);
    const start = rng.int(0, this.pool.length - length);
    return this.pool.slice(start, start + length);
  }

  /** A short single-line phrase (prompt titles, descriptions). */
  phrase(rng: Rng, words: number): string {
    const out: string[] = [];
    for (let i = 0; i < words; i++) out.push(rng.pick(WORDS));
    return out.join(' ');
  }
}
