// chdb runs every query and insert on a libuv worker thread, from the pool Node's file reads, dns lookups and
// crypto also use (4 threads unless UV_THREADPOOL_SIZE says otherwise). Four reader queries would hold all
// four: the writer's inserts, the sources' file reads and any further query would wait for one to end.

/** Queries the query endpoint runs at once, each on a chdb session of its own (reader.ts). */
export const READER_SESSIONS = 4;
/** An embedded store's insert lanes (open-store.ts). */
const WRITER_CONNECTIONS = 2;
/** Node's own use of the pool: libuv's default size. */
const NODE_WORKERS = 4;

/** Size the pool for both; before anything uses it (libuv reads the variable once, when the pool starts). */
export function sizeThreadPool(): void {
  process.env.UV_THREADPOOL_SIZE ??= String(NODE_WORKERS + WRITER_CONNECTIONS + READER_SESSIONS);
}
