// A report's output is given again from the store directory while each answer it was made of stands, and made anew
// once one does not; an output made of an answer without a tag, or from a client that gives none, is never kept.
import type { ClickHouseClient } from '@clickhouse/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { endpointClient } from '../store/endpoint-client.js';
import { KeptAnswers } from '../store/kept-answers.js';
import { startQueryEndpoint, type QueryEndpoint } from '../store/query-endpoint.js';
import { textOf } from '../../../test/helpers/kept-output.js';
import { keptOutput } from './kept-output.js';
import { selectRows } from './select.js';

describe('kept output of a report', () => {
  let storeDir: string;
  let endpoint: QueryEndpoint;
  /** The store's state as the endpoint's kept answers see it; each question is answered with the count asked so far. */
  const state = { store: 'one', asked: 0 };
  let client: ClickHouseClient;

  beforeEach(async () => {
    storeDir = mkdtempSync(join(tmpdir(), 'ccotel-kept-output-'));
    Object.assign(state, { store: 'one', asked: 0 });
    endpoint = await startQueryEndpoint({ query: async () => Buffer.from(`{"n":${++state.asked}}\n`), close: () => {} }, undefined, new KeptAnswers(() => state.store));
    client = endpointClient({ url: endpoint.url, token: endpoint.token, database: 'default' });
  });

  afterEach(async () => {
    await endpoint.close();
    rmSync(storeDir, { recursive: true, force: true });
  });

  /** The report `key` made of the answers to `questions`, and how many times it was made. */
  function reportOf(questions: string[], key: unknown[] = ['daily']) {
    const made = { times: 0 };
    const output = async (of: ClickHouseClient = client) => textOf(await keptOutput(of, storeDir, key, async (reader) => {
      made.times++;
      const answers = await Promise.all(questions.map((sql) => selectRows<{ n: number }>(reader, sql)));
      return `${answers.map((rows) => rows[0].n).join(',')}\n`;
    }));
    return { made, output };
  }

  it('gives the kept output while its answers stand, without making it or asking the engine', async () => {
    const report = reportOf(['SELECT 1', 'SELECT 2']);
    expect(await report.output()).toBe('1,2\n');
    expect(await report.output()).toBe('1,2\n');
    expect(report.made.times).toBe(1);
    expect(state.asked).toBe(2);
    // Another report (its key differs) is made of its own.
    const other = reportOf(['SELECT 1', 'SELECT 2'], ['session']);
    expect(await other.output()).toBe('1,2\n');
    expect(other.made.times).toBe(1);
  });

  it('makes it anew once an answer it was made of changed', async () => {
    const report = reportOf(['SELECT 1']);
    expect(await report.output()).toBe('1\n');
    state.store = 'two';
    expect(await report.output()).toBe('2\n');
    expect(await report.output()).toBe('2\n');
    expect(report.made.times).toBe(2);
  });

  it('keeps an output that tells something of the clock until the time it no longer holds', async () => {
    const made = { times: 0 };
    const until = Date.now() + 60_000;
    const output = (key: string, holds: number) => keptOutput(client, storeDir, [key], async (reader) => {
      made.times++;
      await selectRows(reader, 'SELECT 1');
      return { text: `${key}\n`, until: holds };
    }).then(textOf);
    expect([await output('active', until), await output('active', until)]).toEqual(['active\n', 'active\n']);
    expect([await output('none active', Infinity), await output('none active', Infinity)]).toEqual(['none active\n', 'none active\n']);
    expect(made.times).toBe(2);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(until);
      await output('active', until);
      await output('none active', Infinity);
      expect(made.times).toBe(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps no output made of an answer without a tag, nor from a client that gives none', async () => {
    const clock = reportOf(['SELECT 1', 'SELECT now()']);
    await clock.output();
    await clock.output();
    expect(clock.made.times).toBe(2);
    const untagging = { query: client.query.bind(client) } as unknown as ClickHouseClient;
    const server = reportOf(['SELECT 1']);
    await server.output(untagging);
    await server.output(untagging);
    expect(server.made.times).toBe(2);
  });
});
