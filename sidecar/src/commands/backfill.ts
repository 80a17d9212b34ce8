// `ccotel backfill`: read the transcript history once into the store, with a progress bar.
import { SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { buildPipeline, exportSinks, ingestFile, requireDestination } from '../ingest.js';
import type { IngestStats } from '../pipeline.js';
import { HookSpoolSource, type HookSpoolStats } from '../sources/hook-spool-source.js';
import { ShellLogSource } from '../sources/shell-log-source.js';
import { discoverTranscripts, transcriptRoots } from '../sources/transcript-discovery.js';
import { openStore } from '../store/open-store.js';
import { exportOption, parseSince, storeOption, type GlobalOptions } from './options.js';

export interface BackfillResult {
  stats: IngestStats;
  inserted: { spans: number; logs: number; metrics: number };
  repeatsDropped: number;
  hooks: HookSpoolStats;
  seconds: number;
}

export async function backfill(options: GlobalOptions & { since?: string; progress?: boolean; keepSpool?: boolean }): Promise<BackfillResult> {
  const started = performance.now();
  const config = loadConfig({ store: options.store, otlp: options.otlp, contentLevel: options.contentLevel });
  requireDestination(config);
  const since = options.since ? parseSince(options.since) : undefined;
  const files = (await discoverTranscripts(transcriptRoots(), (message) => console.error(`ccotel backfill: ${message}`))).filter((file) => since === undefined || file.mtimeMs >= since);
  const store = config.store === '' ? undefined : await openStore(config.store, { command: 'backfill', access: 'write', rawTtlDays: config.rawTtlDays });
  const extraSinks = await exportSinks(config);
  try {
    const { pipeline, storeSink, hooks, shell, maskText } = buildPipeline(config, store, extraSinks);
    // Hooks and shell logs first: they wait (in their correlators) for the spans the transcripts produce.
    // Delivered hook events are deleted, as `run` does, unless --keep-spool; shell logs are read whole.
    const spool = new HookSpoolSource({ ...config.paths, pipeline, maskText, addHook: (event) => hooks.add(event), consume: !options.keepSpool });
    spool.scan();
    await new ShellLogSource({ dir: config.paths.shellLogDir, shell, pipeline }).readAll();
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
    for (const file of files) {
      let read;
      try {
        read = await ingestFile(pipeline, file, 0, (bytes) => {
          doneBytes += bytes;
          showProgress();
        });
      } catch (error) {
        pipeline.reportUnreadable(file.path, error as Error);
        continue;
      }
      if (read.pendingBytes > 0) pipeline.skip(file.path, read.offset, 'partial_last_line', '');
      pipeline.stats.files++;
      showProgress();
    }
    await pipeline.finish();
    await spool.settle();
    bar?.stop();
    return {
      stats: pipeline.stats,
      inserted: storeSink?.stats.inserted ?? { spans: 0, logs: 0, metrics: 0 },
      repeatsDropped: storeSink?.stats.repeatsDropped ?? 0,
      hooks: spool.stats,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    for (const sink of extraSinks) await sink.close();
    await store?.close();
  }
}

export function registerBackfillCommand(program: Command): void {
  exportOption(storeOption(
    program
      .command('backfill')
      .description('Read the whole transcript history once into the store (safe to run again: repeats are dropped)')
      .option('--since <when>', 'only files modified since this date (ISO 8601) or duration ago (e.g. 7d, 12h)')
      .option('--json', 'print the summary as JSON')
      .option('--no-progress', 'no progress bar')
      .option('--keep-spool', 'read the hook spool without deleting the delivered events'),
  )).action(async (opts) => {
    const result = await backfill({ ...opts, progress: opts.progress && process.stderr.isTTY && !opts.json });
    const summary = {
      files: result.stats.files,
      bytes: result.stats.bytes,
      lines: result.stats.lines,
      skipped: result.stats.skipped,
      inserted: result.inserted,
      repeatsDropped: result.repeatsDropped,
      hookEvents: { read: result.hooks.read, deadLettered: result.hooks.deadLettered, dropped: result.hooks.dropped },
      seconds: Number(result.seconds.toFixed(2)),
      mbPerSecond: Number((result.stats.bytes / 1e6 / result.seconds).toFixed(1)),
    };
    if (opts.json) console.log(JSON.stringify(summary));
    else {
      console.log(`read ${summary.files} files, ${(summary.bytes / 1e6).toFixed(1)} MB in ${summary.seconds} s (${summary.mbPerSecond} MB/s)`);
      console.log(`stored ${summary.inserted.spans} spans, ${summary.inserted.logs} log records, ${summary.inserted.metrics} metric points; ${summary.repeatsDropped} repeats dropped`);
      if (summary.hookEvents.read + summary.hookEvents.deadLettered > 0) {
        console.log(`hook events: ${summary.hookEvents.read} read, ${summary.hookEvents.deadLettered} kept aside, ${summary.hookEvents.dropped} dropped by the hook`);
      }
      const skipped = Object.entries(summary.skipped);
      if (skipped.length > 0) console.log(`skipped lines: ${skipped.map(([reason, n]) => `${reason}=${n}`).join(', ')} (see \`ccotel report\`)`);
    }
  });
}
