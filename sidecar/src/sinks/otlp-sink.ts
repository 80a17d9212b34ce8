// Ships telemetry to an OpenTelemetry Collector over OTLP/HTTP protobuf, without the SDK path's silent
// drops (memory-only queue, a few retries inside one timeout, drop on a full queue): see docs/OTLP.md.
//
// `write(batch)` resolves once every request of the batch is either
//   - accepted by the collector (HTTP 2xx), or
//   - durably in the on-disk queue (fsynced), from which background senders deliver it, oldest first,
// so file offsets may be committed as soon as it resolves. It rejects only when a request can be neither
// sent nor queued (the disk fails): then offsets must not be committed. While the queue holds anything,
// new batches go behind it. Up to maxConcurrentRequests requests are in flight at once (a collector
// answers only after its processors ran, so one at a time would leave it mostly idle); the order of
// arrival is therefore the write order within that window, which nothing downstream depends on.
// Requests the collector rejects for good (HTTP 400 and the like) and entries pushed out by the queue's
// bound are counted, logged, and reported as `ccotel.export.dropped` log records and
// `ccotel.sidecar.export.dropped` points, which travel with the next batch.
import { randomUUID } from 'node:crypto';
import { emptyBatch, type LogRecord, type Resource, type Sink, type TelemetryBatch } from '../model.js';
import { SIDECAR_VERSION } from '../resource.js';
import { Backoff, sleep } from '../retry.js';
import { EVENTS, METRICS, metricPoint } from '../semconv.js';
import { DiskQueue, type QueueEntry } from './disk-queue.js';
import { OtlpEncoder, type Signal } from './otlp-convert.js';
import { queuedHalves, RequestBuilder, type Request } from './otlp-requests.js';
import { sendRequest, SIGNALS, type SendOutcome, type SignalTarget } from './otlp-transport.js';

export const DEFAULT_QUEUE_MAX_BYTES = 256 * 1024 * 1024;

export interface OtlpSinkOptions {
  targets: Record<Signal, SignalTarget>;
  resource: Resource;
  queueDir: string;
  queueMaxBytes: number;
  /** Items per request; a request whose body is larger than maxRequestBytes is split further. */
  maxItemsPerRequest: number;
  maxRequestBytes: number;
  /** How long `write` retries a request itself before it queues it on disk and returns. */
  spillAfterMs: number;
  /** Requests in flight at once, for a batch being written and for the queue being emptied. */
  maxConcurrentRequests: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** A Retry-After longer than this is shortened to it. */
  maxRetryAfterMs: number;
  /** How long `close` lets the sender empty the queue before leaving the rest on disk for the next start. */
  closeTimeoutMs: number;
  log: (message: string) => void;
}

export const OTLP_SINK_DEFAULTS = {
  queueMaxBytes: DEFAULT_QUEUE_MAX_BYTES,
  maxItemsPerRequest: 1000,
  maxRequestBytes: 4 * 1024 * 1024,
  spillAfterMs: 5000,
  maxConcurrentRequests: 4,
  initialBackoffMs: 500,
  maxBackoffMs: 30_000,
  maxRetryAfterMs: 300_000,
  closeTimeoutMs: 5000,
  log: (message: string) => process.stderr.write(`ccotel: ${message}\n`),
};

export interface OtlpSinkStats {
  /** Items the collector accepted, by signal (a re-sent request counts again). */
  sent: Record<Signal, number>;
  requests: number;
  /** Failed attempts (connection refused, timeout, 5xx, …); each was retried. */
  failedAttempts: number;
  /** Items written to the disk queue because the collector did not take them in time. */
  spilled: Record<Signal, number>;
  /** Items lost for good: pushed out by the queue's bound, or rejected by the collector. */
  dropped: Record<Signal, number>;
  droppedByReason: Record<string, number>;
}

const perSignal = (): Record<Signal, number> => ({ traces: 0, logs: 0, metrics: 0 });

export class OtlpSink implements Sink {
  readonly name = 'otlp';
  readonly stats: OtlpSinkStats = { sent: perSignal(), requests: 0, failedAttempts: 0, spilled: perSignal(), dropped: perSignal(), droppedByReason: {} };
  private readonly requests: RequestBuilder;
  private readonly queue: DiskQueue;
  /** Our own drop reports, sent with the next batch. */
  private health: TelemetryBatch = emptyBatch();
  /** Writes run one after another: order on the wire is the order of `write` calls. */
  private writeChain: Promise<void> = Promise.resolve();
  private sender: Promise<void> | undefined;
  private readonly stopping = new AbortController();
  /** Set while the collector fails, so an outage is logged once, not per attempt. */
  private failingSince: number | undefined;

