// A read-only session on an embedded store, for SQL that comes from outside the sidecar (`ccotel query`,
// the query endpoint). Its chdb sessions are its own on the same data directory, so nothing they set
// reaches the writer's session, and ClickHouse's own mechanisms do most of the refusing:
// - the SQL (with its parameters) is at most `maxQueryBytes` long, checked before any parser sees it: the
//   statement classifier below parses without ClickHouse's `max_query_size` (16 MiB of `1+1+…` took 1.5 GB).
// - ClickHouse's parser (chdb's statement classifier) must find exactly one read-only statement: SELECT,
//   SHOW, DESCRIBE, EXPLAIN, EXISTS. `INTO OUTFILE`, `INSERT`, `KILL`, `SET`, DDL are refused before they run.
// - no function reaches outside the store: the statement's AST (`EXPLAIN AST`, parameters substituted) may
//   call none of the families in OUTSIDE, scalar or table function, nor read `system.models`, nor use
//   APPLY (its function is not in the AST's text). chdb runs as `clickhouse local`, which checks no path
//   against `user_files_path`, and `readonly` refuses table functions only when they are read, not in
//   DESCRIBE (which infers a schema from the file or URL).
// - the sessions run with `readonly = 1`: table functions in a SELECT (file, url, s3, remote, executable, …)
//   and any change of a setting (SET, a SETTINGS clause, a URL setting) are refused by the engine; a setting
//   given with the value it already has passes, as on a ClickHouse server.
// - limits fixed before `readonly` locks them: execution time, result size, memory, query size and AST
//   depth and size.
// - queries run at once on sessions of their own (a chdb connection runs one query at a time), as many as
//   libuv's thread pool leaves threads for (threadpool.ts); the others wait for a session. A query is
//   answered by its time limit, counted from its arrival, whatever the engine does (one function call on
//   one row is not interrupted); its session is taken out of use until the engine lets it go.
import { parseError } from '@clickhouse/client';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { readerSessions } from './threadpool.js';

export interface ReaderLimits {
  maxExecutionSeconds: number;
  maxResultBytes: number;
  /** A query's memory. */
  maxMemoryBytes: number;
  /** The SQL with its parameters (ClickHouse's `max_query_size`). */
  maxQueryBytes: number;
  /** Queries at once: the endpoint admits no more; as many run as have a session (threadpool.ts), the rest wait their turn. */
  maxConcurrentQueries: number;
}

export const DEFAULT_READER_LIMITS: ReaderLimits = {
  maxExecutionSeconds: 60,
  maxResultBytes: 256 << 20,
  maxMemoryBytes: 1 << 30,
  maxQueryBytes: 256 << 10,
  maxConcurrentQueries: 4,
};

/** How long past its time limit a query may run before it is answered with a timeout: the engine's own error comes first. */
const DEADLINE_GRACE_MS = 500;

export interface ReadRequest {
  sql: string;
  /** Output format when the SQL names none. */
  format: string;
  /** `{name:Type}` parameters, as text in ClickHouse's escaped format (the HTTP interface's `param_*`). */
  params?: Record<string, string>;
  /** Settings the caller asks for; the read-only session refuses any that would change a value. */
  settings?: Record<string, string>;
}

export interface StoreReader {
  query(request: ReadRequest): Promise<Buffer>;
  close(): void;
}

/** An error in ClickHouse's shape (code and type), as the endpoint sends it and the client parses it. */
export class ReadOnlyError extends Error {
  readonly code = '164';
  readonly type = 'READONLY';
}

/**
 * Functions, scalar or table, that reach outside the store, by name (as it starts, so a family's variants
 * such as s3Cluster, dictGetOrNull or icebergLocal are in): files, URLs and remote stores, processes,
 * dictionaries, models, an insert's input. `merge` and `loop` read tables chosen by pattern (system.models too).
 */
const OUTSIDE = new RegExp(
  '^(?:' +
    [
      'file', 'showcertificate',
      'url$', 'urlcluster', 's3', 'gcs', 'cosn', 'oss', 'hdfs', 'azure', 'iceberg', 'deltalake', 'hudi', 'paimon', 'remote', 'cluster',
      'mysql', 'postgresql', 'mongodb', 'redis', 'sqlite', 'odbc', 'jdbc', 'ytsaurus', 'arrow', 'prometheus',
      'executable', 'eval$',
      'dict',
      'catboost', 'modelevaluate', 'naivebayes',
      'input$', 'merge$', 'loop$',
    ].join('|') +
    ')',
  'i',
);
/** Reading it starts clickhouse-library-bridge, a process of its own, and runs past any time limit. */
const MODELS_TABLE = /^\s*TableIdentifier system\.models\b/m;
/** `* APPLY(f)`, `APPLY(x -> f(x))`: the AST's text does not show the function called. */
const APPLY = /^\s*ColumnsApplyTransformer\b/m;
const FUNCTION_CALL = /^\s*Function (\S+)/gm;

const READ_ONLY_CLASS = 0; // chdb_query_class: SELECT, SHOW, DESCRIBE, EXPLAIN — leaves no trace
const UNKNOWN_CLASS = 4; // did not parse
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface ChdbSession {
  connection: unknown;
  queryAsync(sql: string, options: { format: string }): Promise<{ bytes(): Uint8Array; text(): string }>;
  close(): void;
}
interface Classification {
  statementCount: number;
  queryClass: number;
}
type Classify = (connection: unknown, sql: string, database: string) => Promise<Classification>;

