// A bounded, durable FIFO of OTLP request bodies on disk: one file per request, named by sequence number,
// signal and item count (`000000000042.traces.1000.pb`). An append is written to a temporary file,
// fsynced, renamed into place and the directory fsynced, so once `append` resolves the entry survives a
// crash or power loss, and a half-written entry never exists under its real name. When the bound is
// reached the oldest entries are dropped (never one being sent) and returned to the caller, which
// counts and reports them. One process owns a queue directory at a time (a lock file with its pid):
// two would send and delete each other's entries.
import { closeSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Signal } from './otlp-convert.js';
import { isAlive } from '../process-alive.js';
import { ensurePrivateDir } from '../secure-dir.js';

export interface QueueEntry {
  /** File name inside the queue directory. */
  name: string;
  seq: number;
  signal: Signal;
  items: number;
  bytes: number;
}

const ENTRY_NAME = /^(\d{12,})\.(traces|logs|metrics)\.(\d+)\.pb$/;
const TMP_SUFFIX = '.tmp';
const LOCK_FILE = 'owner.pid';

export class QueueBusyError extends Error {
  override name = 'QueueBusyError';
}

/** Take the directory (exclusive create); a lock left by a process that is gone is taken over. */
function acquireLock(dir: string): void {
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(path, 'utf8'));
      if (owner && owner !== process.pid && isAlive(owner)) {
        throw new QueueBusyError(`the OTLP queue ${dir} is in use by process ${owner}; stop it, or give this one another state dir`);
      }
      unlinkSync(path);
    }
  }
}

export class DiskQueue {
  private readonly entries: QueueEntry[];
  private nextSeq: number;
  private totalBytes: number;
  /** Entries being sent: never dropped by the bound, so a send in progress cannot count as a loss. */
  readonly inFlight = new Set<QueueEntry>();
  /** Appends run one after another, so entries are in the order of their sequence numbers. */
  private appending: Promise<unknown> = Promise.resolve();

  /** Opens (creating) the directory and picks up entries a previous process left, oldest first. */
  constructor(
    readonly dir: string,
    readonly maxBytes: number,
  ) {
    ensurePrivateDir(dir, 'OTLP queue dir');
    acquireLock(dir);
    const entries: QueueEntry[] = [];
    for (const name of readdirSync(dir)) {
      if (name.endsWith(TMP_SUFFIX)) {
        unlinkSync(join(dir, name)); // an append that did not finish: its write never resolved, so nobody counted on it
        continue;
      }
      const match = ENTRY_NAME.exec(name);
      if (!match) continue;
      entries.push({ name, seq: Number(match[1]), signal: match[2] as Signal, items: Number(match[3]), bytes: statSync(join(dir, name)).size });
    }
    this.entries = entries.sort((a, b) => a.seq - b.seq);
    this.nextSeq = (this.entries.at(-1)?.seq ?? 0) + 1;
    this.totalBytes = this.entries.reduce((sum, entry) => sum + entry.bytes, 0);
  }

  get length(): number {
    return this.entries.length;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  get items(): number {
    return this.entries.reduce((sum, entry) => sum + entry.items, 0);
  }

  /** The oldest entry nobody is sending yet. */
  nextToSend(): QueueEntry | undefined {
    return this.entries.find((entry) => !this.inFlight.has(entry));
  }

  /**
   * Durably add a request body at the end. Returns what the bound pushed out: the oldest entries, or the
   * new body itself (as an entry with no file) when it alone is larger than the bound.
   */
  append(signal: Signal, items: number, body: Uint8Array): Promise<QueueEntry[]> {
    const result = this.appending.then(() => this.appendNow(signal, items, body));
    this.appending = result.catch(() => undefined);
    return result;
  }

  private async appendNow(signal: Signal, items: number, body: Uint8Array): Promise<QueueEntry[]> {
    const seq = this.nextSeq++;
    const entry: QueueEntry = { name: `${String(seq).padStart(12, '0')}.${signal}.${items}.pb`, seq, signal, items, bytes: body.length };
    if (body.length > this.maxBytes) return [entry];
    const dropped = await this.makeRoom(body.length);
    const path = join(this.dir, entry.name);
    const file = await open(path + TMP_SUFFIX, 'w', 0o600);
    try {
      await file.writeFile(body);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(path + TMP_SUFFIX, path);
    await this.syncDir();
    this.entries.push(entry);
    this.totalBytes += entry.bytes;
    return dropped;
  }

  async read(entry: QueueEntry): Promise<Uint8Array> {
    return readFile(join(this.dir, entry.name));
  }

  /** Forget an entry (sent, rejected or dropped). */
  async remove(entry: QueueEntry): Promise<void> {
    const index = this.entries.indexOf(entry);
    if (index === -1) return;
    this.entries.splice(index, 1);
    this.totalBytes -= entry.bytes;
    this.inFlight.delete(entry);
    await unlink(join(this.dir, entry.name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }

  private async makeRoom(bytes: number): Promise<QueueEntry[]> {
    const dropped: QueueEntry[] = [];
    while (this.totalBytes + bytes > this.maxBytes) {
      const victim = this.nextToSend();
      if (!victim) break; // only entries being sent are left; they go out (or are removed) shortly
      await this.remove(victim);
      dropped.push(victim);
    }
    return dropped;
  }

  /** Give the directory up (entries stay for the next owner). */
  release(): void {
    try {
      unlinkSync(join(this.dir, LOCK_FILE));
    } catch {
      // already gone
    }
  }

  /** A rename is durable only once the directory itself is synced. */
  private async syncDir(): Promise<void> {
    const dir = await open(this.dir, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }
}
