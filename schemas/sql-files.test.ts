import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { SQL_DIR, renderSqlFiles } from './sql-files.js';

it('schemas/sql/*.sql are current (run `npm run schemas` after changing schemas/)', () => {
  for (const [name, content] of Object.entries(renderSqlFiles())) {
    expect(readFileSync(join(SQL_DIR, name), 'utf8'), name).toBe(content);
  }
});
