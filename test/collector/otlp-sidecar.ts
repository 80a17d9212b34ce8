// The sidecar as the collector tests run it: the backfill path (buildPipeline + ingestFile) with only the
// OTLP sink (no store, so chdb is never loaded) plus a recording sink that keeps what was delivered as
// the reference, fed either all at once or a step at a time like a live run.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { loadConfig } from '../../sidecar/src/config.js';
import { buildPipeline } from '../../sidecar/src/build-pipeline.js';
import { ingestFile } from '../../sidecar/src/ingest.js';
import type { Pipeline } from '../../sidecar/src/pipeline.js';
import { createOtlpSink } from '../../sidecar/src/sinks/create-otlp-sink.js';
import type { OtlpSink, OtlpSinkOptions } from '../../sidecar/src/sinks/otlp-sink.js';
import { discoverTranscripts, transcriptRoots, type DiscoveredTranscript } from '../../sidecar/src/sources/transcript-discovery.js';
import type { Gateway } from './otlp-gateway.js';
import { readOutput, RecordingSink } from './otlp-output.js';

export interface SidecarUnderTest {
  sink: OtlpSink;
  recorder: RecordingSink;
  pipeline: Pipeline;
}

/** The OTLP-only sidecar pointed at `gateway`, its state under `stateDir`; OTEL_* settings go through process.env. */
export async function otlpOnlySidecar(gateway: Gateway, stateDir: string, overrides: Partial<OtlpSinkOptions> = {}): Promise<SidecarUnderTest> {
  process.env.OTEL_EXPORTER_OTLP_HEADERS = `authorization=Bearer%20${gateway.token}`;
  const config = loadConfig({ store: '', otlp: gateway.url }, { HOME: stateDir, CCOTEL_STATE_DIR: stateDir });
  const sink = await createOtlpSink(config, overrides);
  const recorder = new RecordingSink();
  const { pipeline } = buildPipeline(config, { mode: 'once', sinks: [sink, recorder] });
  return { sink, recorder, pipeline };
}

/** Read every transcript under the config dirs once, as `ccotel backfill` does. */
export async function backfillAll(sidecar: SidecarUnderTest, configDirs: string[]): Promise<void> {
  const { pipeline } = sidecar;
  for (const file of await discoverTranscripts(transcriptRoots({ HOME: '/nonexistent', CLAUDE_CONFIG_DIR: configDirs.join(',') }))) {
    const read = await ingestFile(pipeline, file, 0);
    if (read.pendingBytes > 0) pipeline.skip(file.path, read.offset, 'partial_last_line', '');
  }
  await pipeline.finish();
}

/**
 * Replays a transcript tree into a live copy a slice of lines at a time; after each slice the sidecar reads
 * what was appended from its last offset and delivers it, as `ccotel run` does when files grow.
 */
export class LiveReplay {
  private readonly files: { live: DiscoveredTranscript; lines: string[] }[] = [];
  private readonly offsets = new Map<string, number>();

  constructor(sources: DiscoveredTranscript[], sourceRoots: string[], liveRoot: string, readonly steps: number) {
    for (const file of sources) {
      const root = sourceRoots.find((r) => file.path.startsWith(r))!;
      const text = readFileSync(file.path, 'utf8');
      // Keep the newlines: a partial last line stays partial.
      const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
      // The same kind, agent and reading order as the source (discovery orders by modification time).
      this.files.push({ live: { ...file, path: join(liveRoot, 'projects', relative(root, file.path)) }, lines });
    }
  }

  static async of(configDirs: string[], liveRoot: string, steps: number): Promise<LiveReplay> {
    const roots = transcriptRoots({ HOME: '/nonexistent', CLAUDE_CONFIG_DIR: configDirs.join(',') });
    return new LiveReplay(await discoverTranscripts(roots), roots, liveRoot, steps);
  }

  /** Append slice `step` (1-based) of every file, then read and deliver it. */
  async step(step: number, pipeline: Pipeline): Promise<void> {
    for (const file of this.files) {
      const from = Math.floor(((step - 1) * file.lines.length) / this.steps);
      const to = Math.floor((step * file.lines.length) / this.steps);
      mkdirSync(dirname(file.live.path), { recursive: true });
      if (step === 1) writeFileSync(file.live.path, '');
      appendFileSync(file.live.path, file.lines.slice(from, to).join(''));
    }
    for (const { live: file } of this.files) {
      const read = await ingestFile(pipeline, file, this.offsets.get(file.path) ?? 0);
      this.offsets.set(file.path, read.offset);
      if (step === this.steps && read.pendingBytes > 0) pipeline.skip(file.path, read.offset, 'partial_last_line', '');
    }
    if (step === this.steps) await pipeline.finish();
    else await pipeline.flush();
  }
}

export function deliveredIds(recorder: RecordingSink): Set<string> {
  const batch = recorder.batch;
  return new Set([...batch.spans.map((s) => s.spanId), ...batch.logs.map((l) => l.id), ...batch.metrics.map((p) => p.id)]);
}

/** Waits until every id the sidecar delivered so far is in the collector's output. */
export async function waitForOutput(gateway: Gateway, ids: Set<string>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const output = readOutput(gateway.outputLines());
    const seen = new Set([...output.spans.map((s) => s.spanId), ...output.logs.map((l) => l.id), ...output.points.map((p) => p.id)]);
    const missing = [...ids].filter((id) => !seen.has(id));
    if (missing.length === 0) return;
    if (Date.now() > deadline) throw new Error(`${missing.length} of ${ids.size} ids not in the collector output after ${timeoutMs} ms\n${gateway.logTail()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
