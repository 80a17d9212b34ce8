// What `ccotel report` prints, kept while the answers it was made of stand. At 1 GB of history `report session --json`
// is 4.8 MB of output made from 6 000 rows: reading the rows, grouping them and writing them out was ~0.4 s of CPU
// even when the running sidecar (or the cold reader's kept answers) gave the rows at once (issue 36). So the output
// is kept in the store directory's answers (answer-cache.ts) with the tags of the answers it was made of
// (kept-answers.ts TaggingClient), under the report's arguments and this build; asked again, the client asks only
// whether each of those answers still stands (the endpoint: If-None-Match; with nothing running: the store's
// fingerprint) and prints the kept bytes. An output made of an answer without a tag (one that reads the clock, or
// asked while the store changed) is never kept; one that tells something of the clock (the active billing block) is
// kept until the time it no longer holds.
import type { ClickHouseClient, QueryParams } from '@clickhouse/client';
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SIDECAR_VERSION } from '../resource.js';
import { ANSWERS_DIR, keepFile, markUsed } from '../store/answer-cache.js';
import type { TaggingClient } from '../store/kept-answers.js';

/** This build: every build writes each module anew, so an output another build made (perhaps differently) is not found. */
const BUILD = `${SIDECAR_VERSION} ${statSync(fileURLToPath(import.meta.url)).mtimeMs}`;

/** A question the output was made of, and its answer's tag. */
interface Asked {
  params: QueryParams;
  tag: string;
}

/** An output that tells something of the clock (which billing block is active): it holds until `until` (ms). */
export interface TimedOutput {
  text: string;
  until: number;
}

/** The first line of a kept output's file. */
interface Head {
  asked: Asked[];
  /** A timed output: the time it was made, and until when it holds (null: for ever after). */
  holds?: [number, number | null];
}

const isTagging = (client: unknown): client is TaggingClient => typeof (client as Partial<TaggingClient>).stillAnswers === 'function';

/**
 * The output `render` makes of the store's answers to the report `key` names (everything the questions and the output
 * depend on besides the answers): kept in the store directory `storeDir` and given again, as its file, while the answers
 * it was made of stand. A client whose answers have no tags (a ClickHouse server) always renders.
 */
export async function keptOutput(client: ClickHouseClient, storeDir: string, key: unknown[], render: (client: ClickHouseClient) => Promise<string | TimedOutput>): Promise<string | KeptFile> {
  if (!isTagging(client)) return textOf(await render(client));
  const tagging: TaggingClient = client;
  const dir = join(resolve(storeDir), ANSWERS_DIR);
  const name = `${createHash('sha256').update(JSON.stringify([BUILD, ...key])).digest('hex')}.out`;
  const path = join(dir, name);
  const kept = await stillStanding(tagging, path);
  if (kept) return kept;
  const asked: (Asked | undefined)[] = [];
  const recording = {
    query: async (params: QueryParams) => {
      const result = await tagging.query(params);
      asked.push(result.tag === undefined ? undefined : { params, tag: result.tag });
      return result;
    },
  } as unknown as ClickHouseClient;
  const output = await render(recording);
  if (asked.length > 0 && asked.every((question) => question !== undefined)) {
    const head: Head = { asked, ...(typeof output === 'string' ? {} : { holds: [Date.now(), Number.isFinite(output.until) ? output.until : null] }) };
    try {
      keepFile(dir, name, `${JSON.stringify(head)}\n${textOf(output)}`);
    } catch {
      // Not kept (a full disk, a store directory this user cannot write): the output stands, made anew next time.
    }
  }
  return textOf(output);
}

const textOf = (output: string | TimedOutput) => (typeof output === 'string' ? output : output.text);

/** Whether a timed output made and holding as `holds` says still holds now. */
function holdsNow([made, until]: [number, number | null]): boolean {
  const now = Date.now();
  return now >= made && (until === null || now < until);
}

/** Kept output: the bytes of an open file from `start` on. */
export class KeptFile {
  constructor(private readonly fd: number, private readonly start: number) {}

  /**
   * Its bytes, a chunk at a time through one buffer, each given to `write` before the next is read (reading 5 MB
   * whole cost ~20 ms of CPU in page faults of the new buffer; this, ~3 ms); then the file is closed.
   */
  copy(write: (chunk: Buffer) => void): void {
    const chunk = Buffer.allocUnsafeSlow(COPY_CHUNK_BYTES);
    try {
      for (let position = this.start, read; (read = readSync(this.fd, chunk, 0, chunk.length, position)) > 0; position += read) write(chunk.subarray(0, read));
    } finally {
      closeSync(this.fd);
    }
  }
}

const COPY_CHUNK_BYTES = 1 << 18;

/** `output` on standard output: kept output copied from its file, with blocking writes where stdout takes them. */
export function printOutput(output: string | KeptFile): void {
  if (typeof output === 'string') {
    process.stdout.write(output);
    return;
  }
  let stream = false;
  output.copy((chunk) => {
    for (let written = 0; !stream && written < chunk.length;) {
      try {
        written += writeSync(1, chunk, written);
      } catch (error) {
        // A non-blocking stdout (a pipe on macOS): the rest goes through the stream, which waits for it.
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        stream = true;
        chunk = chunk.subarray(written);
      }
    }
    if (stream) process.stdout.write(Buffer.from(chunk));
  });
}

/** The output kept at `path` (after its line of questions), if each of its answers still stands. */
async function stillStanding(client: TaggingClient, path: string): Promise<KeptFile | undefined> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const kept = headOf(fd);
    if (kept !== undefined && (kept.head.holds === undefined || holdsNow(kept.head.holds)) && (await answersStand(client, kept.head.asked))) {
      markUsed(path);
      return new KeptFile(fd, kept.end);
    }
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  closeSync(fd);
  return undefined;
}

async function answersStand(client: TaggingClient, asked: Asked[]): Promise<boolean> {
  for (const { params, tag } of asked) if (!(await client.stillAnswers(params, tag))) return false;
  return true;
}

/** The file's first line (its questions) and where the output after it begins; undefined if it has no line end. */
function headOf(fd: number): { head: Head; end: number } | undefined {
  const chunks: Buffer[] = [];
  for (let position = 0; ;) {
    const chunk = Buffer.alloc(1 << 16);
    const read = readSync(fd, chunk, 0, chunk.length, position);
    if (read === 0) return undefined;
    const newline = chunk.subarray(0, read).indexOf(10);
    chunks.push(chunk.subarray(0, newline < 0 ? read : newline));
    if (newline >= 0) return { head: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Head, end: position + newline + 1 };
    position += read;
  }
}