/** chdb's binding of ClickHouse's statement classifier; pinned chdb 3.4.0 ships it in its native addon. */
function loadClassifier(): Classify {
  const require = createRequire(import.meta.url);
  const loader = require(join(dirname(require.resolve('chdb')), 'dist', 'loader.js')) as { loadNative(): { DurableClassifyAsync?: Classify } };
  const classify = loader.loadNative().DurableClassifyAsync;
  if (typeof classify !== 'function') throw new Error('this chdb build has no statement classifier: queries on the embedded store are refused');
  return classify;
}

export async function openReader(chdbPath: string, limits: ReaderLimits = DEFAULT_READER_LIMITS): Promise<StoreReader> {
  const { Session } = (await import('chdb')) as unknown as { Session: new (path: string) => ChdbSession };
  const classify = loadClassifier();
  const sessions: ChdbSession[] = [];
  for (let i = 0; i < readerSessions(limits.maxConcurrentQueries); i++) {
    const session = new Session(chdbPath);
    await session.queryAsync(
      `SET max_execution_time = ${limits.maxExecutionSeconds}, max_result_bytes = ${limits.maxResultBytes}, ` +
        `max_memory_usage = ${limits.maxMemoryBytes}, max_query_size = ${limits.maxQueryBytes}, ` +
        'max_parser_depth = 1000, max_ast_depth = 1000, max_ast_elements = 50000, readonly = 1',
      { format: 'TSV' },
    );
    sessions.push(session);
  }
  const idle = [...sessions];
  const waiting: ((session: ChdbSession) => void)[] = [];
  const acquire = () => new Promise<ChdbSession>((resolveSession) => {
    const session = idle.pop();
    if (session) resolveSession(session);
    else waiting.push(resolveSession);
  });
  const release = (session: ChdbSession) => {
    const next = waiting.shift();
    if (next) next(session);
    else idle.push(session);
  };

  async function run(session: ChdbSession, sql: string, sets: string, format: string): Promise<Buffer> {
    const { statementCount, queryClass } = await classify(session.connection, sql, 'default');
    if (queryClass === UNKNOWN_CLASS) throw Object.assign(new Error('ccotel: the statement does not parse'), { code: '62', type: 'SYNTAX_ERROR' });
    if (statementCount !== 1 || queryClass !== READ_ONLY_CLASS) {
      throw new ReadOnlyError('ccotel: only one read-only statement (SELECT, SHOW, DESCRIBE, EXPLAIN, EXISTS) is allowed here');
    }
    const query = (text: string, queryFormat: string) =>
      session.queryAsync(text, { format: queryFormat }).catch((error: Error) => {
        throw parseError(error.message);
      });
    // A FORMAT clause stays with the explained query: the AST comes as text whatever the SQL asks for.
    const ast = (await query(`${sets}EXPLAIN AST ${sql}`, 'TSVRaw')).text();
    for (const [, name] of ast.matchAll(FUNCTION_CALL)) {
      if (OUTSIDE.test(name)) throw new ReadOnlyError(`ccotel: ${name}() reaches outside the store: refused on this read-only session`);
    }
    if (MODELS_TABLE.test(ast)) throw new ReadOnlyError('ccotel: system.models starts a process outside the store: refused on this read-only session');
    if (APPLY.test(ast)) throw new ReadOnlyError('ccotel: APPLY hides its function, which might reach outside the store: refused on this read-only session');
    const bytes = (await query(sets + sql, format)).bytes();
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  return {
    async query({ sql, format, params = {}, settings = {} }) {
      const sets = [...Object.entries(params).map(([name, value]) => [`param_${name}`, value]), ...Object.entries(settings)].map(([name, value]) => {
        if (!NAME.test(name)) throw Object.assign(new Error(`Bad setting or parameter name: ${name}`), { code: '36', type: 'BAD_ARGUMENTS' });
        // The values are ClickHouse-escaped text already; quote them once more as a string literal.
        return `SET ${name} = '${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'; `;
      }).join('');
      if (Buffer.byteLength(sets) + Buffer.byteLength(sql) > limits.maxQueryBytes) {
        throw Object.assign(new Error(`ccotel: the query with its parameters is over ${limits.maxQueryBytes} bytes (max_query_size)`), { code: '62', type: 'SYNTAX_ERROR' });
      }
      let expired = false;
      const work = acquire().then((session) => {
        if (expired) {
          release(session);
          throw new Error('expired while waiting for a session');
        }
        // Back in use only once the engine has let go of it, which may be after its client was answered.
        return run(session, sql, sets, format).finally(() => release(session));
      });
      // The time limit counts from here: a query waiting for a session waits within it.
      return withDeadline(work, limits.maxExecutionSeconds * 1000 + DEADLINE_GRACE_MS, () => (expired = true));
    },
    close: () => {
      for (const session of sessions) session.close();
    },
  };
}

/** `work`, or a timeout error once `ms` have passed (then `onExpiry` is called). */
function withDeadline<T>(work: Promise<T>, ms: number, onExpiry: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onExpiry();
      reject(Object.assign(new Error(`ccotel: the query ran past its time limit (${ms} ms)`), { code: '159', type: 'TIMEOUT_EXCEEDED' }));
    }, ms).unref(); // a process closing down does not wait for it
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
