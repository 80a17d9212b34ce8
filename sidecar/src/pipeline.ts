// The pipeline: transcript lines → parse → correlate → joins (hooks, shell log, detectors) → processors
// (mask, cap) → sinks. Lines are fed in file order; telemetry leaves in batches, and `flush` resolves only
// once every sink accepted the batch; then it runs the acks that came with the data (at-least-once): those of
// transcript lines are told their resume offsets (ordered-acks.ts), those a join hands over with its output
// delete spool files or commit shell-log offsets. When to flush is the driver's choice (driver.ts).
import type { Line } from './sources/line-reader.js';
import type { Join } from './events.js';
import { JoinChain } from './join-chain.js';
import { batchSize, concatBatches, emptyBatch, type Ack, type MetricPoint, type Processor, type ResumeAck, type Sink, type TelemetryBatch } from './model.js';
import { ResumeAcks } from './ordered-acks.js';
import { TranscriptCorrelator } from './processors/transcripts/correlator.js';
import { encode } from './processors/encode/index.js';
import type { AgentRows } from './records/agent-rows.js';
import type { AgentName } from './semconv.js';
import type { TranscriptFile } from './records/transcript.js';
import { isUnknownDenialKind } from './processors/classify.js';
import { ignoredRowType, parseRow } from './processors/parse-transcript.js';
import type { SkipReason } from './processors/transcript-entry.js';
import { SkippedLines, timeAfter, timestampIn, type SkippedRecord } from './skipped-lines.js';
/** Items buffered before a flush; the flush waits for the sinks, which is the backpressure. */
export const FLUSH_ITEMS = 5_000;
/**
 * Input bytes read before a flush while read positions wait to be committed, so a long catch-up commits as it goes.
 * Reading once (backfill) hands over no positions: there a batch is bounded by its items alone, since most bytes of
 * real transcripts produce nothing (~4% are conversation) and a flush per 8 MB read made many small inserts.
 */
export const FLUSH_INPUT_BYTES = 8 << 20;
/** Lines read between checks of the two bounds above (a check gathers what the correlator emitted). */
const CHECK_EVERY_LINES = 1000;
/**
 * Items a sink is given at once. A batch overshoots FLUSH_ITEMS by what the lines since the last check produced, and
 * cutting it there sent the metric points at its end as inserts of their own (a part per table, each with the
 * engine's fixed cost); only what the end of input closes at once (every session's last turn) is cut.
 */
export const MAX_PART_ITEMS = 2 * FLUSH_ITEMS;

/** What was read; per-file detail of skipped lines is in their `ccotel.record.skipped` records. */
export interface IngestStats {
  files: number;
  bytes: number;
  lines: number;
  skipped: Partial<Record<SkipReason, number>>;
  unreadableFiles: Map<string, string>;
}

function newIngestStats(): IngestStats {
  return { files: 0, bytes: 0, lines: 0, skipped: {}, unreadableFiles: new Map() };
}

export class Pipeline {
  readonly stats = newIngestStats();
  private readonly correlator: TranscriptCorrelator;
  private pending: TelemetryBatch = emptyBatch();
  private pendingAcks: Ack[] = [];
  /** The acks handed over with transcript lines: told their resume offsets as a batch is taken. */
  private readonly lineAcks = new ResumeAcks();
  /**
   * What reading does when the batch is full: by default start delivering it in the background; a driver
   * (driver.ts) takes this over, so a sink that is down holds reading back while the driver retries.
   */
  onFull: () => Promise<void> = () => this.deliverInBackground();
  /** Input came since the last delivery: only then does `pendingItems` gather what the stages emitted. */
  private inputSinceFlush = false;
  /** Told when input comes after a delivery (the driver starts the age of the batch). */
  onInput: () => void = () => {};
  /** Flushes run one at a time (the driver's, and those of a caller: backfill, tests). */
  private flushing: Promise<void> = Promise.resolve();
  /**
   * The processors and sinks take one batch at a time: a flush's part, or a batch received whole (`deliver`), which
   * so waits for the part being written, not for the rest of a long flush (Claude Code's exporter gives up after 10 s).
   */
  private writing: Promise<void> = Promise.resolve();
  /** Time of the last record read per file: skipped lines get it, so a re-read stamps them the same. */
  private readonly lastTimeMs = new Map<string, number>();
  private readonly skipped: SkippedLines;
  private inputBytes = 0;
  private readonly joins: JoinChain;
  /** The sources of the other agents, by the agent their files name. */
  private readonly agents: Map<AgentName, AgentRows>;

