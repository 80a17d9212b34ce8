// chdb runs every query and insert on a worker of libuv's thread pool, the pool Node's file reads, dns lookups
// and crypto use too. libuv sizes it from UV_THREADPOOL_SIZE (4 by default) once, when the pool starts, and
// under Node 20 that is before a CLI's first line runs (the ES module loader reads the entry file with it):
// only the environment that starts ccotel can make it larger. Four reader queries on the default pool held
// every thread: a file read waited 1.8 s, and the writer's inserts and any other query waited too.

/** Threads of the pool, as the environment that started the process set them. */
const POOL_THREADS = Math.min(Math.max(Number(process.env.UV_THREADPOOL_SIZE) || 4, 1), 1024);
/** An embedded store's insert lanes (open-store.ts), and one thread left for Node's own file reads. */
const OTHER_THREADS = 2 + 1;

/** Reader queries that may run at once, up to `cap`, leaving the writers and the file reads their threads. */
export function readerSessions(cap: number): number {
  return Math.max(1, Math.min(cap, POOL_THREADS - OTHER_THREADS));
}
