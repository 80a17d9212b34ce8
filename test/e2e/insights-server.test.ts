// `report insights` against a ClickHouse server made before the insight slots: a reader, who may have no right to make
// tables, does not make them (its other reports go on as before) and is told what does; `ccotel retention
// --insights-only` makes and fills them. The server is the test front over the embedded engine
// (test/helpers/clickhouse-front-process.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@clickhouse/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { INSIGHT_TABLE } from '../../schemas/insights.js';
import { writeInsightSessions } from '../generator/insights.js';
import { ClickHouseFrontProcess } from '../helpers/clickhouse-front-process.js';
import { assertBuilt, cliEnv } from '../reliability/cli.js';
import { storeCli } from './store-cli.js';

const home = mkdtempSync(join(tmpdir(), 'ccotel-insights-server-'));
const front = new ClickHouseFrontProcess(join(home, 'clickhouse'));
const env = cliEnv(home, { TZ: 'UTC' });
let before: string;

const slotsTables = async () => {
  const client = createClient({ url: front.url });
  try {
    return (await (await client.query({ query: `SELECT name FROM system.tables WHERE name = '${INSIGHT_TABLE}'`, format: 'JSONEachRow' })).json()).length;
  } finally {
    await client.close();
  }
};

beforeAll(async () => {
  assertBuilt();
  await front.start();
  writeInsightSessions(join(home, 'claude'), join(home, 'state', 'spool'), Date.UTC(2026, 9, 5, 9));
  const server = storeCli(front.url, () => env);
  await server.ccotel('backfill', '--no-progress');
  before = await server.ccotel('report', 'insights', '--json');
  // As a server of an earlier release has it: no slots table.
  const client = createClient({ url: front.url });
  await client.command({ query: `DROP TABLE ${INSIGHT_TABLE} SYNC` });
  await client.close();
}, 300_000);

afterAll(async () => {
  await front.stop();
  rmSync(home, { recursive: true, force: true });
});

it('tells a reader of a server without the slots what makes them, makes none itself, and answers the same once retention made them', async () => {
  const server = storeCli(front.url, () => env);
  await expect(server.ccotel('report', 'insights', '--json')).rejects.toThrow(/the store has no insight slots yet: run `ccotel retention --insights-only` against it/);
  expect(JSON.parse(await server.ccotel('report', 'daily', '--json')).rows.length).toBeGreaterThan(0);
  expect(await slotsTables()).toBe(0);
  expect(await server.ccotel('retention', '--insights-only')).toMatch(/^insights {5}\d+ insight slots written$/m);
  expect(await slotsTables()).toBe(1);
  expect(await server.ccotel('report', 'insights', '--json')).toBe(before);
}, 300_000);
