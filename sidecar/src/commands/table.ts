// The tables commands print: no colour codes (cli-table3 colours headers and keys red and borders grey by
// default, whatever the output is: a pipe or a file got escape codes). cli-table3 and its width tables are loaded
// on the first table it draws: a command asked for JSON never draws one. A table of plain ASCII text cells (the
// report's) is drawn here, as cli-table3 draws it: cli-table3 took ~0.7 ms of CPU per row (an ANSI pattern compiled
// anew for every width it measures, its layout of spans), 4–10 s for `report session` at 1 GB of history (issue 36).
import type Table from 'cli-table3';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

type Row = Table.HorizontalTableRow | Table.VerticalTableRow | Table.CrossTableRow;

export interface PlainTable {
  push(...rows: Row[]): number;
  toString(): string;
}

/**
 * Printable ASCII, line ends, the en dash and box drawing (`└` of a breakdown's rows): each character one column
 * wide, as cli-table3 measures it.
 */
const PLAIN_TEXT = /^[\x20-\x7e\n\u2013\u2500-\u257f]*$/;

export function plainTable(head: string[] = []): PlainTable {
  const rows: Row[] = [];
  return {
    push: (...added) => rows.push(...added),
    toString: () => {
      const cells = [...(head.length > 0 ? [head] : []), ...rows];
      const columns = Array.isArray(cells[0]) ? cells[0].length : 0;
      const plain = cells.every((row) => Array.isArray(row) && row.length === columns && row.every((cell) => typeof cell === 'string' && PLAIN_TEXT.test(cell)));
      return plain && columns > 0 ? drawPlain(cells as string[][]) : drawnByCliTable(head, rows);
    },
  };
}

function drawnByCliTable(head: string[], rows: Row[]): string {
  const TableOf = require('cli-table3') as typeof Table;
  const table = new TableOf({ head, style: { head: [], border: [] } });
  table.push(...rows);
  return table.toString();
}

/** cli-table3's default drawing: one space of padding each side, a rule between rows, each cell's lines top-aligned. */
function drawPlain(rows: string[][]): string {
  const lines = rows.map((row) => row.map((cell) => cell.split('\n')));
  const widths = lines[0].map((_, column) => Math.max(...lines.map((row) => Math.max(...row[column].map((line) => line.length)))) + 2);
  const rule = (left: string, middle: string, right: string) => `${left}${widths.map((width) => '─'.repeat(width)).join(middle)}${right}`;
  const out = [rule('┌', '┬', '┐')];
  lines.forEach((row, index) => {
    if (index > 0) out.push(rule('├', '┼', '┤'));
    const height = Math.max(...row.map((cell) => cell.length));
    for (let line = 0; line < height; line++) out.push(`│${row.map((cell, column) => ` ${(cell[line] ?? '').padEnd(widths[column] - 2)} `).join('│')}│`);
  });
  out.push(rule('└', '┴', '┘'));
  return out.join('\n');
}
