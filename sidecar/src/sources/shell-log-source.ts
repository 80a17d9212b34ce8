// Read the shell log (docs/HOOKS.md): `shellLogDir/<session id>.jsonl`, one `start` and one `end` line per
// Bash tool command, appended by ccotel-shell.bash. Lines go to the shell correlator in file order; a line that
// is not a v1 record is reported (`ccotel.record.skipped`, source `shell`) and skipped. In follow mode the
// directory is watched (DirectoryFollower). What is read goes out with an ack, which tells where a restart must
// read the file from (its oldest command not yet out, once the rest was delivered): that is what is committed, so
// a restart rebuilds every command whole (the deterministic ids drop what was already delivered).
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SkippedRecord } from '../skipped-lines.js';
import type { ShellRead, ShellRecord, ShellRecordConsumer } from '../records/shell-log.js';
import { DirectoryFollower } from './directory-follower.js';
import { inodeIdentity } from './inode-identity.js';
import { DescriptorRetry, isOutOfDescriptors } from './out-of-descriptors.js';
import { readLines } from './line-reader.js';
import { StateWrites, writeFileAtomic } from './state-file.js';

export interface ShellLogOptions {
  dir: string;
  /** Where the records go (the shell correlator), each file's in file order, with their ack. */
  emit: ShellRecordConsumer['addRecords'];
  /** Where lines that are not records are reported (`ccotel.record.skipped`). */
  skipRecord: (record: SkippedRecord) => void;
  /** Where read positions are kept between runs (none: read every file from its start). */
  checkpointPath?: string;
  /** Follow mode: the directory is watched, and read this often anyway (inotify can drop events). */
  safetyPollMs?: number;
  /** Where a failed checkpoint write is reported (the sidecar's status). */
  stateWrites?: StateWrites;
  log?: (message: string) => void;
}

export interface ShellLogStats {
  files: number;
  lines: number;
  skipped: number;
}

interface Position {
  /** Everything before it was given to the correlator. */
  offset: number;
  size: number;
  /** Which file was read (inode and birth time; unknown for a position from the checkpoint). */
  identity?: string;
}

/** How often the directory is read when it cannot be watched (out of inotify watches). */
const UNWATCHED_POLL_MS = 1_000;

export class ShellLogSource {
  readonly stats: ShellLogStats = { files: 0, lines: 0, skipped: 0 };
  private readonly positions = new Map<string, Position>();
  /** Per file, where a restart must read from, as its latest ack told (to commit). */
  private readonly resumeOffsets = new Map<string, number>();
  private follower?: DirectoryFollower;
  /** The checkpoint document last written, so an unchanged one is not written again. */
  private lastCommitted?: string;
  /** Paths that are not regular files (a FIFO, a symlink): reported once, never opened. */
  private readonly refused = new Set<string>();

  private readonly stateWrites: StateWrites;
  private readonly descriptors: DescriptorRetry;
  /** The current pass met EMFILE or ENFILE: what it could not read is read by the next one. */
  private outOfDescriptors = false;

  constructor(private readonly options: ShellLogOptions) {
    this.stateWrites = options.stateWrites ?? new StateWrites(options.log);
    this.descriptors = new DescriptorRetry('shell log', options.log);
    for (const [file, offset] of Object.entries(this.loadCheckpoint())) {
      this.positions.set(file, { offset, size: offset });
      this.resumeOffsets.set(file, offset);
    }
  }

  /** Read what was appended to every shell log since the last read. */
  async readAll(): Promise<void> {
    this.outOfDescriptors = false;
    let names: string[];
    try {
      names = readdirSync(this.options.dir).filter((name) => name.endsWith('.jsonl')).sort();
    } catch (error) {
      if (isOutOfDescriptors(error)) this.descriptorsFailed(error);
      else this.descriptors.recovered(); // no shell log yet
      return;
    }
    for (const name of names) await this.readFile(join(this.options.dir, name));
    if (!this.outOfDescriptors) this.descriptors.recovered();
  }

  /** While reads find no descriptor left: since when (for the status). */
  get retrying(): string | undefined {
    return this.descriptors.state;
  }

