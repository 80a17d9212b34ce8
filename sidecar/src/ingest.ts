// Assemble a pipeline from the configuration (store sink, processors) and read transcript files through it.
// Shared by `backfill` (read once) and `run` (read, then follow).
import type { Config } from './config.js';
import { isTextMasker, type Processor, type Sink } from './model.js';
import { Pipeline } from './pipeline.js';
import { CapProcessor } from './processors/cap.js';
import { NoContentProcessor } from './processors/content-level.js';
import { loadOrCreateInstallationKey } from './processors/installation-key.js';
import { MaskProcessor } from './processors/mask.js';
import { PriceChatsProcessor } from './processors/price-chats.js';
import { createSecretDetector } from './processors/secret-detector.js';
import { TranscriptCorrelator } from './processors/transcripts/correlator.js';
import type { TranscriptFile } from './records/transcript.js';
import { HookCorrelator } from './processors/correlate-hooks.js';
import { ShellCorrelator } from './processors/correlate-shell.js';
import { FailureModeDetector } from './processors/detectors/index.js';
import { SessionStateTracker } from './processors/session-state.js';
import { sidecarResource, SIDECAR_VERSION } from './resource.js';
import { ClickHouseSink } from './sinks/clickhouse-sink.js';
import { createOtlpSink } from './sinks/otlp-sink.js';
import { RowMapper } from './sinks/clickhouse-rows.js';
import { readLines, type ReadResult } from './sources/line-reader.js';
import type { Store } from './store/open-store.js';

/**
 * Pricing first (it reads only token counts). Masking before capping, always, so a cap can never cut a
 * secret in half and leave its head readable.
 */
export function buildProcessors(config: Config): Processor[] {
  const price = new PriceChatsProcessor();
  const cap = new CapProcessor(config.contentMaxLength);
  if (config.contentLevel === 'raw') return [price, cap];
  const mask = new MaskProcessor(createSecretDetector(), loadOrCreateInstallationKey(config.paths.keyPath));
  return config.contentLevel === 'none' ? [price, new NoContentProcessor(), mask, cap] : [price, mask, cap];
}

export interface BuiltPipeline {
  pipeline: Pipeline;
  storeSink?: ClickHouseSink;
  /** Hook events (from the spool source) are joined onto the transcript traces here. */
  hooks: HookCorrelator;
  /** Shell-log commands (from the shell log source) become shell spans under their Bash tool span here. */
  shell: ShellCorrelator;
  /** Failure modes: fed by the telemetry, the hooks and (in `run`) the process watcher's scans. */
  detector: FailureModeDetector;
  /** The pipeline's masking for text kept outside telemetry (dead-letter files); as is at content level raw. */
  maskText: (text: string) => Promise<string>;
}

/** A writing command needs a store or an OTLP endpoint (`--store none` without `--otlp` writes nowhere). */
export function requireDestination(config: Config): void {
  if (config.store === '' && config.otlpEndpoint === '') throw new Error('nothing to write to: give a --store or an --otlp endpoint');
}

/** Sinks besides the store: the OTLP exporter when an endpoint is configured. Close them when done. */
export async function exportSinks(config: Config): Promise<Sink[]> {
  return config.otlpEndpoint ? [await createOtlpSink(config)] : [];
}

export function buildPipeline(config: Config, store: Store | undefined, extraSinks: Sink[] = []): BuiltPipeline {
  const storeSink = store ? new ClickHouseSink(store.client, new RowMapper(sidecarResource(config.contentLevel), SIDECAR_VERSION), store.database, store.kind === 'embedded') : undefined;
  const sinks = [...(storeSink ? [storeSink] : []), ...extraSinks];
  const correlator = new TranscriptCorrelator();
  const detector = new FailureModeDetector({ idleMs: config.idleMs });
  const sessionState = new SessionStateTracker();
  const hooks = new HookCorrelator({ contentLevel: config.contentLevel, listeners: [detector.onHook] });
  const shell = new ShellCorrelator();
  // The pipeline runs each join after those publishing the events it consumes (join-chain.ts).
  const joins = [hooks, shell, detector, sessionState];
  const processors = buildProcessors(config);
  const mask = processors.find(isTextMasker);
  const maskText = (text: string) => (mask ? mask.maskString(text) : Promise.resolve(text));
  return { pipeline: new Pipeline(correlator, processors, sinks, joins), storeSink, hooks, shell, detector, maskText };
}

/** Read one file from `offset` to its current end through the pipeline; a partial last line is left for later. */
export async function ingestFile(
  pipeline: Pipeline,
  file: TranscriptFile,
  offset: number,
  onProgress?: (bytes: number) => void,
): Promise<ReadResult> {
  const result = await readLines(file.path, offset, async (lines) => {
    await pipeline.addLines(file, lines);
    onProgress?.(lines[lines.length - 1].end - lines[0].start);
  });
  for (const start of result.tooLong) pipeline.skip(file.path, start, 'line_too_long', '');
  return result;
}
