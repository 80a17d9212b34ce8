// The tables commands print: no colour codes (cli-table3 colours headers and keys red and borders grey by
// default, whatever the output is: a pipe or a file got escape codes).
import Table from 'cli-table3';

export function plainTable(head: string[] = []): Table.Table {
  return new Table({ head, style: { head: [], border: [] } });
}
