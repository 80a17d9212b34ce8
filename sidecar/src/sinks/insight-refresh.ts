// The store sink of `run`, keeping what `report insights` reads current (retention/insight-slots.ts): the sessions of
// each batch stored are refreshed shortly after, together, so a burst of writes costs one refresh, not one per batch.
// A backfill refreshes every session at its end instead.
import type { ClickHouseClient } from '@clickhouse/client';
import { renderContext } from '../../../schemas/clickhouse.js';
import { TRANSCRIPT_SESSION_ATTRIBUTE } from '../../../schemas/usage.js';
import type { Sink, TelemetryBatch } from '../model.js';
import { refreshInsightSlots } from '../retention/insight-slots.js';
import { ATTRS } from '../semconv.js';

/** How long after a batch is stored its sessions are refreshed (more batches meanwhile join the same refresh). */
const INSIGHT_REFRESH_DELAY_MS = 1000;

export class InsightRefreshingSink implements Sink {
  readonly name: string;
  /** Sessions stored and not yet refreshed. */
  private readonly pending = new Set<string>();
  /** The last refresh's error, logged once while it repeats. */
  private failing?: string;
  private timer?: NodeJS.Timeout;
  private refreshing: Promise<void> = Promise.resolve();
  private lastRunAtMs = 0;

  constructor(
    private readonly store: Sink,
    private readonly client: ClickHouseClient,
    private readonly database: string,
    private readonly log: (message: string) => void = () => {},
  ) {
    this.name = store.name;
  }

  async write(batch: TelemetryBatch): Promise<void> {
    await this.store.write(batch);
    for (const span of batch.spans) this.note(span.attributes[ATTRS.sessionId] || span.attributes[TRANSCRIPT_SESSION_ATTRIBUTE]);
    for (const log of batch.logs) this.note(log.attributes[ATTRS.sessionId]);
    if (this.pending.size > 0 && this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.refresh();
      }, INSIGHT_REFRESH_DELAY_MS);
      this.timer.unref();
    }
  }

  /** Refreshes what is pending now (after a refresh still running). */
  refresh(): Promise<void> {
    this.refreshing = this.refreshing.then(async () => {
      const sessions = [...this.pending];
      if (sessions.length === 0) return;
      this.pending.clear();
      // A version stamp that grows from run to run, even within one millisecond.
      this.lastRunAtMs = Math.max(Date.now(), this.lastRunAtMs + 1);
      try {
        await refreshInsightSlots(this.client, renderContext({ database: this.database }), this.lastRunAtMs, sessions);
        this.failing = undefined;
      } catch (error) {
        // Kept for the next refresh; `ccotel retention` refreshes every session too.
        for (const session of sessions) this.pending.add(session);
        const message = (error as Error).message;
        if (message !== this.failing) this.log(`insights: could not refresh ${sessions.length} sessions: ${message}`);
        this.failing = message;
      }
    });
    return this.refreshing;
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.refresh();
    await this.store.close();
  }

  private note(session: unknown): void {
    if (typeof session === 'string' && session !== '') this.pending.add(session);
  }
}
