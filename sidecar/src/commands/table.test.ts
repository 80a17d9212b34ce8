// The report's tables drawn without cli-table3 are what cli-table3 draws, character for character.
import type Table from 'cli-table3';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { plainTable } from './table.js';

const CliTable = createRequire(import.meta.url)('cli-table3') as typeof Table;

function cliTable3(head: string[], rows: string[][]): string {
  const table = new CliTable({ head, style: { head: [], border: [] } });
  table.push(...rows);
  return table.toString();
}

function ours(head: string[], rows: string[][]): string {
  const table = plainTable(head);
  for (const row of rows) table.push(row);
  return table.toString();
}

describe('plain tables', () => {
  it.each([
    ['one row', ['day', 'cost'], [['2026-08-01', '$1.00']]],
    ['multi-line and empty cells, a breakdown row, an en dash', ['session', 'models', 'input', 'stated'],
      [['0048eff2\n/home/dev/work/infra tools', 'claude-opus-5-5, claude-sonnet-4-5', '1,234', ''], ['  └ claude-opus-5-5', '', '12', '–'], ['total (2 sessions)', '', '1,246', '']]],
    ['a cell of three lines beside one of one', ['a', 'b'], [['x\ny\nz', 'longer than x'], ['', '']]],
    ['no rows', ['only', 'a head'], []],
    ['no head', [], [['a', 'bb'], ['ccc', 'd']]],
  ])('%s: as cli-table3 draws it', (_, head, rows) => {
    expect(ours(head, rows)).toBe(cliTable3(head, rows));
  });

  it('leaves to cli-table3 what it measures otherwise (wide characters, colour codes)', () => {
    for (const cell of ['漢字', '\u001b[31mred\u001b[39m', '😀']) {
      expect(ours(['name', 'n'], [[cell, '1']])).toBe(cliTable3(['name', 'n'], [[cell, '1']]));
    }
  });
});
