// The reference answer for the reliability tests: the span ids a one-off backfill of the finished
// transcripts produces, computed in this process (the backfill's pipeline with a sink that only keeps
// span ids), so no second embedded store is needed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../sidecar/src/config.js';
import { buildPipeline } from '../../sidecar/src/build-pipeline.js';
import { ingestFile } from '../../sidecar/src/ingest.js';
import type { Sink, TelemetryBatch } from '../../sidecar/src/model.js';
import { discoverTranscripts, transcriptRoots } from '../../sidecar/src/sources/transcript-discovery.js';

class SpanIdSink implements Sink {
  readonly name = 'span-ids';
  readonly spanIds = new Set<string>();

  async write(batch: TelemetryBatch): Promise<void> {
    for (const span of batch.spans) this.spanIds.add(span.spanId);
  }

  async close(): Promise<void> {}
}

/** Span ids of every transcript under `configDir`/projects, read once from the start as `ccotel backfill` does. */
export async function referenceSpanIds(configDir: string): Promise<Set<string>> {
  const state = mkdtempSync(join(tmpdir(), 'ccotel-reference-'));
  try {
    const env = { HOME: state, CCOTEL_STATE_DIR: state, CCOTEL_CONFIG: 'none' };
    const sink = new SpanIdSink();
    const { pipeline } = buildPipeline(loadConfig({ store: '' }, env), { mode: 'once', sinks: [sink] });
    for (const file of await discoverTranscripts(transcriptRoots({ ...env, CLAUDE_CONFIG_DIR: configDir }))) {
      const read = await ingestFile(pipeline, file, 0);
      if (read.pendingBytes > 0) pipeline.skip(file.path, read.offset, 'partial_last_line', '');
    }
    await pipeline.finish();
    return sink.spanIds;
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
}

/** What differs between the stored span ids (one entry per row) and the reference. */
export function compareSpanIds(stored: string[], reference: Set<string>): { missing: number; extra: number; duplicates: number } {
  const distinct = new Set(stored);
  return {
    missing: [...reference].filter((id) => !distinct.has(id)).length,
    extra: [...distinct].filter((id) => !reference.has(id)).length,
    duplicates: stored.length - distinct.size,
  };
}
