// The ClickHouse version a client talks to, which decides what its SQL may use (text indexes, materialized CTEs).
import type { ClickHouseClient } from '@clickhouse/client';

const versions = new WeakMap<ClickHouseClient, Promise<string>>();

/** The server's `version()`, asked once per client (`run` refreshes the insight slots every second or so). */
export function serverVersion(client: ClickHouseClient): Promise<string> {
  let version = versions.get(client);
  if (version === undefined) {
    version = client.query({ query: 'SELECT version() AS version', format: 'JSONEachRow' }).then(async (result) => (await result.json<{ version: string }>())[0]?.version ?? '');
    versions.set(client, version);
  }
  return version;
}
