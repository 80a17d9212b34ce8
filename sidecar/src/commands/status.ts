// `ccotel status`: what the sidecar follows and how far behind it is, from the checkpoint files, the
// running sidecar's own status file, and the store (through the running sidecar's endpoint when it runs).
import type { Command } from 'commander';
import { statSync } from 'node:fs';
import { loadConfig } from '../config.js';
import { describeCatchUp } from '../catch-up.js';
import { checkpointStoresIn, isRunning, type CatchUp, type CheckpointDocument, type CheckpointStore, type NativeTelemetryStatus, type SidecarStatus } from '../sources/checkpoints.js';
import { candidateRoots } from '../sources/transcript-discovery.js';
import { TranscriptTree } from '../sources/transcript-tree.js';
import { USAGE_TABLES } from '../../../schemas/usage.js';
import { openStore } from '../store/open-store.js';
import { plainTable } from './table.js';
import { storeOption, type GlobalOptions } from './options.js';

export interface SourceStatus {
  source: 'transcripts';
  /** The sinks these positions were committed for. */
  store: string;
  otlpEndpoint: string;
  running: boolean;
  pid?: number;
  watcher?: string;
  /** Set when the running sidecar's status is older than it should be: it could write it nowhere since. */
  statusStaleSince?: string;
  sink: SidecarStatus['sink'] | { state: 'not running' };
  /** The running sidecar's own count; else the checkpoint's. */
  filesFollowed: number;
  /** Bytes appended to followed files that are not committed yet. */
  bytesBehind: number;
  lastEventTime?: string;
  /** When positions last moved: in the running sidecar's memory, else as the checkpoint says. */
  lastCommitTime?: string;
  /** When the checkpoint on disk was written: earlier than the last commit while its writes fail. */
  lastSavedTime?: string;
  unreadableFiles: Record<string, string>;
  /** State files the running sidecar could not write (disk full, read-only, no descriptor left). */
  stateErrors: Record<string, string>;
  /** Sources of the running sidecar retrying because no descriptor was left (`retrying after EMFILE since …`). */
  retrying: Record<string, string>;
  catchUp?: CatchUp;
  /** The running sidecar's receiver of Claude Code's own telemetry. */
  nativeTelemetry?: NativeTelemetryStatus;
}

export interface StatusReport {
  sources: SourceStatus[];
  /** Lines the store holds as skipped, by reason (every run and backfill into it). */
  linesSkipped: Record<string, number>;
  storeError?: string;
}

/** A running sidecar rewrites its status every 5 s: one this old could not be written since. */
const STALE_STATUS_MS = 30_000;

export async function status(options: GlobalOptions): Promise<StatusReport> {
  const config = loadConfig({ store: options.store });
  const sources: SourceStatus[] = [];
  for (const checkpoints of checkpointStoresIn(config.paths.checkpointDir)) {
    const document = checkpoints.load();
    const sidecar = checkpoints.loadStatus();
    const running = isRunning(sidecar);
    let lastEventMs = 0;
    for (const file of document?.files ?? []) lastEventMs = Math.max(lastEventMs, file.lastEventMs ?? 0);
    const bytesBehind = document ? await bytesBehindOf(checkpoints, document, sidecar?.roots ?? candidateRoots()) : 0;
    const savedMs = document?.committedAtMs;
    // A running sidecar knows better than a checkpoint it may not have been able to write.
    const committedMs = running ? (sidecar.committedMs ?? savedMs) : savedMs;
    sources.push({
      source: 'transcripts',
      store: sidecar?.store ?? '',
      otlpEndpoint: sidecar?.otlpEndpoint ?? '',
      running,
      pid: running ? sidecar.pid : undefined,
      watcher: running ? sidecar.watcher : undefined,
      statusStaleSince: running && Date.now() - sidecar.updatedMs > STALE_STATUS_MS ? isoTime(sidecar.updatedMs) : undefined,
      sink: running ? sidecar.sink : { state: 'not running' },
      filesFollowed: running ? sidecar.filesFollowed : (document?.files.length ?? 0),
      bytesBehind,
      lastEventTime: lastEventMs > 0 ? new Date(lastEventMs).toISOString() : undefined,
      lastCommitTime: isoTime(committedMs),
      lastSavedTime: isoTime(savedMs),
      unreadableFiles: sidecar?.unreadableFiles ?? {},
      stateErrors: running ? (sidecar.stateErrors ?? {}) : {},
      retrying: running ? (sidecar.retrying ?? {}) : {},
      catchUp: running ? sidecar.catchUp : undefined,
      nativeTelemetry: running ? sidecar.nativeTelemetry : undefined,
    });
  }
  const report: StatusReport = { sources, linesSkipped: {} };
  if (config.store === '') return report;
  try {
    const store = await openStore(config.store, { command: 'status', access: 'read', rawTtlDays: config.rawTtlDays });
    try {
      const result = await store.client.query({
        // From the summaries (DESIGN §9): the raw records expire with the raw window, the count must not.
        query: `SELECT Reason AS reason, sum(Count) AS lines FROM ${store.database}.${USAGE_TABLES.events} FINAL
                WHERE EventName = 'ccotel.record.skipped' GROUP BY reason ORDER BY reason`,
        format: 'JSONEachRow',
      });
      for (const row of await result.json<{ reason: string; lines: string | number }>()) report.linesSkipped[row.reason] = Number(row.lines);
    } finally {
      await store.close();
    }
  } catch (error) {
    report.storeError = (error as Error).message;
  }
  return report;
}

