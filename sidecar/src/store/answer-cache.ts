// A reading command on an embedded store that nothing runs on (`ccotel report` with no `ccotel run`) opens the engine
// itself: ~0.6 s of CPU before its first query, several times what ccusage takes to re-read 10 MB of transcripts. So
// such a reader keeps its answers in the store directory, and a question asked again while the store is unchanged is
// answered from there without the engine. The key is the statement with its parameters and settings and the store's
// fingerprint as the statement sees it (storeState): the modification times of the directories of the tables it reads
// and of every definition, which every insert, merge, mutation, TTL drop or DDL changes (each adds, renames or removes
// a part or a file there; the engine never changes a part in place). The fingerprint is read before the engine opens, and only while no process holds the store. A
// statement that reads the clock is never kept. At most MAX_ANSWERS answers are kept, the least recently used
// dropped first; the directory is the store's own (0700), each file 0600.
import type { ClickHouseClient, QueryParams } from '@clickhouse/client';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaggingClient } from './kept-answers.js';

export const ANSWERS_DIR = 'answers';
const MAX_ANSWERS = 64;
/** SQL whose answer changes with the time it is asked. */
export const READS_CLOCK = /\b(?:now|now64|today|yesterday|currentDate|nowInBlock)\s*\(/i;

/**
 * The store's state as a reader of a statement sees it, read once, now: a digest of the modification times of every
 * database's definitions (a table made, altered or dropped changes them), of the store's top directories, and of the
 * directory of every table the statement names (each insert, merge, mutation or TTL drop adds or removes a part
 * there). A statement that names no table, or a view (which reads tables it does not name), sees every table. So the
 * TTL merges that drop a history's expired raw rows (otel_traces, otel_logs) leave the report's answers from the
 * summaries kept: at 1 GB they went on for minutes after a backfill, and every `report daily` asked the engine anew.
 */
export function storeState(chdbDir: string): (sql: string) => string {
  const mtime = (path: string) => String(statSync(path, { bigint: true }).mtimeNs);
  const common: string[] = [];
  const tables: { name: string; state: string; view: boolean }[] = [];
  const metadata = join(chdbDir, 'metadata');
  // metadata/<database> is a link to the database's own directory under store/.
  for (const database of readdirSync(metadata).filter((name) => statSync(join(metadata, name)).isDirectory())) {
    common.push(`metadata/${database}:${mtime(join(metadata, database))}`);
    for (const file of readdirSync(join(metadata, database)).filter((name) => name.endsWith('.sql'))) {
      const definition = readFileSync(join(metadata, database, file), 'utf8');
      const uuid = /\bUUID '([0-9a-f-]{36})'/.exec(definition)?.[1];
      const directory = uuid === undefined ? undefined : join(chdbDir, 'store', uuid.slice(0, 3), uuid);
      tables.push({
        name: unescapeFileName(file.slice(0, -'.sql'.length)),
        state: `${database}/${file}:${directory !== undefined && existsSync(directory) ? mtime(directory) : '-'}`,
        view: /^ATTACH (?:MATERIALIZED )?VIEW\b/.test(definition),
      });
    }
  }
  for (const prefix of readdirSync(join(chdbDir, 'store'))) common.push(`store/${prefix}:${mtime(join(chdbDir, 'store', prefix))}`);
  return (sql) => {
    const named = tables.filter((table) => new RegExp(`(?<!\\w)${table.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?!\\w)`).test(sql));
    const seen = named.length === 0 || named.some((table) => table.view) ? tables : named;
    return createHash('sha256').update([...common, ...seen.map((table) => table.state)].join('\n')).digest('hex');
  };
}

/** A table's name from its definition's file name (ClickHouse writes other than word characters as %XX). */
function unescapeFileName(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

export class AnswerCache {
  private readonly dir: string;

  constructor(
    storeDir: string,
    /** The store's state as a reader of a statement sees it (storeState). */
    private readonly fingerprint: (sql: string) => string,
  ) {
    this.dir = join(storeDir, ANSWERS_DIR);
  }

  /**
   * The rows of `params`' statement: kept ones, or those `ask()` gives, kept when they come from the engine this
   * process opened on the store as fingerprinted (not from a sidecar that started meanwhile and may be writing); and
   * their tag when they are the answer of the store as fingerprinted (the key they are kept under).
   */
  async rows(params: QueryParams, ask: () => Promise<{ rows: unknown[]; keep: boolean }>): Promise<{ rows: unknown[]; tag?: string }> {
    const key = this.keyOf(params);
    const path = join(this.dir, `${key}.json`);
    if (!READS_CLOCK.test(params.query)) {
      try {
        const rows = JSON.parse(readFileSync(path, 'utf8')) as unknown[];
        markUsed(path);
        return { rows, tag: key };
      } catch {
        // not kept (or unreadable): asked below
      }
    }
    const { rows, keep } = await ask();
    if (!keep || READS_CLOCK.test(params.query)) return { rows };
    try {
      keepFile(this.dir, `${key}.json`, JSON.stringify(rows));
    } catch {
      // Not kept (a full disk): the answer stands, and the question is asked anew next time (which writes its
      // temporary file over again).
    }
    return { rows, tag: key };
  }

  /** Whether the rows tagged `tag` are still the answer to `params` (the store as fingerprinted). */
  stillAnswers(params: QueryParams, tag: string): boolean {
    return !READS_CLOCK.test(params.query) && this.keyOf(params) === tag;
  }

  private keyOf(params: QueryParams): string {
    const { query, query_params: queryParams, clickhouse_settings: settings, format } = params;
    return createHash('sha256').update(JSON.stringify([this.fingerprint(query), query, queryParams ?? {}, settings ?? {}, format ?? ''])).digest('hex');
  }

}

/** `path` was used now: the last to be dropped. */
export function markUsed(path: string): void {
  const now = new Date();
  utimesSync(path, now, now);
}

/**
 * Writes `data` as `name` in the answers directory `dir` (0700; the file 0600), and drops the least recently used files
 * there beyond MAX_ANSWERS.
 */
export function keepFile(dir: string, name: string, data: string | Uint8Array): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, name);
  // Of two readers keeping the same answer at once, each writes its own file and the later rename wins.
  writeFileSync(`${path}.${process.pid}.tmp`, data, { mode: 0o600 });
  renameSync(`${path}.${process.pid}.tmp`, path);
  const kept = readdirSync(dir).filter((file) => !file.endsWith('.tmp'));
  if (kept.length <= MAX_ANSWERS) return;
  const byUse = kept.map((file) => ({ file, used: statSync(join(dir, file)).mtimeMs })).sort((a, b) => a.used - b.used);
  for (const { file } of byUse.slice(0, kept.length - MAX_ANSWERS)) rmSync(join(dir, file), { force: true });
}

/**
 * A client that answers `query` (what the report's reads use, as JSON rows) from `cache`, and opens the store with
 * `open` only for a question it has no answer to.
 */
export function answeringClient(cache: AnswerCache, open: () => Promise<{ client: ClickHouseClient; kind: string }>): ClickHouseClient & TaggingClient {
  const client: TaggingClient = {
    query: async (params: QueryParams) => {
      const { rows, tag } = await cache.rows(params, async () => {
        const store = await open();
        return { rows: (await (await store.client.query(params)).json()) as unknown[], keep: store.kind === 'embedded' };
      });
      return { json: async <T>() => rows as T[], tag };
    },
    stillAnswers: async (params, tag) => cache.stillAnswers(params, tag),
  };
  // The report's reads call only `query` and `json()` on its result (report/select.ts); anything else is a mistake
  // that fails at once.
  return client as unknown as ClickHouseClient & TaggingClient;
}
