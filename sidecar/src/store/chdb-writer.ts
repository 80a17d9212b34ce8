// Inserts into the embedded engine with the rows as RowBinary bytes. chdb runs a statement's inline data only up to
// the first empty line ("\n\n", which binary rows hold wherever a length of 10 precedes a newline or a text has a blank
// line), and its public raw insert takes text formats only; so each writer writes its rows to a file of its own in
// the store's directory (the same file again for each insert: no new file per insert on this VM's slow inode
// allocation) and the engine reads it with `FROM INFILE`.
import { rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { sqlString } from '../../../schemas/clickhouse.js';
import { INSERT_SETTINGS, type StoreWriter } from './open-store.js';
import type { ClickHouseClient } from '@clickhouse/client';

interface ChdbSession {
  queryAsync(query: string): Promise<unknown>;
}

/** A writer on one chdb connection (a Session of the store's directory), with its rows file. */
export function chdbWriter(client: ClickHouseClient, session: ChdbSession, rowsFile: string): StoreWriter & { removeFile(): void } {
  return {
    client,
    format: 'RowBinary',
    insertRows: async (into, rows) => {
      await writeFile(rowsFile, rows, { mode: 0o600 });
      await session.queryAsync(`INSERT INTO ${into} FROM INFILE ${sqlString(rowsFile)} SETTINGS ${INSERT_SETTINGS} FORMAT RowBinary`);
    },
    removeFile: () => rmSync(rowsFile, { force: true }),
  };
}
