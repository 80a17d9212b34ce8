// A reading command on an embedded store that nothing runs on (`ccotel report` with no `ccotel run`) opens the engine
// itself: ~0.6 s of CPU before its first query, several times what ccusage takes to re-read 10 MB of transcripts. So
// such a reader keeps its answers in the store directory, and a question asked again while the store is unchanged is
// answered from there without the engine. The key is the statement with its parameters and settings and the store's
// fingerprint: the modification times of its tables' directories and of their definitions, which every insert, merge,
// mutation, TTL drop or DDL changes (each adds, renames or removes a part or a file there; the engine never changes a
// part in place). The fingerprint is read before the engine opens, and only while no process holds the store. A
// statement that reads the clock is never kept. At most MAX_ANSWERS answers are kept, the least recently used
// dropped first; the directory is the store's own (0700), each file 0600.
import type { ClickHouseClient, QueryParams } from '@clickhouse/client';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const ANSWERS_DIR = 'answers';
const MAX_ANSWERS = 64;
/** SQL whose answer changes with the time it is asked. */
export const READS_CLOCK = /\b(?:now|now64|today|yesterday|currentDate|nowInBlock)\s*\(/i;

/** The modification times of every table directory and table definition of the engine's data directory, as one digest. */
export function storeFingerprint(chdbDir: string): string {
  const hash = createHash('sha256');
  // store/<prefix>/<table uuid>/<parts>: a part added or removed changes its table's directory.
  // metadata/<database>/<table>.sql: a table made, altered (rewritten by rename) or dropped changes its database's.
  for (const top of ['store', 'metadata']) {
    const root = join(chdbDir, top);
    for (const first of readdirSync(root, { withFileTypes: true })) {
      if (!first.isDirectory()) continue;
      hash.update(`${first.name}:${statSync(join(root, first.name), { bigint: true }).mtimeNs}\n`);
      for (const second of readdirSync(join(root, first.name), { withFileTypes: true })) {
        hash.update(`${first.name}/${second.name}:${statSync(join(root, first.name, second.name), { bigint: true }).mtimeNs}\n`);
      }
    }
  }
  return hash.digest('hex');
}

export class AnswerCache {
  private readonly dir: string;

  constructor(
    storeDir: string,
    private readonly fingerprint: string,
  ) {
    this.dir = join(storeDir, ANSWERS_DIR);
  }

  /**
   * The rows of `params`' statement: kept ones, or those `ask()` gives, kept when they come from the engine this
   * process opened on the store as fingerprinted (not from a sidecar that started meanwhile and may be writing).
   */
  async rows(params: QueryParams, ask: () => Promise<{ rows: unknown[]; keep: boolean }>): Promise<unknown[]> {
    const path = join(this.dir, `${this.keyOf(params)}.json`);
    if (!READS_CLOCK.test(params.query)) {
      try {
        const rows = JSON.parse(readFileSync(path, 'utf8')) as unknown[];
        const now = new Date();
        utimesSync(path, now, now); // used: the last to be dropped
        return rows;
      } catch {
        // not kept (or unreadable): asked below
      }
    }
    const { rows, keep } = await ask();
    if (keep && !READS_CLOCK.test(params.query)) {
      try {
        this.keep(path, rows);
      } catch {
        // Not kept (a full disk): the answer stands, and the question is asked anew next time (which writes its
        // temporary file over again).
      }
    }
    return rows;
  }

  private keyOf(params: QueryParams): string {
    const { query, query_params: queryParams, clickhouse_settings: settings, format } = params;
    return createHash('sha256').update(JSON.stringify([this.fingerprint, query, queryParams ?? {}, settings ?? {}, format ?? ''])).digest('hex');
  }

  private keep(path: string, rows: unknown[]): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeFileSync(`${path}.tmp`, JSON.stringify(rows), { mode: 0o600 });
    renameSync(`${path}.tmp`, path);
    const kept = readdirSync(this.dir).filter((name) => name.endsWith('.json'));
    if (kept.length <= MAX_ANSWERS) return;
    const byUse = kept.map((name) => ({ name, used: statSync(join(this.dir, name)).mtimeMs })).sort((a, b) => a.used - b.used);
    for (const { name } of byUse.slice(0, kept.length - MAX_ANSWERS)) rmSync(join(this.dir, name), { force: true });
  }
}

/**
 * A client that answers `query` (what the report's reads use, as JSON rows) from `cache`, and opens the store with
 * `open` only for a question it has no answer to.
 */
export function answeringClient(cache: AnswerCache, open: () => Promise<{ client: ClickHouseClient; kind: string }>): ClickHouseClient {
  const client: Pick<ClickHouseClient, 'query'> = {
    query: (async (params: QueryParams) => {
      const rows = await cache.rows(params, async () => {
        const store = await open();
        return { rows: (await (await store.client.query(params)).json()) as unknown[], keep: store.kind === 'embedded' };
      });
      return { json: async () => rows };
    }) as ClickHouseClient['query'],
  };
  // The report's reads call only `query` and `json()` on its result (report/select.ts); anything else is a mistake
  // that fails at once.
  return client as unknown as ClickHouseClient;
}
