// A new user's whole history, with default settings: generated corpora dated 300, 90, 20 and 1 days back, one
// backfill. Every session, token and cost of all four periods is in the report (from the summaries); detail
// rows exist for the last 30 days only; backfill says so; a second backfill and a retention run change nothing.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { backfill, describePlacement } from '../../sidecar/src/commands/backfill.js';
import { buildReport } from '../../sidecar/src/report/overview.js';
import { runRetention } from '../../sidecar/src/retention/run-retention.js';
import { MANAGED_TABLES } from '../../sidecar/src/retention/ttl.js';
import { usageReport } from '../../sidecar/src/report/usage.js';
import { openStore } from '../../sidecar/src/store/open-store.js';
import { generateCorpus } from '../generator/corpus.js';
import type { Expected } from '../generator/expected.js';
import { sessionListCost } from './list-prices.js';

const DAY = 86_400_000;
const AGES = [300, 90, 20, 1];
const storeDir = mkdtempSync(join(tmpdir(), 'ccotel-history-'));
let corpora: { age: number; expected: Expected }[];
let firstOutput: string[];
let secondOutput: string[];

async function snapshot() {
  const store = await openStore(storeDir, { command: 'test', access: 'read' });
  try {
    // Rows past the TTL can sit in a part until ClickHouse merges it (a second backfill inserts them again: their first
    // copies are gone, so they are no repeats); a merge now applies the TTL as it would, to every raw table retention
    // checks, else whether retention finds them depends on when the background merges ran.
    for (const { name } of MANAGED_TABLES.filter((table) => table.kind === 'raw')) await store.client.command({ query: `OPTIMIZE TABLE ${name} FINAL` });
    const [raw] = await (await store.client.query({
      query: `SELECT uniqExact(SpanAttributes['session.id']) AS sessions, toUnixTimestamp64Milli(min(Timestamp)) AS oldest FROM otel_traces
              WHERE SpanAttributes['session.id'] != ''`,
      format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
    })).json<{ sessions: number; oldest: number }>();
    return {
      sessions: await usageReport(store.client, 'session', { timezone: 'UTC' }),
      daily: await usageReport(store.client, 'daily', { timezone: 'UTC' }),
      overview: await buildReport(store.client),
      raw,
    };
  } finally {
    await store.close();
  }
}

let first: Awaited<ReturnType<typeof snapshot>>;

beforeAll(async () => {
  const now = Date.now();
  corpora = [];
  for (const [i, age] of AGES.entries()) {
    const root = mkdtempSync(join(tmpdir(), `ccotel-history-${age}d-`));
    corpora.push({ age, expected: await generateCorpus({ seed: 100 + i, root, startMs: now - age * DAY, hostLayout: 'single-root' }) });
  }
  process.env.HOME = mkdtempSync(join(tmpdir(), 'ccotel-home-'));
  process.env.CCOTEL_STATE_DIR = mkdtempSync(join(tmpdir(), 'ccotel-state-'));
  process.env.CLAUDE_CONFIG_DIR = corpora.flatMap((c) => c.expected.configDirs).join(',');
  delete process.env.CCOTEL_RAW_TTL_DAYS; // default settings
  firstOutput = describePlacement(await backfill({ store: storeDir }));
  first = await snapshot();
}, 600_000);


it('reports every session, token and cost of all four periods', () => {
  const all = corpora.flatMap((c) => Object.keys(c.expected.perSessionTokens));
  expect(first.sessions.rows.map((r) => r.period).sort()).toEqual([...all].sort());
  for (const { expected } of corpora) {
    for (const [session, tokens] of Object.entries(expected.perSessionTokens)) {
      const row = first.sessions.rows.find((r) => r.period === session)!;
      expect({ input: row.input_tokens, output: row.output_tokens, cacheRead: row.cache_read_tokens, cacheCreation: row.cache_creation_tokens }, session).toEqual(tokens);
      expect(row.cost_usd, session).toBeCloseTo(sessionListCost(expected, session), 6);
    }
  }
  const days = new Set(first.daily.rows.map((r) => r.period));
  for (const { age } of corpora) expect(days.has(new Date(Date.now() - age * DAY).toISOString().slice(0, 10)), `${age} days back`).toBe(true);
  expect(first.daily.totals.cost_usd).toBeCloseTo(first.sessions.totals.cost_usd, 6);
  // The default report's overview and cost cover all history too.
  const overviewCost = first.overview.cost.reduce((sum, row) => sum + Number(row.cost_usd), 0);
  expect(overviewCost).toBeCloseTo(first.sessions.totals.cost_usd, 4);
  expect(first.overview.overview[0]).toMatchObject({
    sessions: all.length,
    turns: corpora.reduce((n, c) => n + c.expected.turns, 0),
    tool_calls: corpora.reduce((n, c) => n + c.expected.toolCalls, 0),
    api_responses: corpora.reduce((n, c) => n + c.expected.chatSpans, 0),
  });
});

it('keeps detail rows for the last 30 days only, and says so', () => {
  const recent = corpora.filter((c) => c.age < 30).reduce((n, c) => n + c.expected.sessions, 0);
  const old = corpora.filter((c) => c.age >= 30).reduce((n, c) => n + c.expected.sessions, 0);
  expect(first.raw.sessions).toBe(recent);
  expect(first.raw.oldest).toBeGreaterThan(Date.now() - 30 * DAY);
  expect(firstOutput[0]).toBe(`created a new store at ${storeDir}`);
  expect(firstOutput[1]).toMatch(/^stored [1-9]\d* spans, .* of the last 30 days in the raw tables/);
  expect(firstOutput[2]).toBe(`sessions: ${recent + old} new (${recent + old} in the store): detail for the last 30 days (${recent} of them), summaries for all`);
});

it('changes nothing on a second backfill, nor on a retention run afterwards', async () => {
  secondOutput = describePlacement(await backfill({ store: storeDir }));
  expect(secondOutput[0]).toMatch(/^stored 0 spans, 0 log records, 0 metric points/);
  expect(secondOutput[1]).toMatch(/^sessions: 0 new /);
  expect(await snapshot()).toEqual(first);

  const store = await openStore(storeDir, { command: 'test', access: 'write' });
  try {
    const report = await runRetention(store.client);
    expect(report.summaries).toEqual({ factsRepaired: 0, sessionDays: 0, sessions: 0, insightSlots: 0 });
    expect(report.ttl.every((t) => t.status === 'ok')).toBe(true);
    expect(report.expired.every((e) => e.rows === 0)).toBe(true);
  } finally {
    await store.close();
  }
  expect(await snapshot()).toEqual(first);
}, 600_000);
