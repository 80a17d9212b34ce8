// The summaries say where a session came from (DESIGN §11): its repository, last branch, every branch, ticket and
// resource attributes, also in a store made before these columns existed (the upgrade adds them).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openTempChdb, rows, runAll, type TempChdb } from '../../../schemas/chdb-testing.js';
import { otelTablesDdl } from '../../../schemas/clickhouse.js';
import { chTime } from '../../../schemas/corpus.js';
import { SUMMARY_TABLES, summaryTablesDdl } from '../../../schemas/summaries.js';
import { runRetention } from './run-retention.js';

const DAY = 86_400_000;
const NEW_COLUMNS = ['Repository', 'Branch', 'Branches', 'Ticket', 'Resource'];
let store: TempChdb;

const chat = (spanId: string, atMs: number, branch: string, ticket?: string) => ({
  Timestamp: chTime(atMs), SpanId: spanId, TraceId: `t-${spanId}`, SpanName: 'chat claude-opus-4-5', Duration: 1_000_000_000,
  ResourceAttributes: { 'host.name': 'h1', 'host.id': 'ab', 'user.name': 'alice', 'service.name': 'ccotel', team: 'payments' },
  SpanAttributes: { 'session.id': 's1', 'gen_ai.request.model': 'claude-opus-4-5', 'gen_ai.usage.output_tokens': '3',
    'ccotel.cwd': '/src/app', 'vcs.repository.url.full': 'https://h/acme/app', 'vcs.ref.head.name': branch, ...(ticket ? { 'ccotel.ticket': ticket } : {}) },
});

beforeAll(async () => {
  store = openTempChdb();
  await runAll(store.client, otelTablesDdl({ rawTtlDays: 0 }));
  // A store of the release before: summary tables without the attribution columns.
  await runAll(store.client, summaryTablesDdl());
  for (const table of Object.values(SUMMARY_TABLES)) {
    await store.client.command({ query: `ALTER TABLE ${table} ${NEW_COLUMNS.map((c) => `DROP COLUMN ${c}`).join(', ')}` });
  }
  const now = Date.now();
  const noon = Math.floor(now / DAY) * DAY - DAY / 2; // yesterday's: the last two spans share a UTC day
  const values = [chat('a', noon - DAY, 'main'), chat('b', noon, 'feature/ABC-7', 'ABC-7'), chat('c', noon + 60_000, 'main')];
  await runRetention(store.client, { rawTtlDays: 0, nowMs: now - 10_000 }); // makes the views before the rows come
  await store.client.command({ query: `INSERT INTO otel_traces FORMAT JSONEachRow\n${values.map((v) => JSON.stringify(v)).join('\n')}` });
  await runRetention(store.client, { rawTtlDays: 0, nowMs: now });
});
afterAll(async () => {
  await store?.close();
});

it('gives a session its last branch, every branch, its repository, ticket and resource attributes', async () => {
  expect(await rows(store.client, `SELECT Repository, Branch, Branches, Ticket, Resource FROM ${SUMMARY_TABLES.summaries} FINAL`)).toEqual([
    { Repository: 'https://h/acme/app', Branch: 'main', Branches: ['feature/ABC-7', 'main'], Ticket: 'ABC-7', Resource: { team: 'payments' } },
  ]);
});

it('gives each day of it the branches of that day', async () => {
  expect(await rows(store.client, `SELECT Branch, Branches, Ticket FROM ${SUMMARY_TABLES.days} FINAL ORDER BY Day`)).toEqual([
    { Branch: 'main', Branches: ['main'], Ticket: '' },
    { Branch: 'main', Branches: ['feature/ABC-7', 'main'], Ticket: 'ABC-7' },
  ]);
});
