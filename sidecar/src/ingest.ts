// Read one transcript file through the pipeline: `backfill` reads every file this way from its start.
import type { Pipeline } from './pipeline.js';
import type { TranscriptFile } from './records/transcript.js';
import { readLines, type ReadResult } from './sources/line-reader.js';
import type { SizedFile } from './sources/regular-file.js';

/**
 * Read one file from `offset` to its current end through the pipeline; a partial last line is left for later.
 * `opened`: the file opened ahead (readLines), read to the size it had then.
 */
export async function ingestFile(
  pipeline: Pipeline,
  file: TranscriptFile,
  offset: number,
  onProgress?: (bytes: number) => void,
  opened?: Promise<SizedFile>,
): Promise<ReadResult> {
  const result = await readLines(opened ?? file.path, offset, async (lines) => {
    await pipeline.addLines(file, lines);
    onProgress?.(lines[lines.length - 1].end - lines[0].start);
  });
  for (const start of result.tooLong) pipeline.skip(file.path, start, 'line_too_long', '');
  return result;
}
