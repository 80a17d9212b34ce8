// `ccotel status`: what the sidecar follows and how far behind it is, from the checkpoint files, the
// running sidecar's own status file, and the store (through the running sidecar's endpoint when it runs).
import Table from 'cli-table3';
import type { Command } from 'commander';
import { statSync } from 'node:fs';
import { loadConfig } from '../config.js';
import { describeCatchUp } from '../catch-up.js';
import { checkpointStoresIn, type CatchUp, type SidecarStatus } from '../sources/checkpoints.js';
import { openStore } from '../store/open-store.js';
import { storeOption, type GlobalOptions } from './options.js';
import { isAlive } from '../process-alive.js';

export interface SourceStatus {
  source: 'transcripts';
  /** The sinks these positions were committed for. */
  store: string;
  otlpEndpoint: string;
  running: boolean;
  pid?: number;
  watcher?: string;
  sink: SidecarStatus['sink'] | { state: 'not running' };
  filesFollowed: number;
  /** Bytes appended to followed files that are not committed yet. */
  bytesBehind: number;
  lastEventTime?: string;
  lastCommitTime?: string;
  unreadableFiles: Record<string, string>;
  /** State files the running sidecar could not write (disk full, read-only, no descriptor left). */
  stateErrors: Record<string, string>;
  catchUp?: CatchUp;
}

export interface StatusReport {
  sources: SourceStatus[];
  /** Lines the store holds as skipped, by reason (every run and backfill into it). */
  linesSkipped: Record<string, number>;
  storeError?: string;
}

export async function status(options: GlobalOptions): Promise<StatusReport> {
  const config = loadConfig({ store: options.store });
  const sources: SourceStatus[] = [];
  for (const checkpoints of checkpointStoresIn(config.paths.checkpointDir)) {
    const document = checkpoints.load();
    const sidecar = checkpoints.loadStatus();
    const running = sidecar !== undefined && sidecar.sink.state !== 'stopped' && isAlive(sidecar.pid);
    let bytesBehind = 0;
    let lastEventMs = 0;
    for (const file of document?.files ?? []) {
      lastEventMs = Math.max(lastEventMs, file.lastEventMs ?? 0);
      try {
        bytesBehind += Math.max(0, statSync(file.path).size - file.offset);
      } catch {
        // gone since the last commit
      }
    }
    sources.push({
      source: 'transcripts',
      store: sidecar?.store ?? '',
      otlpEndpoint: sidecar?.otlpEndpoint ?? '',
      running,
      pid: running ? sidecar.pid : undefined,
      watcher: running ? sidecar.watcher : undefined,
      sink: running ? sidecar.sink : { state: 'not running' },
      filesFollowed: document?.files.length ?? 0,
      bytesBehind,
      lastEventTime: lastEventMs > 0 ? new Date(lastEventMs).toISOString() : undefined,
      lastCommitTime: document ? new Date(document.committedAtMs).toISOString() : undefined,
      unreadableFiles: sidecar?.unreadableFiles ?? {},
      stateErrors: running ? (sidecar.stateErrors ?? {}) : {},
      catchUp: running ? sidecar.catchUp : undefined,
    });
  }
  const report: StatusReport = { sources, linesSkipped: {} };
  if (config.store === '') return report;
  try {
    const store = await openStore(config.store, { command: 'status', access: 'read', rawTtlDays: config.rawTtlDays });
    try {
      const result = await store.client.query({
        query: `SELECT LogAttributes['reason'] AS reason, toUInt64(sum(toUInt64OrDefault(LogAttributes['ccotel.record.count'], toUInt64(1)))) AS lines FROM ${store.database}.otel_logs
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

function listOrDash(byPath: Record<string, string>): string {
  const entries = Object.entries(byPath);
  return entries.length === 0 ? '-' : entries.map(([path, why]) => `${path}: ${why}`).join('\n');
}

function printStatus(report: StatusReport): void {
  if (report.sources.length === 0) console.log('no checkpoints yet: `ccotel run` has not run on this host (with this state dir)');
  for (const source of report.sources) {
    const table = new Table();
    const sinkText = 'lastError' in source.sink && source.sink.state === 'retrying' ? `retrying (${source.sink.lastError})` : source.sink.state;
    table.push(
      { source: source.source },
      { sidecar: source.running ? `running (pid ${source.pid}, ${source.watcher})` : 'not running' },
      { store: source.store || '(none)' },
      ...(source.otlpEndpoint ? [{ otlp: source.otlpEndpoint }] : []),
      { sink: sinkText },
      { 'files followed': String(source.filesFollowed) },
      { 'bytes behind': String(source.bytesBehind) },
      { 'catch-up': source.catchUp ? describeCatchUp(source.catchUp) : '-' },
      { 'last event': source.lastEventTime ?? '-' },
      { 'last commit': source.lastCommitTime ?? '-' },
      { unreadable: listOrDash(source.unreadableFiles) },
      { 'state writes failing': listOrDash(source.stateErrors) },
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