  constructor(private readonly options: OtlpSinkOptions) {
    const encoder = new OtlpEncoder(options.resource, SIDECAR_VERSION);
    this.requests = new RequestBuilder({ ...options, encoder, drop: (signal, items, reason, message) => this.drop(signal, items, reason, message) });
    this.queue = new DiskQueue(options.queueDir, options.queueMaxBytes);
    if (this.queue.length > 0) {
      options.log(`OTLP: ${this.queue.length} queued requests (${this.queue.items} items) from an earlier run; sending them first`);
      this.startSender();
    }
  }

  /** What waits on disk: requests, items and bytes. */
  get queued(): { requests: number; items: number; bytes: number } {
    return { requests: this.queue.length, items: this.queue.items, bytes: this.queue.bytes };
  }

  write(batch: TelemetryBatch): Promise<void> {
    const result = this.writeChain.then(() => this.deliver(batch));
    this.writeChain = result.catch(() => undefined);
    return result;
  }

  /** Lets the sender empty the queue for up to closeTimeoutMs; what is left stays on disk for the next start. */
  async close(): Promise<void> {
    await this.writeChain;
    if (this.health.logs.length > 0) await this.write(emptyBatch());
    if (this.sender) {
      const timeout = new Promise<void>((resolve) => setTimeout(resolve, this.options.closeTimeoutMs).unref());
      await Promise.race([this.sender, timeout]);
    }
    this.stopping.abort();
    await this.sender;
    for (const signal of SIGNALS) this.options.targets[signal].agent.destroy();
    this.queue.release();
    if (this.queue.length > 0) {
      this.options.log(`OTLP: ${this.queue.items} items stay queued in ${this.queue.dir}; they are sent when ccotel next starts`);
    }
  }

  private async deliver(batch: TelemetryBatch): Promise<void> {
    if (this.stopping.signal.aborted) throw new Error('OTLP sink is closed');
    const requests = this.requests.build(this.takeHealth(batch));
    if (this.queue.length > 0 || this.sender) {
      for (const request of requests) await this.enqueue(request);
      return;
    }
    await inParallel(requests, this.options.maxConcurrentRequests, (request) => this.sendOrQueue(request));
  }

  private async sendOrQueue(request: Request): Promise<void> {
    const result = await this.sendWithRetry(request, this.options.spillAfterMs);
    if (result === 'too_large') {
      for (const half of request.halves!()) await this.sendOrQueue(half);
    } else if (result === 'gave_up') {
      await this.enqueue(request);
    }
  }

  private takeHealth(batch: TelemetryBatch): TelemetryBatch {
    if (this.health.logs.length === 0) return batch;
    const health = this.health;
    this.health = emptyBatch();
    return { spans: batch.spans, logs: batch.logs.concat(health.logs), metrics: batch.metrics.concat(health.metrics) };
  }

  /**
   * Send until the collector answers for good ('answered'), answers 413 for a request that can be split
   * ('too_large': the caller sends the halves), or until `giveUpAfterMs` has passed ('gave_up': the caller
   * queues it). Backoff (retry.ts) doubles from initialBackoffMs up to maxBackoffMs with ±20% jitter; a
   * Retry-After from the collector replaces it; maxRetryAfterMs bounds both.
   */
  private async sendWithRetry(request: Request, giveUpAfterMs: number): Promise<'answered' | 'too_large' | 'gave_up'> {
    const started = Date.now();
    const { initialBackoffMs: firstMs, maxBackoffMs: maxMs, maxRetryAfterMs } = this.options;
    const backoff = new Backoff({ firstMs, maxMs, jitter: 0.2, maxRetryAfterMs });
    for (;;) {
      const outcome = await sendRequest(request.signal, this.options.targets[request.signal], request.body, this.stopping.signal);
      if (outcome.kind === 'too_large' && request.halves) return 'too_large';
      if (outcome.kind !== 'retry') {
        this.settle(request, outcome.kind === 'too_large' ? { kind: 'rejected', reason: outcome.reason } : outcome);
        return 'answered';
      }
      this.noteFailure(outcome.reason);
      const delay = backoff.next(outcome.retryAfterMs);
      if (this.stopping.signal.aborted || Date.now() + delay - started > giveUpAfterMs) return 'gave_up';
      await sleep(delay, this.stopping.signal);
    }
  }