  private descriptorsFailed(error: NodeJS.ErrnoException): void {
    this.descriptors.failed(error);
    this.outOfDescriptors = true;
  }

  /** Follow the directory: read when it changes (and every `safetyPollMs`); positions are committed as acks come. */
  start(): void {
    const { dir, safetyPollMs, log } = this.options;
    const tick = async () => {
      await this.readAll();
      return this.descriptors.retrying;
    };
    this.follower = new DirectoryFollower({ dir, tick, safetyPollMs, pollMs: UNWATCHED_POLL_MS, log });
    this.follower.start();
  }

  async stop(): Promise<void> {
    await this.follower?.stop();
  }

  /** Save where a restart must read each file from, as the acks told it. */
  private commit(): void {
    const path = this.options.checkpointPath;
    if (!path) return;
    const offsets = Object.fromEntries(this.resumeOffsets);
    const document = JSON.stringify({ version: 1, offsets });
    if (document === this.lastCommitted) return; // an idle tick changes nothing: no write
    if (this.stateWrites.attempt(path, () => writeFileAtomic(path, document, false))) this.lastCommitted = document;
  }

  private loadCheckpoint(): Record<string, number> {
    if (!this.options.checkpointPath) return {};
    try {
      const document = JSON.parse(readFileSync(this.options.checkpointPath, 'utf8')) as { version?: number; offsets?: Record<string, number> };
      return document.version === 1 && document.offsets ? document.offsets : {};
    } catch {
      return {};
    }
  }

  private async readFile(path: string): Promise<void> {
    let size: number;
    let identity: string;
    try {
      const info = lstatSync(path, { bigint: true });
      if (!info.isFile()) return this.refuse(path, info.isSymbolicLink() ? 'a symlink (not followed)' : 'not a regular file');
      size = Number(info.size);
      identity = inodeIdentity(info);
    } catch {
      return;
    }
    let position = this.positions.get(path);
    if (!position) {
      position = { offset: 0, size: 0 };
      this.positions.set(path, position);
      this.stats.files++;
    }
    // Truncated, or another file now (rotated: renamed away, a new one written): read from its start (repeats are dropped by id).
    if (size < position.offset || (position.identity !== undefined && position.identity !== identity)) position.offset = 0;
    position.identity = identity;
    if (size === position.offset) return;
    try {
      const result = await readLines(path, position.offset, (lines) => {
        const read: ShellRead = { file: path, records: [], end: lines[lines.length - 1].end };
        for (const line of lines) {
          this.stats.lines++;
          const record = parseShellLine(line.text);
          if (record) read.records.push({ record, offset: line.start });
          else this.skip(path, line.start, line.text);
        }
        this.options.emit(read, (resumeOffset) => {
          this.resumeOffsets.set(path, resumeOffset);
          this.commit();
        });
      });
      position.offset = result.offset;
      position.size = size;
    } catch (error) {
      if (isOutOfDescriptors(error)) this.descriptorsFailed(error);
      else this.options.log?.(`cannot read ${path}: ${(error as Error).message}`);
    }
  }

  private refuse(path: string, why: string): void {
    if (this.refused.has(path)) return;
    this.refused.add(path);
    this.options.log?.(`not reading ${path}: ${why}`);
  }

  private skip(path: string, offset: number, text: string): void {
    this.stats.skipped++;
    const ts = /"ts":(\d{10,17})/.exec(text);
    this.options.skipRecord({ source: 'shell', reason: 'malformed_record', file: path, offset, text, timeMs: ts ? Number(ts[1]) / 1000 : 0 });
  }
}

/** A v1 shell-log record, or undefined for anything else. */
export function parseShellLine(text: string): ShellRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Partial<ShellRecord>;
  if (record.v !== 1 || (record.ev !== 'start' && record.ev !== 'end')) return undefined;
  if (typeof record.sid !== 'string' || typeof record.pid !== 'number' || typeof record.seq !== 'number' || typeof record.ts !== 'number') return undefined;
  return record as ShellRecord;
}