/**
 * Bytes appended since the committed positions: the checkpoint names files only by a hash of their path, so the
 * roots are listed and each transcript's path hashed the same way.
 */
async function bytesBehindOf(checkpoints: CheckpointStore, document: CheckpointDocument, roots: string[]): Promise<number> {
  const byPathId = new Map(document.files.map((file) => [file.pathId, file]));
  const tree = new TranscriptTree(roots);
  let behind = 0;
  for (const root of roots) {
    for (const path of await tree.walk(root)) {
      const file = byPathId.get(checkpoints.pathId(path));
      if (!file) continue;
      try {
        behind += Math.max(0, statSync(path).size - file.offset);
      } catch {
        // gone since it was listed
      }
    }
  }
  return behind;
}

function isoTime(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : new Date(ms).toISOString();
}

/** The last commit, and when it is not on disk (writes failing) since when the disk has it. */
function commitText(source: SourceStatus): string {
  if (!source.lastCommitTime) return '-';
  if (source.lastSavedTime && Date.parse(source.lastSavedTime) >= Date.parse(source.lastCommitTime)) return source.lastCommitTime;
  return `${source.lastCommitTime} (in memory; not written to disk since ${source.lastSavedTime ?? 'the start'})`;
}

function describeReceiver(receiver: NativeTelemetryStatus): string {
  const stored = Object.values(receiver.requests).reduce((total, n) => total + n, 0);
  const items = Object.values(receiver.items).reduce((total, n) => total + n, 0);
  const last = receiver.lastStoredMs ? `, last ${new Date(receiver.lastStoredMs).toISOString()}` : '';
  return `received on ${receiver.url}: ${stored} requests stored (${items} items)${last}, ${receiver.refused} refused`;
}

function listOrDash(byPath: Record<string, string>): string {
  const entries = Object.entries(byPath);
  return entries.length === 0 ? '-' : entries.map(([path, why]) => `${path}: ${why}`).join('\n');
}

function printStatus(report: StatusReport): void {
  if (report.sources.length === 0) console.log('no checkpoints yet: `ccotel run` has not run on this host (with this state dir)');
  for (const source of report.sources) {
    const table = plainTable();
    const sinkText = 'lastError' in source.sink && source.sink.state === 'retrying' ? `retrying (${source.sink.lastError})` : source.sink.state;
    table.push(
      { source: source.source },
      { sidecar: source.running ? `running (pid ${source.pid}, ${source.watcher})${source.statusStaleSince ? `; its status not updated since ${source.statusStaleSince}` : ''}` : 'not running' },
      { store: source.store || '(none)' },
      ...(source.otlpEndpoint ? [{ otlp: source.otlpEndpoint }] : []),
      { sink: sinkText },
      { 'files followed': String(source.filesFollowed) },
      { 'bytes behind': String(source.bytesBehind) },
      { 'catch-up': source.catchUp ? describeCatchUp(source.catchUp) : '-' },
      { "Claude Code's telemetry": source.nativeTelemetry ? describeReceiver(source.nativeTelemetry) : source.running ? 'not received (native_telemetry_port 0, or the port was taken)' : '-' },
      { 'last event': source.lastEventTime ?? '-' },
      { 'last commit': commitText(source) },
      { unreadable: listOrDash(source.unreadableFiles) },
      { 'state writes failing': listOrDash(source.stateErrors) },
      { retrying: listOrDash(source.retrying) },
    );
    console.log(table.toString());
  }
  const skipped = Object.entries(report.linesSkipped);
  console.log(`lines skipped: ${skipped.length === 0 ? 'none' : skipped.map(([reason, n]) => `${reason}=${n}`).join(', ')}`);
  if (report.storeError) console.log(`store: ${report.storeError}`);
}

export function registerStatusCommand(program: Command): void {
  storeOption(
    program
      .command('status')
      .description('Files followed, bytes behind, last event time, lines skipped by reason and sink state')
      .option('--json', 'print as JSON'),
  ).action(async (opts: GlobalOptions & { json?: boolean }) => {
    const report = await status(opts);
    if (opts.json) console.log(JSON.stringify(report, null, 2));
    else printStatus(report);
  });
}
