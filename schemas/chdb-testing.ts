/**
 * Test helper: a real ClickHouse engine (chdb) in a temporary data directory.
 * chdb allows one data directory per process, so a test file opens one store and shares it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';

export interface TempChdb {
  client: ClickHouseClient;
  dir: string;
  close(): Promise<void>;
}

export function openTempChdb(prefix = 'ccotel-chdb-'): TempChdb {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  // `as never`: chdb types its connection against its own copy of @clickhouse/client-common.
  const client = createClient({ connection: createChdbConnection({ path: dir }) } as never);
  return {
    client,
    dir,
    async close() {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function runAll(client: ClickHouseClient, statements: string[]): Promise<void> {
  for (const query of statements) await client.command({ query });
}

export async function rows<T = Record<string, unknown>>(client: ClickHouseClient, query: string): Promise<T[]> {
  const result = await client.query({ query, format: 'JSONEachRow' });
  return result.json<T>();
}
