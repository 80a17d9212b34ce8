// A read-only session on an embedded store, for SQL that comes from outside the sidecar (`ccotel query`,
// the query endpoint). It is a chdb session of its own on the same data directory, so nothing it sets
// reaches the writer's session, and ClickHouse's own mechanisms do the refusing:
// - ClickHouse's parser (chdb's statement classifier) must find exactly one read-only statement: SELECT,
//   SHOW, DESCRIBE, EXPLAIN, EXISTS. `INTO OUTFILE`, `INSERT`, `KILL`, `SET`, DDL are refused before they run.
// - the session runs with `readonly = 1`: table functions (file, url, s3, remote, executable, …) and any
//   change of a setting (SET, a SETTINGS clause, a URL setting) are refused by the engine; a setting given
//   with the value it already has passes, as on a ClickHouse server.
// - limits fixed before `readonly` locks them: execution time, result size, memory.
import { parseError } from '@clickhouse/client';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface ReaderLimits {
  maxExecutionSeconds: number;
  maxResultBytes: number;
  maxMemoryBytes: number;
}

export const DEFAULT_READER_LIMITS: ReaderLimits = { maxExecutionSeconds: 60, maxResultBytes: 256 << 20, maxMemoryBytes: 1 << 30 };

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

const READ_ONLY_CLASS = 0; // chdb_query_class: SELECT, SHOW, DESCRIBE, EXPLAIN — leaves no trace
const UNKNOWN_CLASS = 4; // did not parse
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface ChdbSession {
  connection: unknown;
  queryAsync(sql: string, options: { format: string }): Promise<{ bytes(): Uint8Array }>;
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
  const session = new Session(chdbPath);
  await session.queryAsync(
    `SET max_execution_time = ${limits.maxExecutionSeconds}, max_result_bytes = ${limits.maxResultBytes}, ` +
      `max_memory_usage = ${limits.maxMemoryBytes}, readonly = 1`,
    { format: 'TSV' },
  );
  return {
    async query({ sql, format, params = {}, settings = {} }) {
      const { statementCount, queryClass } = await classify(session.connection, sql, 'default');
      if (queryClass === UNKNOWN_CLASS) throw Object.assign(new Error('ccotel: the statement does not parse'), { code: '62', type: 'SYNTAX_ERROR' });
      if (statementCount !== 1 || queryClass !== READ_ONLY_CLASS) {
        throw new ReadOnlyError('ccotel: only one read-only statement (SELECT, SHOW, DESCRIBE, EXPLAIN, EXISTS) is allowed here');
      }
      const sets = [...Object.entries(params).map(([name, value]) => [`param_${name}`, value]), ...Object.entries(settings)].map(([name, value]) => {
        if (!NAME.test(name)) throw Object.assign(new Error(`Bad setting or parameter name: ${name}`), { code: '36', type: 'BAD_ARGUMENTS' });
        // The values are ClickHouse-escaped text already; quote them once more as a string literal.
        return `SET ${name} = '${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'; `;
      });
      const result = await session.queryAsync(sets.join('') + sql, { format }).catch((error: Error) => {
        throw parseError(error.message);
      });
      const bytes = result.bytes();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
    close: () => session.close(),
  };
}
