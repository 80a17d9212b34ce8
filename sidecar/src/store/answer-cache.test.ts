import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keptOutput } from '../report/kept-output.js';
import { textOf } from '../../../test/helpers/kept-output.js';
import { selectRows } from '../report/select.js';
import { ANSWERS_DIR } from './answer-cache.js';
import { openStoreForAnswers } from './open-for-answers.js';
import { openStore } from './open-store.js';

const COUNT = 'SELECT count() AS n FROM default.answer_t';

/** `sql`'s rows from a reader opened for answers, and whether it opened the engine (it took the store's lock to). */
async function ask(dir: string, sql: string): Promise<{ rows: unknown[]; openedEngine: boolean }> {
  const reader = await openStoreForAnswers(dir, { command: 'report', access: 'read' });
  try {
    const rows = await (await reader.client.query({ query: sql, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 } })).json();
    const openedEngine = readdirSync(dir).includes('ccotel.lock');
    return { rows, openedEngine };
  } finally {
    await reader.close();
  }
}

async function insert(dir: string, values: number[], table = 'answer_t'): Promise<void> {
  const writer = await openStore(dir, { command: 'backfill', access: 'write' });
  try {
    await writer.client.command({ query: `CREATE TABLE IF NOT EXISTS default.${table} (x UInt32) ENGINE = MergeTree ORDER BY x` });
    if (values.length > 0) await writer.client.insert({ table: `default.${table}`, values: values.map((x) => ({ x })), format: 'JSONEachRow' });
  } finally {
    await writer.close();
  }
}

describe('answers kept by a reader of an embedded store nothing runs on', () => {
  let home: string;
  let dir: string;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'ccotel-answers-'));
    dir = join(home, 'store');
    await insert(dir, [1, 2]);
  });

  afterAll(() => rmSync(home, { recursive: true, force: true }));

  it('answers a question asked again from the kept answer, without the engine, while the store is unchanged', async () => {
    expect(await ask(dir, COUNT)).toEqual({ rows: [{ n: 2 }], openedEngine: true });
    expect(await ask(dir, COUNT)).toEqual({ rows: [{ n: 2 }], openedEngine: false });
    const kept = readdirSync(join(dir, ANSWERS_DIR));
    expect(kept).toHaveLength(1);
    expect(statSync(join(dir, ANSWERS_DIR, kept[0])).mode & 0o777).toBe(0o600);
  });

  it('asks the engine again once a writer changed the store', async () => {
    await insert(dir, [3]);
    expect(await ask(dir, COUNT)).toEqual({ rows: [{ n: 3 }], openedEngine: true });
    expect(await ask(dir, COUNT)).toEqual({ rows: [{ n: 3 }], openedEngine: false });
  });

  it('never keeps the answer of a statement that reads the clock', async () => {
    const clock = 'SELECT toUnixTimestamp64Micro(now64(6)) AS t';
    const first = await ask(dir, clock);
    const second = await ask(dir, clock);
    expect([first.openedEngine, second.openedEngine]).toEqual([true, true]);
    expect(second.rows).not.toEqual(first.rows);
  });

  it('still answers when its answer cannot be kept', async () => {
    // Where the answers go is taken by a file: keeping fails (as on a full disk), the answer does not.
    rmSync(join(dir, ANSWERS_DIR), { recursive: true, force: true });
    writeFileSync(join(dir, ANSWERS_DIR), 'not a directory');
    try {
      expect(await ask(dir, COUNT)).toEqual({ rows: [{ n: 3 }], openedEngine: true });
      expect(await ask(dir, COUNT)).toEqual({ rows: [{ n: 3 }], openedEngine: true });
    } finally {
      rmSync(join(dir, ANSWERS_DIR), { force: true });
    }
  });

  it('gives a report\'s kept output while the store is unchanged, without the engine, and makes it anew after an insert', async () => {
    const made: number[] = [];
    const output = async () => {
      const reader = await openStoreForAnswers(dir, { command: 'report', access: 'read' });
      try {
        const text = textOf(await keptOutput(reader.client, dir, ['count'], async (client) => {
          const [{ n }] = await selectRows<{ n: number }>(client, COUNT);
          made.push(n);
          return `${n}\n`;
        }));
        return { text, openedEngine: readdirSync(dir).includes('ccotel.lock') };
      } finally {
        await reader.close();
      }
    };
    expect(await output()).toEqual({ text: '3\n', openedEngine: true });
    rmSync(join(dir, ANSWERS_DIR, readdirSync(join(dir, ANSWERS_DIR)).find((name) => name.endsWith('.json'))!));
    // Given from the kept output alone: the rows it was made of are no longer kept, and the engine is not opened.
    expect(await output()).toEqual({ text: '3\n', openedEngine: false });
    await insert(dir, [4]);
    expect(await output()).toEqual({ text: '4\n', openedEngine: true });
    expect(made).toEqual([3, 4]);
  });
});

describe('answers kept while only tables a question does not read change', () => {
  let home: string;
  let dir: string;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'ccotel-answers-tables-'));
    dir = join(home, 'store');
    await insert(dir, [1, 2]);
    await insert(dir, [], 'other_t');
  });

  afterAll(() => rmSync(home, { recursive: true, force: true }));

  // As the TTL merges of the raw tables leave the report's answers from the summaries kept.
  it('answers from the kept answer after an insert into another table, and asks anew what reads that table', async () => {
    expect(await ask(dir, COUNT)).toEqual({ rows: [{ n: 2 }], openedEngine: true });
    await insert(dir, [7], 'other_t');
    expect(await ask(dir, COUNT)).toEqual({ rows: [{ n: 2 }], openedEngine: false });
    expect(await ask(dir, 'SELECT count() AS n FROM default.other_t')).toEqual({ rows: [{ n: 1 }], openedEngine: true });
    // A statement that names no table sees them all.
    expect((await ask(dir, 'SELECT 1 AS n')).openedEngine).toBe(true);
    await insert(dir, [8], 'other_t');
    expect((await ask(dir, 'SELECT 1 AS n')).openedEngine).toBe(true);
  });
});
