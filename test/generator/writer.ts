import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

const FLUSH_AT = 1 << 20;

/** Opens for appending, creating the directory only when it is missing (saves a syscall per file). */
function openForAppend(path: string): number {
  try {
    return openSync(path, 'a', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    mkdirSync(dirname(path), { recursive: true });
    return openSync(path, 'a', 0o600);
  }
}

/** Appends lines to one file through a 1 MiB buffer; memory stays bounded whatever the corpus size. */
export class LineWriter {
  private readonly fd: number;
  private chunks: string[] = [];
  private pending = 0;
  bytes = 0;

  constructor(readonly path: string) {
    this.fd = openForAppend(path);
  }

  /** Writes `text` as is (callers add the newline, or leave it off for a half-written last line). */
  write(text: string): void {
    this.chunks.push(text);
    this.pending += text.length;
    if (this.pending >= FLUSH_AT) this.flush();
  }

  private flush(): void {
    if (this.chunks.length === 0) return;
    const data = Buffer.from(this.chunks.join(''), 'utf8');
    for (let done = 0; done < data.length; ) done += writeSync(this.fd, data, done);
    this.bytes += data.length;
    this.chunks = [];
    this.pending = 0;
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}
