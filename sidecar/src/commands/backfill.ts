// `ccotel backfill`: read the transcript history once into the store, with a progress bar.
import { SingleBar } from 'cli-progress';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { buildPipeline, exportSinks, requireDestination } from '../build-pipeline.js';
import type { IngestStats } from '../pipeline.js';
import { readHistory } from '../read-history.js';
import type { HookSpoolStats } from '../sources/hook-spool-source.js';
import { codexRoot } from '../sources/codex/rollout-tree.js';
import { discoverTranscripts, transcriptRoots } from '../sources/transcript-discovery.js';
import { renderContext } from '../../../schemas/clickhouse.js';
import { historyHeapBudget, keepHeapNear } from '../heap-budget.js';
import { placement, type Placement } from '../retention/placement.js';
import { ensureSummaryTables } from '../retention/run-retention.js';
import { deleteExpired } from '../retention/expire.js';
import { refreshInsightSlots } from '../retention/insight-slots.js';
import { refreshSummaries } from '../retention/summaries.js';
import { ensureStateDirs } from '../secure-dir.js';
import { openStore, type Store } from '../store/open-store.js';
import { codexHomeOption, exportOption, parseSince, storeOption, type GlobalOptions } from './options.js';

export interface BackfillResult {
  stats: IngestStats;
  /** Sent to the store; rows older than the raw window are dropped by its TTL as they arrive. */
  inserted: { spans: number; logs: number; metrics: number };
  /** The store before and after (undefined without a store): what the raw tables and the summaries gained. */
  store?: { before: Placement; after: Placement; rawTtlDays: number; summaryTtlDays: number; created?: string };
  repeatsDropped: number;
  hooks: HookSpoolStats;
  seconds: number;
}