  constructor(
    correlator: TranscriptCorrelator,
    private readonly processors: Processor[],
    private readonly sinks: Sink[],
    joins: Join[] = [],
    agents: Partial<Record<NonNullable<TranscriptFile['agent']>, AgentRows>> = {},
  ) {
    this.agents = new Map(Object.entries(agents) as [AgentName, AgentRows][]);
    this.correlator = correlator;
    this.skipped = new SkippedLines(Math.max(0, ...processors.map((processor) => processor.maxTextLength ?? 0)));
    this.joins = new JoinChain(joins);
  }

  /**
   * Take in lines of `file`, in file order. `ack` is told where a restart must read the file from once what the
   * lines produced is accepted by every sink (ordered-acks.ts).
   */
  async addLines(file: TranscriptFile, lines: Line[], ack?: ResumeAck): Promise<void> {
    if (ack && lines.length > 0) this.lineAcks.add(file.path, lines[lines.length - 1].end, ack);
    let sinceCheck = 0;
    for (const line of lines) {
      this.stats.lines++;
      this.stats.bytes += line.end - line.start;
      this.inputBytes += line.end - line.start;
      if (++sinceCheck === CHECK_EVERY_LINES) {
        sinceCheck = 0;
        if (this.batchFull()) await this.onFull();
      }
      const agent = file.agent === undefined ? undefined : this.agents.get(file.agent);
      if (line.start === 0) {
        (agent ?? this.correlator).readingFromStart(file.path);
        this.skipped.restart(file.path);
      }
      if (agent) {
        this.addAgentRow(agent, file, line, lines);
        continue;
      }
      // Rows surely not conversation are known by their bytes and never decoded; they yield nothing.
      if (line.bytes.length === 0 || ignoredRowType(line.bytes) !== undefined) continue;
      const parsed = parseRow(line.text);
      if (parsed.ok === true) {
        if (!Number.isNaN(parsed.entry.timeMs)) this.lastTimeMs.set(file.path, parsed.entry.timeMs);
        if (isUnknownDenialKind(parsed.entry.toolDenialKind)) this.skip(file.path, line.start, 'unknown_denial_kind', line.text, { type: parsed.entry.type });
        this.correlator.add(parsed.entry, file, line.start);
      } else if (parsed.ok === false) {
        // Before any time of its file, a line without one takes the time of the next line that has one.
        const timeIfNone = this.lastTimeMs.has(file.path) ? undefined : timeAfter(lines, line);
        this.skip(file.path, line.start, parsed.reason, line.text, { type: parsed.type, timeIfNone });
      }
    }
    this.correlator.closeStopped();
    this.noteInput(); // after the lines: what they produced is there to be counted
    if (this.batchFull()) await this.onFull();
  }

  /** A line of a file of another agent, to its own source. */
  private addAgentRow(agent: AgentRows, file: TranscriptFile, line: Line, lines: Line[]): void {
    if (line.bytes.length === 0) return;
    const read = agent.add(line.text, file, line.start);
    if (read.ok === true) {
      if (!Number.isNaN(read.timeMs)) this.lastTimeMs.set(file.path, read.timeMs);
    } else if (read.ok === false) {
      const timeIfNone = this.lastTimeMs.has(file.path) ? undefined : timeAfter(lines, line);
      this.skip(file.path, line.start, read.reason, line.text, { type: read.type, timeIfNone });
    }
  }

  /** Lines of `file` up to `end` were read but not handed over (too long): `ack` as for `addLines`. */
  readThrough(file: TranscriptFile, end: number, ack: ResumeAck): void {
    this.lineAcks.add(file.path, end, ack);
    this.noteInput();
  }

