// Store reachable and schema current: every otel_* table there. Asks a ClickHouse server or a running
// sidecar's endpoint; an embedded store nobody runs is read from its metadata files, because opening it
// would take its lock and create missing tables — the doctor only looks.
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DEFAULT_DATABASE, OTEL_TABLES } from '../../../schemas/clickhouse.js';
import { isServerUrl, QUIET_CLIENT_LOG, readLock } from '../store/open-store.js';
import { result, type Check, type CheckResult, type DoctorContext } from './check.js';

const TABLES: string[] = Object.values(OTEL_TABLES);
/** The client logs every failed request itself; the doctor reports it once, in its own words. */
const CREATE_TABLES = 'start `ccotel run` (or `ccotel backfill`) once: it creates the missing tables';

async function missingTables(client: ClickHouseClient, database: string): Promise<string[]> {
  const answer = await client.query({
    query: 'SELECT name FROM system.tables WHERE database = {database:String} AND name IN {tables:Array(String)}',
    query_params: { database, tables: TABLES },
    format: 'JSONEachRow',
  });
  const present = new Set((await answer.json<{ name: string }>()).map((row) => row.name));
  return TABLES.filter((table) => !present.has(table));
}

function schemaResult(where: string, missing: string[]): CheckResult {
  return missing.length === 0
    ? result('store', 'ok', `${where}: reachable, all ${TABLES.length} otel_* tables present`)
    : result('store', 'fail', `${where}: reachable, but missing ${missing.join(', ')}`, CREATE_TABLES);
}

async function askServer(where: string, client: ClickHouseClient, fix: string): Promise<CheckResult> {
  try {
    return schemaResult(where, await missingTables(client, DEFAULT_DATABASE));
  } catch (error) {
    return result('store', 'fail', `${where}: ${(error as Error).message}`, fix);
  } finally {
    await client.close();
  }
}

/** A client of the store as the doctor may reach it (a server, or the endpoint of a sidecar holding it); undefined for an embedded store nobody holds. */
export function storeClient(context: DoctorContext): { client: ClickHouseClient; where: string; fix: string } | undefined {
  const target = context.config.store;
  if (isServerUrl(target)) {
    const url = new URL(target);
    const client = createClient({
      url: `${url.protocol}//${url.host}`,
      username: decodeURIComponent(url.username) || 'default',
      password: decodeURIComponent(url.password),
      request_timeout: context.timeoutMs,
      log: QUIET_CLIENT_LOG,
    });
    return { client, where: `ClickHouse ${url.protocol}//${url.host}`, fix: 'check the URL, user and password in --store / CCOTEL_STORE, and that ClickHouse is up' };
  }
  const dir = resolve(target);
  const lock = readLock(dir);
  if (!lock?.endpoint) return undefined;
  const client = createClient({ url: lock.endpoint.url, username: 'ccotel', password: lock.endpoint.token, request_timeout: context.timeoutMs, log: QUIET_CLIENT_LOG });
  return { client, where: `${dir} (through ccotel ${lock.command}, pid ${lock.pid})`, fix: `ccotel ${lock.command} (pid ${lock.pid}) holds the store but does not answer: restart it` };
}

export const storeCheck: Check = async (context) => {
  const target = context.config.store;
  if (target === '') return result('store', 'ok', 'no store (OTLP only)');
  const reachable = storeClient(context);
  if (reachable) return askServer(reachable.where, reachable.client, reachable.fix);
  const dir = resolve(target);
  const lock = readLock(dir);
  const metadata = join(dir, 'chdb', 'metadata', DEFAULT_DATABASE);
  if (!existsSync(metadata)) return result('store', 'warn', `${dir}: no embedded store there yet`, CREATE_TABLES);
  const missing = TABLES.filter((table) => !existsSync(join(metadata, `${table}.sql`)));
  const user = lock ? `in use by ccotel ${lock.command} (pid ${lock.pid})` : 'no sidecar running';
  return schemaResult(`${dir} (${user}; read from its metadata)`, missing);
};
