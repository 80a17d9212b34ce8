// A time range of the web view read through a running sidecar's query endpoint, as `ccotel ui` does while
// `ccotel run` owns the store: the endpoint's read-only session refuses any setting, so the range must be in
// the SQL itself. (A test file of its own: one chdb data directory per process.)
import { createClient } from '@clickhouse/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildReport } from '../report/overview.js';
import { openStore, type Store } from '../store/open-store.js';
import { serveStore, type QueryEndpoint } from '../store/query-endpoint.js';
import { withRange } from './data.js';

const DAY = 86_400_000;
const START = Date.UTC(2026, 7, 1);

describe('withRange through the read-only query endpoint', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ccotel-range-endpoint-'));
  let store: Store;
  let endpoint: QueryEndpoint;

  beforeAll(async () => {
    store = await openStore(join(dir, 'store'), { command: 'run', access: 'write', rawTtlDays: 0 });
    endpoint = await serveStore(store, 'run');
    // One turn per day for five days, each its own session.
    const values = [0, 1, 2, 3, 4].map(
      (day) => `(fromUnixTimestamp64Milli(${START + day * DAY + 3_600_000}), 'trace${day}', 'span${day}', 'invoke_agent claude-code', map('session.id', 'session${day}', 'ccotel.turn.outcome', 'completed'))`,
    );
    await store.client.command({ query: `INSERT INTO otel_traces (Timestamp, TraceId, SpanId, SpanName, SpanAttributes) VALUES ${values.join(', ')}` });
  });

  afterAll(async () => {
    await endpoint?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers the report's queries for the range only", async () => {
    const client = createClient({ url: endpoint.url, username: 'ccotel', password: endpoint.token });
    try {
      const report = await buildReport(withRange(client, { fromMs: START + DAY, toMs: START + 3 * DAY }));
      expect(report.overview[0]).toMatchObject({ sessions: 2, turns: 2 });
      expect(report.turns).toEqual([{ outcome: 'completed', turns: 2 }]);
    } finally {
      await client.close();
    }
  });
});
