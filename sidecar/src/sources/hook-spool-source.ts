// Read the hook spool (docs/HOOKS.md): one file per hook event, `<pid>-<hex>-<hex>.json` written in place,
// whose modification time is its firing time; or, from hooks before that, `<fired-at ns, 20 digits>-<pid>-<hex>.json`
// written under `.tmp-*` and renamed. A file written in place that does not parse yet may still be being
// written: it waits until it has been quiet for SETTLE_MS (a proper prefix of a JSON object never parses).
// Files are read in firing order and handed to the hook correlator; a file is deleted only once the telemetry
// built from it was accepted by every sink (its ack runs after the flush). A file that is not a JSON hook
// payload is moved to the dead-letter dir and reported (`ccotel.record.skipped`, source `hook`). Lines of
// `hook-dropped` (events the hook could not write) become `ccotel.sidecar.records{source=hook,result=dropped}`.
//
// Both `backfill` and `run` consume the spool: it is a queue with one consumer, whichever command
// delivered the events to its sinks. `backfill --keep-spool` reads without deleting (e.g. into a test store).
import { lstatSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { recordIdOf } from '../ids.js';
import type { Pipeline } from '../pipeline.js';
import type { Ack } from '../model.js';
import type { HookEvent } from '../records/hook-spool.js';
import { AGENTS, METRICS, metricPoint, type AgentName } from '../semconv.js';
import { DirectoryFollower } from './directory-follower.js';
import { DescriptorRetry, isOutOfDescriptors } from './out-of-descriptors.js';
import { readRegularFileSync } from './regular-file.js';
import { parseJsonObject } from '../records/json-object.js';

export interface HookSpoolOptions {
  spoolDir: string;
  deadLetterDir: string;
  hookDroppedPath: string;
  /** Where parsed events go (the hook correlator), each with the ack to run once what it produced was accepted. */
  emit: (event: SpoolEvent, ack: Ack) => void;
  /** Where broken files and events the hook dropped are reported. */
  pipeline: Pick<Pipeline, 'skipRecord' | 'addHealth'>;
  /** Masks a broken file's text before it is kept aside (the pipeline's mask processor). */
  maskText: (text: string) => Promise<string>;
  /** Delete files once delivered (default true). */
  consume?: boolean;
  /** A `.tmp-*` file older than this was left by a hook killed mid-write: deleted. */
  staleTmpMs?: number;
  /** Follow mode: the spool directory is watched, and scanned this often anyway (inotify can drop events). */
  safetyPollMs?: number;
  log?: (message: string) => void;
}

export interface HookSpoolStats {
  read: number;
  deadLettered: number;
  deleted: number;
  staleTmpRemoved: number;
  dropped: number;
}

/** An event as read from the spool; its ack travels beside it. */
export type SpoolEvent = Omit<HookEvent, 'ack'>;

/**
 * Written in place by the hook: `<hook pid>-<random>[-<agent pid>][-<agent>].json`, fired at its modification time;
 * `<agent>` where the install named one (`install-hooks --agent codex`).
 */
const SPOOL_NAME = /^(\d+)-([0-9a-f]{8}-[0-9a-f]{4})(?:-(\d+))?(?:-([a-z][a-z-]*))?\.json$/;
/** Renamed into place by hooks before that: `<fired-at ns>-<hook pid>-<random>[-<agent pid>].json`. */
const TIMED_SPOOL_NAME = /^(\d{20})-(\d+)-([0-9a-zA-Z]+)(?:-(\d+))?\.json$/;
/** How long a file written in place may stay unparseable before it counts as broken. */
const SETTLE_MS = 5_000;
const DEFAULT_STALE_TMP_MS = 60_000;

interface SpoolEntry {
  name: string;
  firedAtNs: bigint;
  hookPid: number;
  /** The Claude Code process that fired the event (hooks before it was recorded: unknown). */
  agentPid: number | undefined;
  /** The agent its hook was installed for (none named: the one holding the session, else Claude Code). */
  agent: AgentName | undefined;
  /** Written in place: may still be being written while it does not parse. */
  inPlace: boolean;
}
/** How often the spool is scanned when it cannot be watched (out of inotify watches). */
const UNWATCHED_POLL_MS = 500;

export class HookSpoolSource {
  readonly stats: HookSpoolStats = { read: 0, deadLettered: 0, deleted: 0, staleTmpRemoved: 0, dropped: 0 };
  /** Files handed over and not yet acknowledged: a later scan must not read them again. */
  private readonly inFlight = new Set<string>();
  /** Broken files whose masked copy is being written to the dead-letter dir. */
  private readonly movingAside = new Set<Promise<void>>();
  /** Files that cannot be read (a FIFO or symlink named like a spool file): reported once, then left alone. */
  private readonly refused = new Set<string>();
  private droppedLinesSeen = 0;
  /** The current scan met EMFILE or ENFILE: the files it could not read are read by the next one. */
  private outOfDescriptors = false;
  private follower?: DirectoryFollower;
  private readonly descriptors: DescriptorRetry;

  constructor(private readonly options: HookSpoolOptions) {
    this.descriptors = new DescriptorRetry('hook spool', options.log);
  }

  /** While scans find no descriptor left: since when (for the status). */
  get retrying(): string | undefined {
    return this.descriptors.state;
  }

  /** Hand every spool file present now to the correlator, in firing order. Returns the number handed over. */
  scan(nowMs = Date.now()): number {
    this.reportDropped();
    let names: string[];
    try {
      names = readdirSync(this.options.spoolDir);
    } catch (error) {
      if (isOutOfDescriptors(error)) {
        this.descriptors.failed(error);
        return 0;
      }
      this.descriptors.recovered();
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.options.log?.(`cannot read the hook spool: ${(error as Error).message}`);
      return 0;
    }
    this.outOfDescriptors = false;
    const entries: SpoolEntry[] = [];
    for (const name of names) {
      if (name.startsWith('.tmp-')) this.removeIfStale(name, nowMs);
      else if (!this.inFlight.has(name) && !this.refused.has(name)) {
        const entry = this.entryOf(name);
        if (entry) entries.push(entry);
      }
    }
    // Firing order; on a tie (file times are as coarse as the kernel's tick) the later-spawned hook, by pid.
    entries.sort((a, b) => (a.firedAtNs === b.firedAtNs ? a.hookPid - b.hookPid : a.firedAtNs < b.firedAtNs ? -1 : 1));
    let handed = 0;
    for (const entry of entries) if (this.readOne(entry, nowMs)) handed++;
    if (!this.outOfDescriptors) this.descriptors.recovered();
    return handed;
  }

  private entryOf(name: string): SpoolEntry | undefined {
    const timed = TIMED_SPOOL_NAME.exec(name);
    const agentPidOf = (match: RegExpExecArray, group: number) => (match[group] === undefined ? undefined : Number(match[group]));
    if (timed) return { name, firedAtNs: BigInt(timed[1]), hookPid: Number(timed[2]), agentPid: agentPidOf(timed, 4), agent: undefined, inPlace: false };
    const match = SPOOL_NAME.exec(name);
    if (!match) return undefined;
    try {
      const firedAtNs = lstatSync(join(this.options.spoolDir, name), { bigint: true }).mtimeNs;
      const agent = match[4] !== undefined && Object.hasOwn(AGENTS, match[4]) ? (match[4] as AgentName) : undefined;
      return { name, firedAtNs, hookPid: Number(match[1]), agentPid: agentPidOf(match, 3), agent, inPlace: true };
    } catch {
      return undefined; // gone meanwhile
    }
  }

  /** Follow the spool: scan when it changes (and every `safetyPollMs`); each file is deleted once its ack runs. */
  start(): void {
    const tick = async () => {
      this.scan();
      return this.descriptors.retrying;
    };
    const { spoolDir: dir, safetyPollMs, log } = this.options;
    this.follower = new DirectoryFollower({ dir, tick, safetyPollMs, pollMs: UNWATCHED_POLL_MS, log });
    this.follower.start();
  }

  async stop(): Promise<void> {
    await this.follower?.stop();
    await this.settle();
  }

  /** Wait until every broken file found so far is kept aside. */
  async settle(): Promise<void> {
    await Promise.all([...this.movingAside]);
  }

  private readOne({ name, firedAtNs, hookPid, agentPid, agent, inPlace }: SpoolEntry, nowMs: number): boolean {
    const path = join(this.options.spoolDir, name);
    const firedAtMs = Number(firedAtNs / 1_000_000n);
    let text: string;
    try {
      text = readRegularFileSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      if (isOutOfDescriptors(error)) {
        this.descriptors.failed(error);
        this.outOfDescriptors = true;
        return false; // nothing wrong with the file: read by the next scan
      }
      this.options.log?.(`cannot read ${path}: ${(error as Error).message}; left in the spool`);
      this.refused.add(name);
      return false;
    }
    const parsed = parseHookPayload(text);
    if (!parsed.ok && parsed.reason === 'malformed_json' && inPlace && nowMs - firedAtMs < SETTLE_MS) return false; // still being written
    if (!parsed.ok) {
      this.deadLetter(name, path, parsed.reason, text, firedAtMs);
      return false;
    }
    this.stats.read++;
    this.inFlight.add(name);
    const event = { file: name, firedAtMs, firedAtNs: String(firedAtNs).padStart(20, '0'), hookPid, agentPid, agent, payload: parsed.payload };
    this.options.emit(event, () => this.acknowledge(name, path));
    return true;
  }

  private acknowledge(name: string, path: string): void {
    this.inFlight.delete(name);
    if (this.options.consume === false) return;
    try {
      rmSync(path, { force: true });
      this.stats.deleted++;
    } catch (error) {
      this.options.log?.(`cannot delete ${path}: ${(error as Error).message}`);
    }
  }

  private deadLetter(name: string, path: string, reason: string, text: string, firedAtMs: number): void {
    this.stats.deadLettered++;
    const dir = join(this.options.deadLetterDir, 'hooks');
    this.inFlight.add(name); // not read again while it is moved aside
    const moving: Promise<void> = this.moveAside(name, path, dir, text).finally(() => this.movingAside.delete(moving));
    this.movingAside.add(moving);
    this.options.pipeline.skipRecord({ source: 'hook', reason, file: join(dir, name), text, timeMs: firedAtMs });
  }

  /** A broken file may hold secrets like any payload: its masked text is kept aside, then it leaves the spool. */
  private async moveAside(name: string, path: string, dir: string, text: string): Promise<void> {
    try {
      const masked = await this.options.maskText(text);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(join(dir, name), masked, { mode: 0o600 });
      rmSync(path, { force: true });
      this.inFlight.delete(name);
    } catch (error) {
      // Could not keep it aside: leave it (it is reported again on the next start, with the same id).
      this.options.log?.(`cannot move ${path} to ${dir}: ${(error as Error).message}`);
    }
  }

  private removeIfStale(name: string, nowMs: number): void {
    const path = join(this.options.spoolDir, name);
    try {
      if (nowMs - statSync(path).mtimeMs < (this.options.staleTmpMs ?? DEFAULT_STALE_TMP_MS)) return;
      rmSync(path, { force: true });
      this.stats.staleTmpRemoved++;
    } catch {
      // renamed or removed meanwhile
    }
  }

  /** New lines of hook-dropped: one health point each, id from the line, so a re-read reports nothing twice. */
  private reportDropped(): void {
    let lines: string[];
    try {
      lines = readRegularFileSync(this.options.hookDroppedPath).split('\n');
    } catch {
      return;
    }
    lines.pop(); // after the last newline: empty, or a line still being written
    if (lines.length < this.droppedLinesSeen) this.droppedLinesSeen = 0; // the file was reset
    for (let index = this.droppedLinesSeen; index < lines.length; index++) {
      const [ns, stage = 'unknown'] = lines[index].split(' ');
      const timeMs = /^\d+$/.test(ns) ? Number(BigInt(ns) / 1_000_000n) : Date.now();
      const attributes = { source: 'hook', result: 'dropped', stage };
      this.options.pipeline.addHealth(metricPoint(METRICS.sidecarRecords, { id: recordIdOf('hook-dropped', String(index), lines[index]), timeMs, attributes }));
      this.stats.dropped++;
    }
    this.droppedLinesSeen = lines.length;
  }
}

type PayloadResult = { ok: true; payload: Record<string, unknown> } | { ok: false; reason: 'malformed_json' | 'not_object' | 'missing_fields' };

export function parseHookPayload(text: string): PayloadResult {
  const parsed = parseJsonObject(text);
  if (!parsed.ok) return parsed;
  const payload = parsed.value;
  if (typeof payload.session_id !== 'string' || typeof payload.hook_event_name !== 'string') return { ok: false, reason: 'missing_fields' };
  return { ok: true, payload };
}
