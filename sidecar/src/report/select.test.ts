// At most two queries in flight per process, whoever asks: a page's questions overlap, and two readers of a
// running sidecar's store stay within its query endpoint's limit of four (query-endpoint.ts).
import type { ClickHouseClient } from '@clickhouse/client';
import { describe, expect, it } from 'vitest';
import { buildReport } from './overview.js';
import { REPORT_QUERIES, SHARED_QUERIES } from './queries.js';
import { selectRows } from './select.js';

/** A client answering each query with its own text, after a tick, counting how many run at once. */
function countingClient() {
  const seen = { running: 0, most: 0, queries: [] as string[] };
  const client = {
    query: async ({ query }: { query: string }) => {
      seen.running += 1;
      seen.most = Math.max(seen.most, seen.running);
      seen.queries.push(query);
      await new Promise((resolveTick) => setTimeout(resolveTick, 5));
      seen.running -= 1;
      return { json: async () => [{ query }] };
    },
  } as unknown as ClickHouseClient;
  return { client, seen };
}

describe('selectRows', () => {
  it('runs two queries at once, never more, across callers', async () => {
    const { client, seen } = countingClient();
    const answers = await Promise.all([buildReport(client), ...['SELECT 1', 'SELECT 2', 'SELECT 3'].map((sql) => selectRows(client, sql))]);
    expect(seen.most).toBe(2);
    // A shared query once, however many sections it answers.
    const ownQueries = Object.values(REPORT_QUERIES).filter((query) => 'sql' in query).length;
    expect(seen.queries).toHaveLength(ownQueries + Object.keys(SHARED_QUERIES).length + 3);
    expect(new Set(seen.queries).size).toBe(seen.queries.length);
    expect(answers.slice(1)).toEqual([[{ query: 'SELECT 1' }], [{ query: 'SELECT 2' }], [{ query: 'SELECT 3' }]]);
  });

  it("keeps the report's sections in their order, each with its own answer", async () => {
    const { client } = countingClient();
    const report = await buildReport(client);
    expect(Object.keys(report)).toEqual(Object.keys(REPORT_QUERIES));
    for (const [section, query] of Object.entries(REPORT_QUERIES)) if ('sql' in query) expect(report[section as keyof typeof report]).toEqual([{ query: query.sql }]);
  });
});
