/** `npm run schemas`: writes schemas/sql/*.sql from schemas/clickhouse.ts. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SQL_DIR, renderSqlFiles } from './sql-files.js';

mkdirSync(SQL_DIR, { recursive: true });
for (const [name, content] of Object.entries(renderSqlFiles())) {
  writeFileSync(join(SQL_DIR, name), content);
  console.log(`wrote ${join('schemas/sql', name)}`);
}
