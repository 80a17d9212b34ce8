// Read newline-terminated lines of a file from a byte offset. A last line without its newline is not
// returned: it may still be being written, and is read whole once its newline arrives. Lines longer than
// the limit are skipped (and reported) without holding them in memory.
import { openRegularFileSized, type SizedFile } from './regular-file.js';

export interface Line {
  /** The line without its newline, as read (a view of the read's own buffer). */
  bytes: Buffer;
  /** The same decoded as UTF-8 (the reader decodes it only when asked). */
  readonly text: string;
  /** Byte offset of the line's first byte. */
  start: number;
  /** Byte offset just after its newline. */
  end: number;
}

export interface ReadResult {
  /** Offset after the last complete line: where the next read starts. */
  offset: number;
  /** Bytes after `offset` that wait for their newline. */
  pendingBytes: number;
  /** Lines skipped because they exceeded the limit, by start offset. */
  tooLong: number[];
}

const CHUNK_BYTES = 1 << 20;
/** Small enough for Node's buffer pool (under half of `Buffer.poolSize`). */
const END_PROBE_BYTES = 2 << 10;

/**
 * A line of `bytes`, decoded the first time its text is asked for: most bytes of a transcript are never needed as
 * text. A class, not an object with its own getter: those cost V8 twice the time over thousands of small files.
 */
class ReadLine implements Line {
  private decoded?: string;

  constructor(
    readonly bytes: Buffer,
    readonly start: number,
    readonly end: number,
  ) {}

  get text(): string {
    return (this.decoded ??= this.bytes.toString('utf8'));
  }
}

/** `texts` as consecutive lines of a file, the first at byte `from`, as a read would hand them over (tests). */
export function textLines(texts: string[], from = 0): Line[] {
  let start = from;
  return texts.map((text) => {
    const bytes = Buffer.from(text);
    const line = new ReadLine(bytes, start, start + bytes.length + 1);
    start = line.end;
    return line;
  });
}

export const DEFAULT_MAX_LINE_BYTES = 64 << 20;

/**
 * Calls `onLines` with batches of complete lines (so the caller can apply backpressure by awaiting), from
 * `fromOffset` to the end of the file as it is now. `file` is its path, or the file opened already (a backfill opens
 * the next file while it reads one; the tailer reads the file it opened to identify it): that is read to the size it
 * had when opened.
 */
export async function readLines(
  file: string | Promise<SizedFile>,
  fromOffset: number,
  onLines: (lines: Line[]) => Promise<void> | void,
  maxLineBytes = DEFAULT_MAX_LINE_BYTES,
): Promise<ReadResult> {
  const openedAhead = typeof file !== 'string';
  const { handle, size } = await (openedAhead ? file : openRegularFileSized(file));
  const tooLong: number[] = [];
  try {
    let position = fromOffset;
    let carry: Buffer = Buffer.alloc(0);
    let carryStart = fromOffset;
    let skippingLongLine = false;
    // A new chunk each read: the lines handed over are views of it, valid for as long as they are kept. After a read
    // that did not fill its chunk the end is most likely reached: the read that confirms it takes a small chunk
    // (from Node's pool), so following thousands of small files does not allocate 2 MB for each; so does the first
    // read of a file with little left to read.
    let chunkBytes = size - fromOffset < END_PROBE_BYTES ? END_PROBE_BYTES : CHUNK_BYTES;
    for (;;) {
      // A file opened ahead is read to the size it had then and no further: no read is left to confirm the end.
      const wanted = openedAhead ? Math.min(CHUNK_BYTES, size - position) : chunkBytes;
      if (wanted <= 0) break;
      const chunk = Buffer.allocUnsafe(wanted);
      const { bytesRead } = await handle.read(chunk, 0, wanted, position);
      if (bytesRead === 0) break;
      chunkBytes = bytesRead === chunkBytes ? CHUNK_BYTES : END_PROBE_BYTES;
      position += bytesRead;
      const data = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
      const lines: Line[] = [];
      let lineStart = 0;
      for (let newline = data.indexOf(10); newline !== -1; newline = data.indexOf(10, lineStart)) {
        if (skippingLongLine) {
          skippingLongLine = false;
        } else {
          const end = newline > lineStart && data[newline - 1] === 13 ? newline - 1 : newline; // tolerate CRLF
          lines.push(new ReadLine(data.subarray(lineStart, end), carryStart + lineStart, carryStart + newline + 1));
        }
        lineStart = newline + 1;
      }
      const rest = data.subarray(lineStart);
      const restStart = carryStart + lineStart;
      if (skippingLongLine || rest.length > maxLineBytes) {
        if (!skippingLongLine) tooLong.push(restStart);
        skippingLongLine = true;
        carry = Buffer.alloc(0);
      } else {
        carry = Buffer.from(rest); // copy: `rest` would keep the whole chunk alive
      }
      carryStart = skippingLongLine ? position : restStart;
      if (lines.length > 0) await onLines(lines);
    }
    // A long line still unterminated at the end is left for a later read, like any partial line.
    const offset = skippingLongLine ? tooLong[tooLong.length - 1] : carryStart;
    if (skippingLongLine) tooLong.pop();
    return { offset, pendingBytes: position - offset, tooLong };
  } finally {
    // A file opened already: the caller goes on to the next file without waiting, as a read-only close loses nothing.
    const closed = handle.close();
    if (openedAhead) closed.catch(() => undefined);
    else await closed;
  }
}