export async function backfill(
  options: GlobalOptions & { since?: string; progress?: boolean; keepSpool?: boolean; codexHome?: string; steerHeap?: boolean },
): Promise<BackfillResult> {
  const started = performance.now();
  const config = loadConfig({ store: options.store, otlp: options.otlp, contentLevel: options.contentLevel, ticketPattern: options.ticketPattern, codexHome: options.codexHome });
  requireDestination(config);
  ensureStateDirs(config.paths);
  const since = options.since ? parseSince(options.since) : undefined;
  const claudeRoots = transcriptRoots();
  const roots = [...claudeRoots, codexRoot(config.codexHome)].filter((root) => existsSync(root));
  const files = (await discoverTranscripts(roots, (message) => console.error(`ccotel backfill: ${message}`))).filter((file) => since === undefined || file.mtimeMs >= since);
  const store = config.store === '' ? undefined : await openStore(config.store, { command: 'backfill', access: 'write', rawTtlDays: config.rawTtlDays, summaryTtlDays: config.summaryTtlDays });
  const extraSinks = await exportSinks(config);
  const before = store ? await placement(store.client, store.database, config.rawTtlDays) : undefined;
  const releaseHeap = options.steerHeap ? keepHeapNear(historyHeapBudget(store)) : () => {};
  try {
    const built = buildPipeline(config, { mode: 'once', store, sinks: extraSinks, keepSpool: options.keepSpool, configDirs: claudeRoots.map((root) => dirname(root)) });
    const { pipeline, storeSink, spool } = built;
    await built.readSideInputs();
    const totalBytes = files.reduce((sum, file) => sum + file.size, 0);
    const bar = options.progress
      ? new SingleBar({
          format: 'backfill [{bar}] {percentage}% | {files} files | {value}/{total} MB | {rate} MB/s',
          hideCursor: true,
        })
      : undefined;
    let doneBytes = 0;
    const showProgress = () => {
      const seconds = (performance.now() - started) / 1000;
      bar?.update(Math.round(doneBytes / 1e6), { files: `${pipeline.stats.files}/${files.length}`, rate: (doneBytes / 1e6 / Math.max(seconds, 0.001)).toFixed(1) });
    };
    bar?.start(Math.round(totalBytes / 1e6), 0, { files: `0/${files.length}`, rate: '0.0' });
    await readHistory(pipeline, files, {
      idleMs: config.idleMs,
      onProgress: (bytes) => {
        doneBytes += bytes;
        showProgress();
      },
    });
    await pipeline.finish();
    await spool.settle();
    bar?.stop();
    const after = store ? await summarise(store, config.rawTtlDays, config.summaryTtlDays) : undefined;
    return {
      stats: pipeline.stats,
      store: before && after && store
        ? { before, after, rawTtlDays: config.rawTtlDays, summaryTtlDays: config.summaryTtlDays, created: store.created ? store.target : undefined }
        : undefined,
      inserted: storeSink?.stats.inserted ?? { spans: 0, logs: 0, metrics: 0 },
      repeatsDropped: storeSink?.stats.repeatsDropped ?? 0,
      hooks: spool.stats,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    releaseHeap();
    for (const sink of extraSinks) await sink.close();
    await store?.close();
  }
}

/** Session summaries for what was read (so a retention run afterwards finds nothing to do), then the counts. */
async function summarise(store: Store, rawTtlDays: number, summaryTtlDays: number): Promise<Placement> {
  await ensureSummaryTables(store.client, { database: store.database, summaryTtlDays });
  // A store this backfill made got each raw row through the views that write its facts, in the same insert: nothing to
  // repair, and the repair's scan of the whole history is the largest memory of the backfill's end (~150 MB at 1 GB).
  const ctx = renderContext({ database: store.database });
  const refreshedAt = Date.now();
  await refreshSummaries(store.client, ctx, refreshedAt, { repairFacts: !store.created });
  await refreshInsightSlots(store.client, ctx, refreshedAt);
  // History older than the raw window was stored only for its facts: its days go now, not by TTL merges in whatever
  // opens the store next (each such merge leaves an empty part that a short command never cleans up). Only where the
  // window is this setting's: a server's raw tables keep what its retention job is told.
  if (store.kind === 'embedded') await deleteExpired(store.client, ctx, { raw: rawTtlDays, summary: 0 }, Date.now());
  return placement(store.client, store.database, rawTtlDays);
}

/** The lines saying what went where; never a row the raw TTL dropped counted as stored. */
export function describePlacement(result: BackfillResult): string[] {
  if (!result.store) return [`sent ${result.inserted.spans} spans, ${result.inserted.logs} log records, ${result.inserted.metrics} metric points`];
  const { before, after, rawTtlDays, summaryTtlDays, created } = result.store;
  const gained = (key: keyof Placement['raw']) => after.raw[key] - before.raw[key];
  const window = rawTtlDays > 0 ? `the last ${rawTtlDays} days` : 'all history (no raw TTL)';
  const added = after.sessions - before.sessions;
  const summaryOnly = after.summaryOnlySessions - before.summaryOnlySessions;
  const detail = rawTtlDays > 0 ? `detail for the last ${rawTtlDays} days (${added - summaryOnly} of them)` : 'detail for all';
  const summaries = summaryTtlDays > 0
    ? `summaries for ${summaryTtlDays} days after their last activity (summary TTL set: older history is not kept)`
    : 'summaries for all';
  return [
    ...(created ? [`created a new store at ${created}`] : []),
    `stored ${gained('spans')} spans, ${gained('logs')} log records, ${gained('metrics')} metric points of ${window} in the raw tables; ${result.repeatsDropped} repeats dropped`,
    `sessions: ${added} new (${after.sessions} in the store): ${detail}, ${summaries}`,
  ];
}

export function registerBackfillCommand(program: Command): void {
  codexHomeOption(exportOption(storeOption(
    program
      .command('backfill')
      .description('Read the whole transcript history once into the store (safe to run again: repeats are dropped)')
      .option('--since <when>', 'only files modified since this date (ISO 8601) or duration ago (e.g. 7d, 12h)')
      .option('--json', 'print the summary as JSON')
      .option('--no-progress', 'no progress bar')
      .option('--keep-spool', 'read the hook spool without deleting the delivered events'),
  ))).action(async (opts) => {
    const result = await backfill({ ...opts, progress: opts.progress && process.stderr.isTTY && !opts.json, steerHeap: true });
    const summary = {
      files: result.stats.files,
      bytes: result.stats.bytes,
      lines: result.stats.lines,
      skipped: result.stats.skipped,
      inserted: result.inserted,
      repeatsDropped: result.repeatsDropped,
      store: result.store,
      hookEvents: { read: result.hooks.read, deadLettered: result.hooks.deadLettered, dropped: result.hooks.dropped },
      seconds: Number(result.seconds.toFixed(2)),
      mbPerSecond: Number((result.stats.bytes / 1e6 / result.seconds).toFixed(1)),
    };
    if (opts.json) console.log(JSON.stringify(summary));
    else {
      console.log(`read ${summary.files} files, ${(summary.bytes / 1e6).toFixed(1)} MB in ${summary.seconds} s (${summary.mbPerSecond} MB/s)`);
      for (const line of describePlacement(result)) console.log(line);
      if (summary.hookEvents.read + summary.hookEvents.deadLettered > 0) {
        console.log(`hook events: ${summary.hookEvents.read} read, ${summary.hookEvents.deadLettered} kept aside, ${summary.hookEvents.dropped} dropped by the hook`);
      }
      const skipped = Object.entries(summary.skipped);
      if (skipped.length > 0) console.log(`skipped lines: ${skipped.map(([reason, n]) => `${reason}=${n}`).join(', ')} (see \`ccotel report\`)`);
    }
  });
}
