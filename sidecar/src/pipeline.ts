// The pipeline: transcript lines → parse → correlate → processors (mask, cap) → sinks.
// Lines are fed in file order; telemetry leaves in batches, and `flush` resolves only once every sink
// accepted the batch, which is what lets a caller commit file offsets after it (at-least-once).
import { recordIdOf } from './ids.js';
import type { Line } from './sources/line-reader.js';
import { batchSize, emptyBatch, type LogRecord, type MetricPoint, type Processor, type Sink, type TelemetryBatch } from './model.js';
import { TranscriptCorrelator, type TranscriptFile } from './processors/correlate-transcripts.js';
import { parseTranscriptLine, type SkipReason } from './processors/parse-transcript.js';

/** Characters of a skipped line kept (masked, like everything else) in its `ccotel.record.skipped` record. */
const SKIPPED_LINE_KEEP = 2048;
/** Items buffered before a flush; the flush waits for the sinks, which is the backpressure. */
const FLUSH_ITEMS = 20_000;

export interface IngestStats {
  files: number;
  bytes: number;
  lines: number;
  conversationRows: number;
  ignoredRows: number;
  skipped: Partial<Record<SkipReason, number>>;
  skippedByFile: Map<string, Partial<Record<SkipReason, number>>>;
  unreadableFiles: Map<string, string>;
  batches: number;
}

export function newIngestStats(): IngestStats {
  return { files: 0, bytes: 0, lines: 0, conversationRows: 0, ignoredRows: 0, skipped: {}, skippedByFile: new Map(), unreadableFiles: new Map(), batches: 0 };
}

export class Pipeline {
  readonly stats = newIngestStats();
  private readonly correlator: TranscriptCorrelator;
  private pending: TelemetryBatch = emptyBatch();
  /** Time of the last record read per file: skipped lines get it, so a re-read stamps them the same. */
  private readonly lastTimeMs = new Map<string, number>();

  constructor(
    correlator: TranscriptCorrelator,
    private readonly processors: Processor[],
    private readonly sinks: Sink[],
  ) {
    this.correlator = correlator;
  }

  async addLines(file: TranscriptFile, lines: Line[]): Promise<void> {
    for (const line of lines) {
      this.stats.lines++;
      this.stats.bytes += line.end - line.start;
      if (line.start === 0) this.correlator.readingFromStart(file.path);
      if (line.text.length === 0) continue;
      const parsed = parseTranscriptLine(line.text);
      if (parsed.ok === true) {
        this.stats.conversationRows++;
        this.lastTimeMs.set(file.path, parsed.entry.timeMs);
        this.correlator.add(parsed.entry, file, line.start);
      } else if (parsed.ok === 'ignored') {
        this.stats.ignoredRows++;
      } else {
        this.skip(file.path, line.start, parsed.reason, line.text, parsed.type);
      }
    }
    if (this.bufferedItems() >= FLUSH_ITEMS) await this.flush();
  }

  /** Count a line that was not used, and keep it aside (masked and capped like any output) as a log record. */
  skip(path: string, offset: number, reason: SkipReason, text: string, type?: string): void {
    this.stats.skipped[reason] = (this.stats.skipped[reason] ?? 0) + 1;
    const perFile = this.stats.skippedByFile.get(path) ?? {};
    perFile[reason] = (perFile[reason] ?? 0) + 1;
    this.stats.skippedByFile.set(path, perFile);
    const id = recordIdOf('skipped', path, String(offset));
    const timeMs = this.lastTimeMs.get(path) ?? timestampIn(text) ?? 0;
    const attributes = { reason, 'ccotel.source': 'transcript', 'ccotel.source.file': path, 'ccotel.source.offset': offset, ...(type ? { 'ccotel.row.type': type } : {}) };
    const log: LogRecord = {
      id,
      timeMs,
      eventName: 'ccotel.record.skipped',
      severity: 'WARN',
      traceId: '',
      spanId: '',
      body: text.slice(0, SKIPPED_LINE_KEEP),
      attributes,
    };
    const point: MetricPoint = {
      id,
      name: 'ccotel.sidecar.records',
      unit: '{record}',
      description: 'Input records the sidecar could not use, by source and reason',
      kind: 'sum',
      timeMs,
      value: 1,
      attributes: { source: 'transcript', result: reason },
      traceId: '',
      spanId: '',
    };
    this.pending.logs.push(log);
    this.pending.metrics.push(point);
  }

  /** A file that could not be read at all is reported, and the others go on. */
  reportUnreadable(path: string, error: Error): void {
    this.stats.unreadableFiles.set(path, error.message);
  }

  /** End of input: close everything still open and deliver it. */
  async finish(): Promise<void> {
    this.correlator.finish();
    await this.flush();
  }

  async closeIdle(idleBeforeMs: number): Promise<void> {
    this.correlator.closeIdle(idleBeforeMs);
    await this.flush();
  }

  /** Time (from the records) of the last record read from `path`. */
  lastEventMs(path: string): number | undefined {
    return this.lastTimeMs.get(path);
  }

  oldestOpenOffset(path: string): number | undefined {
    return this.correlator.oldestOpenOffset(path);
  }

  /** Deliver everything correlated so far; resolves once every sink accepted it. */
  async flush(): Promise<void> {
    const taken = this.take();
    if (batchSize(taken) === 0) return;
    try {
      let batch = taken;
      for (const processor of this.processors) batch = await processor.process(batch);
      for (const sink of this.sinks) await sink.write(batch);
    } catch (error) {
      // Keep the batch for the next flush: the lines it came from are read already (a sink that took it
      // in part drops the repeats by id).
      this.pending = concatBatches(taken, this.pending);
      throw error;
    }
    this.stats.batches++;
  }

  private bufferedItems(): number {
    this.collect();
    return batchSize(this.pending);
  }

  /** Move what the correlator emitted into the pending batch. */
  private collect(): void {
    this.pending = concatBatches(this.pending, this.correlator.drain());
  }

  private take(): TelemetryBatch {
    this.collect();
    const batch = this.pending;
    this.pending = emptyBatch();
    return batch;
  }
}

function concatBatches(first: TelemetryBatch, second: TelemetryBatch): TelemetryBatch {
  return { spans: first.spans.concat(second.spans), logs: first.logs.concat(second.logs), metrics: first.metrics.concat(second.metrics) };
}

/** The record time written in a line, when a line that could not be used still names one. */
function timestampIn(text: string): number | undefined {
  const match = /"timestamp":"([^"]{10,40})"/.exec(text);
  const time = match ? Date.parse(match[1]) : NaN;
  return Number.isNaN(time) ? undefined : time;
}
