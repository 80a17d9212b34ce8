// The tables commands print: no colour codes (cli-table3 colours headers and keys red and borders grey by
// default, whatever the output is: a pipe or a file got escape codes). cli-table3 and its width tables are loaded
// on the first table: a command asked for JSON never draws one.
import type Table from 'cli-table3';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export function plainTable(head: string[] = []): Table.Table {
  const TableOf = require('cli-table3') as typeof Table;
  return new TableOf({ head, style: { head: [], border: [] } });
}
