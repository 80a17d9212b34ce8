// A running sidecar's endpoint answers a question again from memory only while the store is as it was when the
// question was asked, and only questions that ask for it; an answer of one state of the store is tagged with it, and
// asked whether it still stands (If-None-Match) the endpoint says so without the engine.
import { describe, expect, it } from 'vitest';
import { endpointClient } from './endpoint-client.js';
import { KEEP_ANSWER_HEADER, KeptAnswers, type TaggingClient } from './kept-answers.js';
import { startQueryEndpoint } from './query-endpoint.js';
import type { ReadRequest } from './reader.js';

describe('kept answers of the query endpoint', () => {
  /** An endpoint whose store is in `state.store` and answers each question with its count of questions asked so far. */
  async function endpointOf(state: { store: string; changeWhileAsked?: string }) {
    const asked: ReadRequest[] = [];
    const endpoint = await startQueryEndpoint({
      query: async (request) => {
        asked.push(request);
        if (state.changeWhileAsked) state.store = state.changeWhileAsked;
        return Buffer.from(`{"answer":${asked.length}}\n`);
      },
      close: () => {},
    }, undefined, new KeptAnswers(() => state.store));
    const client = endpointClient({ url: endpoint.url, token: endpoint.token, database: 'default' });
    const ask = async (query: string, keep = true, params: Record<string, unknown> = {}) =>
      (await (await client.query({ query, query_params: params, format: 'JSONEachRow', ...(keep ? { http_headers: { [KEEP_ANSWER_HEADER]: '1' } } : {}) })).json())[0];
    return { asked, endpoint, ask, client };
  }

  it('answers the same question again without the engine while the store is unchanged, anew once it changed', async () => {
    const state = { store: 'one' };
    const { asked, endpoint, ask } = await endpointOf(state);
    try {
      expect(await ask('SELECT 1')).toEqual({ answer: 1 });
      expect(await ask('SELECT 1')).toEqual({ answer: 1 });
      expect(await ask('SELECT 1', true, { tz: 'UTC' })).toEqual({ answer: 2 });
      expect(asked).toHaveLength(2);
      state.store = 'two';
      expect(await ask('SELECT 1')).toEqual({ answer: 3 });
      expect(await ask('SELECT 1')).toEqual({ answer: 3 });
    } finally {
      await endpoint.close();
    }
  });

  it('keeps no answer of a question that does not ask for it, that reads the clock, or while the store changed', async () => {
    const state: { store: string; changeWhileAsked?: string } = { store: 'one' };
    const { asked, endpoint, ask } = await endpointOf(state);
    try {
      await ask('SELECT 1', false);
      await ask('SELECT 1', false);
      await ask('SELECT now()');
      await ask('SELECT now()');
      expect(asked).toHaveLength(4);
      state.changeWhileAsked = 'two';
      await ask('SELECT 2');
      state.changeWhileAsked = undefined;
      expect(await ask('SELECT 2')).toEqual({ answer: 6 });
      expect(await ask('SELECT 2')).toEqual({ answer: 6 });
    } finally {
      await endpoint.close();
    }
  });

  it('tags an answer of one state of the store, and says whether it still stands without asking the engine', async () => {
    const state: { store: string; changeWhileAsked?: string } = { store: 'one' };
    const { asked, endpoint, client: endpointReader } = await endpointOf(state);
    const client: TaggingClient = endpointReader;
    const question = (query: string, keep = true) => ({ query, format: 'JSONEachRow' as const, ...(keep ? { http_headers: { [KEEP_ANSWER_HEADER]: '1' } } : {}) });
    try {
      const { tag } = await client.query(question('SELECT 1'));
      expect(tag).toMatch(/^[0-9a-f]{64}$/);
      expect((await client.query(question('SELECT 1'))).tag).toBe(tag);
      expect(await client.stillAnswers(question('SELECT 1'), tag!)).toBe(true);
      expect(await client.stillAnswers(question('SELECT 2'), tag!)).toBe(false);
      expect(asked.map((request) => request.sql.split(' ')[1])).toEqual(['1', '2']);
      state.store = 'two';
      expect(await client.stillAnswers(question('SELECT 1'), tag!)).toBe(false);
      expect(asked).toHaveLength(3);
      // No tag: a question that does not ask to be kept, one that reads the clock, one asked while the store changed.
      expect((await client.query(question('SELECT 1', false))).tag).toBeUndefined();
      expect((await client.query(question('SELECT now()'))).tag).toBeUndefined();
      state.changeWhileAsked = 'three';
      expect((await client.query(question('SELECT 3'))).tag).toBeUndefined();
    } finally {
      await endpoint.close();
    }
  });

  it('holds at most its bound, dropping the least recently used', async () => {
    const answers = new KeptAnswers(() => 'one', 10);
    const asked: string[] = [];
    const question = (sql: string) => ({ sql, format: 'JSONEachRow', params: {}, settings: {} });
    const ask = (sql: string) => answers.answer(question(sql), async () => (asked.push(sql), Buffer.from('12345')));
    for (const sql of ['a', 'b', 'a', 'c', 'a', 'b']) await ask(sql);
    expect(asked).toEqual(['a', 'b', 'c', 'b']);
  });
});
