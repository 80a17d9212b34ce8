// Read the transcript history once through the pipeline (`backfill`): every file from its start, in the order
// discovery gives (oldest session first, each followed by its subagents), closing the sessions that went idle
// in record time on the way, so memory holds the sessions still going on rather than the whole history.
import { ingestFile } from './ingest.js';
import type { Pipeline } from './pipeline.js';
import type { TranscriptFile } from './records/transcript.js';

export interface HistoryReadOptions {
  /** A session with no record for this long before the newest record read so far is over. */
  idleMs: number;
  /** Bytes read (per batch of lines), and once per file done (0). */
  onProgress?: (bytes: number) => void;
}

export async function readHistory(pipeline: Pipeline, files: TranscriptFile[], options: HistoryReadOptions): Promise<void> {
  let newestRecordMs = Number.NEGATIVE_INFINITY;
  for (const file of files) {
    // Before a main transcript only: a session's subagents, read right after it, may still extend it.
    if (file.kind === 'main') pipeline.closeIdle(newestRecordMs - options.idleMs);
    let read;
    try {
      read = await ingestFile(pipeline, file, 0, options.onProgress);
    } catch (error) {
      pipeline.reportUnreadable(file.path, error as Error);
      continue;
    }
    if (read.pendingBytes > 0) pipeline.skip(file.path, read.offset, 'partial_last_line', '');
    pipeline.stats.files++;
    newestRecordMs = Math.max(newestRecordMs, pipeline.lastEventMs(file.path) ?? Number.NEGATIVE_INFINITY);
    pipeline.forgetFile(file.path);
    options.onProgress?.(0);
  }
}
