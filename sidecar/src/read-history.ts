// Read the transcript history once through the pipeline (`backfill`): every file from its start, in the order
// discovery gives (oldest session first, each followed by its subagents), closing the sessions that went idle
// in record time on the way, so memory holds the sessions still going on rather than the whole history.
import { ingestFile } from './ingest.js';
import type { Pipeline } from './pipeline.js';
import type { TranscriptFile } from './records/transcript.js';
import { openRegularFileSized, type SizedFile } from './sources/regular-file.js';

export interface HistoryReadOptions {
  /** A session with no record for this long before the newest record read so far is over. */
  idleMs: number;
  /** Bytes read (per batch of lines), and once per file done (0). */
  onProgress?: (bytes: number) => void;
}

/**
 * The file opened while the one before it is read: thousands of small files would otherwise leave the main thread
 * waiting on an open and a stat each. A failure is told when the file's turn comes.
 */
function openAhead(file: TranscriptFile): Promise<SizedFile> {
  const opened = openRegularFileSized(file.path);
  opened.catch(() => undefined);
  return opened;
}

export async function readHistory(pipeline: Pipeline, files: TranscriptFile[], options: HistoryReadOptions): Promise<void> {
  let newestRecordMs = Number.NEGATIVE_INFINITY;
  let next = files.length > 0 ? openAhead(files[0]) : undefined;
  try {
    for (const [index, file] of files.entries()) {
      // Before a main transcript only: a session's subagents, read right after it, may still extend it.
      if (file.kind === 'main') pipeline.closeIdle(newestRecordMs - options.idleMs);
      // From here the file opened ahead is readLines' to close, and the one after it the `finally`'s.
      const opened = next!;
      next = index + 1 < files.length ? openAhead(files[index + 1]) : undefined;
      let read;
      try {
        read = await ingestFile(pipeline, file, 0, options.onProgress, opened);
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
  } finally {
    // An error that ended the loop leaves the next file open: closed here.
    await next?.then(({ handle }) => handle.close(), () => undefined);
  }
}
