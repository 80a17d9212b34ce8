// A ClickHouse HTTP stand-in that also takes writes, for tests that need a "server" to point `--store
// http://…` at: the query endpoint's HTTP side in front of this process's embedded store, but with the
// writer's own client behind it instead of the read-only session the sidecar's endpoint uses.
import type { ClickHouseClient } from '@clickhouse/client';
import { buffer } from 'node:stream/consumers';
import { startQueryEndpoint, type QueryEndpoint } from '../../sidecar/src/store/query-endpoint.js';
import type { StoreReader } from '../../sidecar/src/store/reader.js';

export function writableStandIn(client: ClickHouseClient): Promise<QueryEndpoint> {
  const reader: StoreReader = {
    async query({ sql, params, settings }) {
      const result = await client.exec({ query: sql, query_params: params, clickhouse_settings: settings });
      return buffer(result.stream);
    },
    close: () => {},
  };
  return startQueryEndpoint(reader);
}
