// Every read of the report and the web view goes through here: rows as JSON (64-bit integers as numbers), and
// at most QUERIES_AT_ONCE of them in flight per process, so the independent questions of a page overlap on
// the store's cores, and two processes reading a running sidecar's store stay within its query endpoint's
// limit of four at once (query-endpoint.ts).
import type { ClickHouseClient } from '@clickhouse/client';
import pLimit from 'p-limit';
import { KEEP_ANSWER_HEADER } from '../store/kept-answers.js';

const QUERIES_AT_ONCE = 2;
const slot = pLimit(QUERIES_AT_ONCE);

export function selectRows<T>(client: ClickHouseClient, query: string, params: Record<string, unknown> = {}): Promise<T[]> {
  return slot(async () => {
    const result = await client.query({
      query, query_params: params, format: 'JSONEachRow',
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
      // One answer per state of the store: a running sidecar keeps it (store/kept-answers.ts); a server ignores it.
      http_headers: { [KEEP_ANSWER_HEADER]: '1' },
    });
    return result.json<T>();
  });
}
