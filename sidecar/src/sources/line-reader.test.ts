import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLines, type Line } from './line-reader.js';
import { openRegularFileSized } from './regular-file.js';

function tempFile(content: string | Buffer): string {
  const path = join(mkdtempSync(join(tmpdir(), 'ccotel-lines-')), 'f.jsonl');
  writeFileSync(path, content);
  return path;
}

async function collect(path: string, from = 0, max?: number) {
  const lines: Line[] = [];
  const result = await readLines(path, from, (batch) => void lines.push(...batch), max);
  return { lines, result };
}

describe('readLines', () => {
  it('returns complete lines with byte offsets and leaves a half-written last line for later', async () => {
    const path = tempFile('{"a":1}\r\n{"é":2}\n{"half"');
    const { lines, result } = await collect(path);
    expect(lines.map((l) => l.text)).toEqual(['{"a":1}', '{"é":2}']);
    expect(lines[1].start).toBe(9);
    expect(result.offset).toBe(9 + Buffer.byteLength('{"é":2}\n'));
    expect(result.pendingBytes).toBe('{"half"'.length);
    appendFileSync(path, ':3}\n');
    const next = await collect(path, result.offset);
    expect(next.lines.map((l) => l.text)).toEqual(['{"half":3}']);
    expect(next.result.pendingBytes).toBe(0);
  });

  it('hands over lines whose text is decoded only when asked, and still right after later reads', async () => {
    // 3 MB of numbered lines: three reads, each into its own buffer. Every text is asked for only at the end.
    const texts = Array.from({ length: 30_000 }, (_, i) => `{"line":${i},"pad":"${'p'.repeat(90)}"}`);
    const { lines } = await collect(tempFile(`${texts.join('\n')}\n`));
    expect(lines.map((line) => line.text)).toEqual(texts);
    expect(lines[1].bytes.equals(Buffer.from(texts[1]))).toBe(true);
  });

  it('skips a line longer than the limit without losing the lines around it', async () => {
    const long = 'x'.repeat(3 << 20);
    const path = tempFile(`first\n${long}\nlast\n`);
    const { lines, result } = await collect(path, 0, 1 << 20);
    expect(lines.map((l) => l.text)).toEqual(['first', 'last']);
    expect(result.tooLong).toEqual([6]);
    expect(result.offset).toBe(6 + long.length + 1 + 5);
  });

  it('keeps going through invalid UTF-8 and binary bytes', async () => {
    const path = tempFile(Buffer.concat([Buffer.from('ok\n'), Buffer.from([0xff, 0xfe, 0x00, 0x41, 0x0a]), Buffer.from('ok2\n')]));
    const { lines } = await collect(path);
    expect(lines).toHaveLength(3);
    expect(lines[2].text).toBe('ok2');
  });

  it('reads a file opened ahead to the size it had when opened; what is appended after is for the next read', async () => {
    // 2.5 MB: more than one read.
    const texts = Array.from({ length: 25_000 }, (_, i) => `{"line":${i},"pad":"${'p'.repeat(90)}"}`);
    const path = tempFile(`${texts.join('\n')}\n`);
    const opened = openRegularFileSized(path);
    const { size } = await opened;
    appendFileSync(path, '{"later":1}\n');
    const lines: Line[] = [];
    const result = await readLines(opened, 0, (batch) => void lines.push(...batch));
    expect(lines.map((line) => line.text)).toEqual(texts);
    expect(result).toEqual({ offset: size, pendingBytes: 0, tooLong: [] });
    expect((await collect(path, result.offset)).lines.map((line) => line.text)).toEqual(['{"later":1}']);
  });
});