  /**
   * Count a line that was not used, and keep it aside (masked and capped like any output) as a log record, stamped
   * with the time of the line before it, its own, `timeIfNone`, or — in a file with no time at all — the time of
   * reading (never 1970, which retention would drop at once).
   */
  skip(path: string, offset: number, reason: SkipReason, text: string, extra: { type?: string; timeIfNone?: number } = {}): void {
    this.stats.skipped[reason] = (this.stats.skipped[reason] ?? 0) + 1;
    const timeMs = this.lastTimeMs.get(path) ?? timestampIn(text) ?? extra.timeIfNone ?? Date.now();
    this.skipRecord({ source: 'transcript', reason, file: path, offset, text, timeMs, type: extra.type });
  }

  /**
   * Report an input record of any source that was not used: a `ccotel.record.skipped` log and a health point,
   * for the first few per file and reason; past them, a count (see SKIPPED_RECORDS_PER_FILE).
   */
  skipRecord(record: SkippedRecord): void {
    this.skipped.add(record, this.pending);
    this.noteInput();
  }

  /** A `ccotel.sidecar.*` point about the sidecar's own health (deterministic id: a re-read reports it once). */
  addHealth(point: MetricPoint): void {
    this.pending.metrics.push(point);
    this.noteInput();
  }

  /** Records made beside the correlator (a detector reading what was delivered): out with the next batch. */
  add(batch: TelemetryBatch): void {
    this.joins.receive(batch);
    this.pending = concatBatches(this.pending, batch);
    this.noteInput();
  }

  /** A file that could not be read at all is reported, and the others go on. */
  reportUnreadable(path: string, error: Error): void {
    this.stats.unreadableFiles.set(path, error.message);
  }

  /** End of input: close everything still open and deliver it. */
  async finish(): Promise<void> {
    this.correlator.finish();
    for (const agent of this.agents.values()) agent.finish();
    this.collect();
    this.joins.finish();
    await this.flush();
  }

  /**
   * Close the sessions with no record since `idleBeforeMs` (following: the wall clock less the idle time; backfill,
   * reading sessions oldest first: a record time): what they emit goes out with the next batch, so memory holds
   * only the sessions still going on.
   */
  closeIdle(idleBeforeMs: number): void {
    this.correlator.closeIdle(idleBeforeMs);
    for (const agent of this.agents.values()) agent.closeIdle(idleBeforeMs);
    this.noteInput();
  }

  /** A Stop or SessionEnd hook of the session (following): its turn goes out once its rows say it is over. */
  agentStopped(sessionId: string, timeMs: number): void {
    this.correlator.agentStopped(sessionId, timeMs);
    this.noteInput();
  }

  /** A clean stop: the turns that are over go out with the last delivery, not after the idle time. */
  closeComplete(): void {
    this.correlator.closeComplete();
    this.noteInput();
  }

  /** Sessions the correlator holds: open (not closed for idleness since their last record), held at all, revived. */
  sessionCounts(): { open: number; held: number; revived: number } {
    const counts = this.correlator.sessionCounts();
    for (const agent of this.agents.values()) {
      const more = agent.sessionCounts();
      counts.open += more.open;
      counts.held += more.held;
      counts.revived += more.revived;
    }
    return counts;
  }

  /** Time (from the records) of the last record read from `path`. */
  lastEventMs(path: string): number | undefined {
    return this.lastTimeMs.get(path);
  }

  /** `path` was read to its end and will not be read again (backfill): what is kept of it goes. */
  forgetFile(path: string): void {
    this.lastTimeMs.delete(path);
  }

  /**
   * Input came (call after handing it over): lines, records, or input given to a join (hook events, shell records,
   * a process scan, a give-up). The first since a delivery tells the driver.
   */
  noteInput(): void {
    if (this.inputSinceFlush) return;
    this.inputSinceFlush = true;
    this.onInput();
  }

  /**
   * Items waiting to be delivered, and acks waiting to be told (the driver delivers when there are). Cheap while no
   * input came since the last delivery, so the driver can ask at every tick of an idle sidecar.
   */
  pendingItems(): number {
    if (!this.inputSinceFlush) return 0;
    this.collect();
    const items = batchSize(this.pending) + this.pendingAcks.length + this.lineAcks.handed;
    if (items === 0) this.inputSinceFlush = false; // nothing came of it: the next input tells the driver again
    return items;
  }

  /** Deliver everything correlated so far; resolves once every sink accepted it (then runs the acks). */
  flush(): Promise<void> {
    const run = this.flushing.then(() => this.flushNow());
    this.flushing = run.catch(() => undefined);
    return run;
  }

