import { emptyBatch, type Sink, type TelemetryBatch } from '../../sidecar/src/model.js';

/** A sink for tests: keeps everything it accepted; while `failing`, refuses every batch (a store that is down). */
export class MemorySink implements Sink {
  readonly name = 'memory';
  readonly received: TelemetryBatch = emptyBatch();
  failing = false;

  async write(batch: TelemetryBatch): Promise<void> {
    if (this.failing) throw new Error('sink down');
    this.received.spans.push(...batch.spans);
    this.received.logs.push(...batch.logs);
    this.received.metrics.push(...batch.metrics);
  }

  async close(): Promise<void> {}
}