  private settle(request: Request, outcome: Extract<SendOutcome, { kind: 'accepted' | 'rejected' }>): void {
    this.stats.requests++;
    if (this.failingSince !== undefined) {
      this.options.log(`OTLP: collector reachable again after ${Math.round((Date.now() - this.failingSince) / 1000)} s`);
      this.failingSince = undefined;
    }
    if (outcome.kind === 'rejected') {
      this.drop(request.signal, request.items, 'rejected', `the collector rejected ${request.items} ${request.signal} items: ${outcome.reason}`);
      return;
    }
    this.stats.sent[request.signal] += request.items;
    if (outcome.partial) {
      this.drop(request.signal, outcome.partial.rejected, 'partially_rejected', `the collector rejected ${outcome.partial.rejected} of ${request.items} ${request.signal} items: ${outcome.partial.message}`);
    }
  }

  private noteFailure(reason: string): void {
    this.stats.failedAttempts++;
    if (this.failingSince === undefined) {
      this.failingSince = Date.now();
      this.options.log(`OTLP: collector not reachable (${reason}); retrying, and queueing on disk in ${this.queue.dir}`);
    }
  }

  private async enqueue(request: Request): Promise<void> {
    const pushedOut = await this.queue.append(request.signal, request.items, request.body);
    this.stats.spilled[request.signal] += request.items;
    for (const entry of pushedOut) {
      this.drop(entry.signal, entry.items, 'queue_full', `the disk queue is full (${this.options.queueMaxBytes} bytes): dropped ${entry.items} queued ${entry.signal} items, the oldest`);
    }
    this.startSender();
  }

  private startSender(): void {
    this.sender ??= Promise.all(Array.from({ length: this.options.maxConcurrentRequests }, () => this.drainQueue())).then(() => {
      this.sender = undefined;
      // An entry appended while the last drainer was finishing would otherwise wait for the next write.
      if (this.queue.nextToSend() && !this.stopping.signal.aborted) this.startSender();
    });
  }

  /** One drainer: send queued requests oldest first, each until the collector answers for good or the sink closes. */
  private async drainQueue(): Promise<void> {
    for (let entry = this.queue.nextToSend(); entry && !this.stopping.signal.aborted; entry = this.queue.nextToSend()) {
      this.queue.inFlight.add(entry);
      const body = await this.readEntry(entry);
      const request: Request | undefined = body && { signal: entry.signal, items: entry.items, body, ...queuedHalves(entry.signal, entry.items, body) };
      const result = request && (await this.sendWithRetry(request, Infinity));
      if (result === 'gave_up') {
        this.queue.inFlight.delete(entry);
        return;
      }
      // Too large for the collector: back in the queue as two smaller requests (sent after what waits there).
      if (result === 'too_large') await this.requeueHalves(request!);
      await this.queue.remove(entry);
    }
  }

  private async requeueHalves(request: Request): Promise<void> {
    let halves: Request[] = [];
    try {
      halves = request.halves!();
    } catch {
      // not a request this sidecar encoded: dropped below
    }
    if (halves.length === 0) this.drop(request.signal, request.items, 'rejected', `the collector answered 413 to ${request.items} queued ${request.signal} items that cannot be split`);
    for (const half of halves) await this.enqueue(half);
  }

  private async readEntry(entry: QueueEntry): Promise<Uint8Array | undefined> {
    try {
      return await this.queue.read(entry);
    } catch (error) {
      this.drop(entry.signal, entry.items, 'unreadable', `queued request ${entry.name} could not be read: ${(error as Error).message}`);
      return undefined;
    }
  }

  /** Count, log and report items that will never reach the collector. */
  private drop(signal: Signal, items: number, reason: string, message: string): void {
    this.stats.dropped[signal] += items;
    this.stats.droppedByReason[reason] = (this.stats.droppedByReason[reason] ?? 0) + items;
    this.options.log(`OTLP: ${message}`);
    const id = randomUUID(); // a drop is an event of this process, not of an input record
    const timeMs = Date.now();
    const attributes = { signal, reason, 'ccotel.items': items };
    const log: LogRecord = { id, timeMs, eventName: EVENTS.exportDropped, severity: 'ERROR', traceId: '', spanId: '', body: message, attributes };
    const point = metricPoint(METRICS.exportDropped, { id, timeMs, value: items, attributes: { signal, reason } });
    this.health.logs.push(log);
    this.health.metrics.push(point);
  }
}

/** Run `task` over `items` with at most `limit` running at once; rejects with the first failure. */
async function inParallel<T>(items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