  /**
   * Start delivering what is buffered while reading goes on (the store works off the main thread), once the
   * delivery before it is done: at most one batch in flight and one filling, which bounds memory. A failure
   * puts the batch back, and the next `flush()` retries it and tells its caller.
   */
  private async deliverInBackground(): Promise<void> {
    await this.flushing;
    this.flush().catch(() => undefined);
  }

  private async flushNow(): Promise<void> {
    const taken = this.take();
    const acks = this.pendingAcks;
    this.pendingAcks = [];
    if (batchSize(taken) > 0) {
      try {
        // In parts: what the end of input closes at once (every session's last turn) is not one batch.
        for (const part of partsOf(taken, MAX_PART_ITEMS)) await this.write(part);
      } catch (error) {
        // Keep the batch for the next flush: the lines it came from are read already (a sink that took it
        // in part drops the repeats by id).
        this.pending = concatBatches(taken, this.pending);
        this.pendingAcks = acks.concat(this.pendingAcks);
        throw error;
      }
    }
    for (const ack of acks) ack();
  }

  /**
   * Deliver a batch that came whole from outside (the agent's own OTLP, received) through the processors to the
   * sinks, between the parts of a flush; resolves once every sink accepted it. Nothing is kept when a sink
   * fails: the sender is told, and retries.
   */
  deliver(batch: TelemetryBatch): Promise<void> {
    this.joins.receive(batch);
    return this.write(batch);
  }

  /** Through the processors to every sink, after the batch being written. */
  private write(batch: TelemetryBatch): Promise<void> {
    const run = this.writing.then(async () => {
      let processed = batch;
      for (const processor of this.processors) processed = await processor.process(processed);
      for (const sink of this.sinks) await sink.write(processed);
    });
    this.writing = run.catch(() => undefined);
    return run;
  }

  private batchFull(): boolean {
    this.collect();
    return batchSize(this.pending) >= FLUSH_ITEMS || (this.inputBytes >= FLUSH_INPUT_BYTES && this.lineAcks.waiting);
  }

  /** Encode what the correlator and the joins told into the pending batch (correlator → joins → encoder). */
  private collect(): void {
    const told = this.correlator.drain();
    // Each of an agent's events is that agent's, whether or not its source still holds the session by now.
    for (const [name, agent] of this.agents) for (const event of agent.drain()) told.push('sessionId' in event ? { ...event, agent: name } : event);
    const joined = this.joins.run(told);
    this.pendingAcks.push(...joined.acks);
    this.pending = concatBatches(this.pending, encode(joined.events, (sessionId) => this.correlator.placeOf(sessionId), (sessionId) => this.agentOf(sessionId)));
  }

  /** The agent whose source holds the session (none: Claude Code's, or one no longer held). */
  private agentOf(sessionId: string): AgentName | undefined {
    for (const [name, agent] of this.agents) if (agent.holdsSession(sessionId)) return name;
    return undefined;
  }

  private take(): TelemetryBatch {
    this.skipped.addCounts(this.pending);
    this.inputBytes = 0;
    this.inputSinceFlush = false;
    this.collect();
    if (this.lineAcks.waiting) {
      // After the collect: the output of every line handed over is in the batch, or still open in the correlator.
      const open = this.correlator.oldestOpenOffsets();
      for (const agent of this.agents.values()) for (const [path, offset] of agent.oldestOpenOffsets()) open.set(path, offset);
      this.pendingAcks.push(...this.lineAcks.take((path) => open.get(path)));
    }
    const batch = this.pending;
    this.pending = emptyBatch();
    return batch;
  }
}

function* partsOf(batch: TelemetryBatch, items: number): Generator<TelemetryBatch> {
  for (let from = 0; from < batchSize(batch); from += items) {
    const spans = batch.spans.slice(from, from + items);
    const logs = batch.logs.slice(Math.max(0, from - batch.spans.length), Math.max(0, from + items - batch.spans.length));
    const metricsFrom = from - batch.spans.length - batch.logs.length;
    const metrics = batch.metrics.slice(Math.max(0, metricsFrom), Math.max(0, metricsFrom + items));
    yield { spans, logs, metrics };
  }
}
