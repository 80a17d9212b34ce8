// Open the store: a ClickHouse server URL, or an embedded chdb data directory behind the same
// `@clickhouse/client` API. chdb (~200 MB) is imported only here, only for a directory store, so OTLP-only
// runs never load it. A directory holds one process at a time: the owner writes a lock file, and while
// `ccotel run` owns it, it serves queries on a loopback endpoint that other commands use instead.
import type { ClickHouseClient, ClickHouseClientConfigOptions, ClickHouseLogLevel } from '@clickhouse/client';
import { closeSync, existsSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { hasFullTextSearch, OTEL_TABLES, otelTablesDdl, renderContext } from '../../../schemas/clickhouse.js';
import { INSIGHT_TABLE } from '../../../schemas/insights.js';
import { FACTS_VERSION, FACTS_VIEWS, USAGE_TABLES } from '../../../schemas/usage.js';
import { ensureFacts } from '../retention/facts.js';
import { ensureInsightSlots } from '../retention/insight-slots.js';
import { checkTtls } from '../retention/ttl.js';
import { ensurePrivateDir } from '../secure-dir.js';
import { chdbWriter } from './chdb-writer.js';
import { isServerUrl, LOCK_FILE, readLock, type StoreLock } from './store-lock.js';

export { isServerUrl, readLock, type StoreLock };
import { ENGINE_ARGS } from './engine-args.js';

export interface Store {
  client: ClickHouseClient;
  /** What the user named: a URL or a directory. */
  target: string;
  kind: 'server' | 'embedded' | 'endpoint';
  /**
   * What inserts, each one insert at a time (the ClickHouse sink's lanes): a chdb connection runs one query at a time,
   * so an embedded store opens a second one to its engine; a server takes concurrent requests on one client.
   */
  writers: StoreWriter[];
  database: string;
  /** An embedded store this open made: the directory held none before. */
  created: boolean;
  close(): Promise<void>;
}

/** Runs the ClickHouse sink's inserts, one at a time. */
export interface StoreWriter {
  /** The store's client: the sink asks it which ids are stored and what types the columns have. */
  client: ClickHouseClient;
  /** The rows' format: the embedded engine takes binary rows; a server gets text (also what a stand-in of one reads). */
  format: 'RowBinary' | 'JSONCompactEachRow';
  /** Inserts `rows` (in `format`) into `into`: a table and its column list. */
  insertRows(into: string, rows: Uint8Array | string): Promise<void>;
}

/**
 * Tables are partitioned by day, and a backfill of a year of history puts rows of hundreds of days in one insert:
 * ClickHouse's default limit of 100 partitions per insert would refuse it, so it is lifted for the sink's inserts.
 */
export const INSERT_SETTINGS = 'max_partitions_per_insert_block = 0';

/** A server's writer: the rows inline after the statement, as one request. */
function serverWriter(client: ClickHouseClient): StoreWriter {
  return {
    client,
    format: 'JSONCompactEachRow',
    insertRows: async (into, rows) => {
      await client.command({ query: `INSERT INTO ${into} SETTINGS ${INSERT_SETTINGS} FORMAT JSONCompactEachRow\n${String(rows)}` });
    },
  };
}

export class StoreBusyError extends Error {
  constructor(target: string, lock: StoreLock) {
    super(
      `the store ${target} is in use by process ${lock.pid} (ccotel ${lock.command}); ` +
        (lock.command === 'run'
          ? 'only one `ccotel run` can own a store: stop the other one or pass a different --store'
          : 'wait for it to finish or pass a different --store'),
    );
    this.name = 'StoreBusyError';
  }
}

/** A reader named a directory that holds no store: an answer from it would be silently empty. */
export class NoStoreError extends Error {
  constructor(dir: string) {
    super(`there is no store at ${dir}: \`ccotel backfill\` or \`ccotel run\` makes one there, or pass the --store that holds your data`);
    this.name = 'NoStoreError';
  }
}

/** Replace the lock's content (e.g. to publish the query endpoint); rename keeps it atomic for readers. */
export function writeLock(dir: string, lock: StoreLock): void {
  const path = join(dir, LOCK_FILE);
  writeFileSync(`${path}.tmp`, JSON.stringify(lock), { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

/** Take the directory: exclusive create, so of two processes starting at once only one wins. */
function acquireLock(dir: string, command: string): void {
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeFileSync(fd, JSON.stringify({ pid: process.pid, command } satisfies StoreLock));
      closeSync(fd);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readLock(dir);
      if (holder) throw new StoreBusyError(dir, holder);
      rmSync(path, { force: true }); // left by a process that died
    }
  }
  throw new Error(`could not take the lock of ${dir}`);
}

function releaseLock(dir: string): void {
  const lock = readLock(dir);
  if (!lock || lock.pid === process.pid) rmSync(join(dir, LOCK_FILE), { force: true });
}

export interface OpenOptions {
  /** The command opening the store, written into the lock. */
  command: string;
  database?: string;
  rawTtlDays?: number;
  /**
   * The summaries' TTL (0: none). A writer applies it to an existing store too, before it inserts: a TTL left
   * from an older setting would drop history at insert.
   */
  summaryTtlDays?: number;
  /** Readers may use a running sidecar's endpoint; writers (backfill, run) must own the directory. */
  access: 'read' | 'write';
  /** Whether a directory holding no store gets one (default: writers yes, readers no: NoStoreError). */
  create?: boolean;
}

/**
 * The client logs a failed request with its stack before throwing; the command says it in one line instead. (Its
 * value, ClickHouseLogLevel.OFF: the client's 42 modules are loaded only when a client is made.)
 */
const OFF: typeof ClickHouseLogLevel.OFF = 127;
export const QUIET_CLIENT_LOG = { level: OFF };

async function createClient(options: ClickHouseClientConfigOptions): Promise<ClickHouseClient> {
  return (await import('@clickhouse/client')).createClient(options);
}

export async function openStore(target: string, options: OpenOptions): Promise<Store> {
  const database = options.database ?? 'default';
  if (isServerUrl(target)) {
    const url = new URL(target);
    const client = await createClient({
      url: `${url.protocol}//${url.host}`,
      username: decodeURIComponent(url.username) || 'default',
      password: decodeURIComponent(url.password),
      database,
      log: QUIET_CLIENT_LOG,
    });
    await ensureSchema(client, database, options, { fullTextSearch: await serverHasFullTextSearch(client) });
    const writer = serverWriter(client);
    return { client, target, kind: 'server', database, writers: [writer, writer], created: false, close: () => client.close() };
  }
  const dir = resolve(target);
  const created = !existsSync(join(dir, 'chdb'));
  if (created && !(options.create ?? options.access === 'write')) throw new NoStoreError(dir);
  ensurePrivateDir(dir, 'store dir'); // 0700 whatever the umask: ClickHouse creates its files with the process's umask
  const lock = readLock(dir);
  if (lock && lock.pid !== process.pid) {
    if (options.access === 'read' && lock.endpoint) {
      const client = await createClient({ url: lock.endpoint.url, username: 'ccotel', password: lock.endpoint.token, database, log: QUIET_CLIENT_LOG });
      return { client, target, kind: 'endpoint', database, writers: [serverWriter(client)], created: false, close: () => client.close() };
    }
    throw new StoreBusyError(dir, lock);
  }
  acquireLock(dir, options.command);
  const { createChdbConnection } = await import('chdb/connection');
  const { Session } = await import('chdb');
  // The first connection to a directory starts its engine: this one gives the engine its configuration, and the
  // client's connection shares that engine.
  const engine = new Session(join(dir, 'chdb'), { connectionArgs: ENGINE_ARGS });
  const client = await createClient({ connection: createChdbConnection({ path: join(dir, 'chdb') }) } as never);
  // The two insert lanes: the engine's first connection and one more.
  const secondConnection = new Session(join(dir, 'chdb'));
  const writers = [engine, secondConnection].map((session, lane) => chdbWriter(client, session, join(dir, `insert-${lane}.rowbinary`)));
  const close = async () => {
    for (const writer of writers) writer.removeFile();
    secondConnection.close();
    await client.close();
    engine.close();
    releaseLock(dir);
  };
  try {
    await ensureSchema(client, database, options);
  } catch (error) {
    await close();
    throw error;
  }
  return { client, target: dir, kind: 'embedded', database, writers, created, close };
}

/** Text indexes need ClickHouse 26.2+: on an older server the exporter (and we) use bloom filters. */
async function serverHasFullTextSearch(client: ClickHouseClient): Promise<boolean> {
  const result = await client.query({ query: 'SELECT version() AS version', format: 'JSONEachRow' });
  return hasFullTextSearch((await result.json<{ version: string }>())[0]?.version ?? '');
}

/**
 * The tables and views a store needs, made where missing. `server`: a ClickHouse server's, whose readers may have no
 * right to make tables: there a reader does not make the insight slots (`report insights` says what does).
 */
async function ensureSchema(client: ClickHouseClient, database: string, options: OpenOptions, server?: { fullTextSearch: boolean }): Promise<void> {
  const { rawTtlDays, summaryTtlDays } = options;
  const fullTextSearch = server?.fullTextSearch ?? true;
  // One cheap look first: most opens find every table there, and a reader should not pay for DDL.
  const tables = [...Object.values(OTEL_TABLES), ...Object.values(USAGE_TABLES), ...(server && options.access === 'read' ? [] : [INSIGHT_TABLE])];
  const existing = await client.query({
    query: `SELECT name, comment FROM system.tables WHERE database = {database:String} AND name IN {tables:Array(String)}`,
    query_params: { database, tables },
    format: 'JSONEachRow',
  });
  const found = new Map((await existing.json<{ name: string; comment: string }>()).map((row) => [row.name, row.comment]));
  const current = found.size === tables.length && FACTS_VIEWS.every((view) => found.get(view) === FACTS_VERSION);
  if (!current) {
    for (const statement of otelTablesDdl({ database, rawTtlDays, fullTextSearch })) await client.command({ query: statement });
    // The summaries maintained at insert (their views read the otel_* tables just made).
    await ensureFacts(client, { database, summaryTtlDays });
    // What `report insights` reads, filled from the facts a store made before it has.
    await ensureInsightSlots(client, { database, summaryTtlDays });
  }
  if (options.access === 'write' && summaryTtlDays !== undefined) {
    await checkTtls(client, renderContext({ database }), { raw: rawTtlDays ?? 0, summary: summaryTtlDays }, true, ['summary']);
  }
}
