// A backfill into a ClickHouse server leaves the server's raw rows to the server's own TTL: the end of a backfill drops
// the days past the raw window only in an embedded store, whose window is this machine's setting. The server here is
// the test front over the embedded engine (test/helpers/clickhouse-http-front.ts), its tables made by the shipped
// schema files (a 30-day TTL); the sidecar is told a 10-day window, and the history is 20 days old.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ClickHouseFrontProcess } from '../helpers/clickhouse-front-process.js';
import { generateCorpus } from '../generator/corpus.js';
import { assertBuilt, cliEnv } from '../reliability/cli.js';
import { storeCli } from './store-cli.js';

const DAY = 86_400_000;
const home = mkdtempSync(join(tmpdir(), 'ccotel-server-window-'));
const front = new ClickHouseFrontProcess(join(home, 'clickhouse'));
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  assertBuilt();
  await front.start();
  await generateCorpus({ seed: 5, root: join(home, 'claude'), sessions: 3, startMs: Date.now() - 20 * DAY, hostLayout: 'single-root' });
  env = { ...cliEnv(home, { TZ: 'UTC' }), CLAUDE_CONFIG_DIR: join(home, 'claude'), CCOTEL_RAW_TTL_DAYS: '10' };
}, 300_000);

afterAll(async () => {
  await front.stop();
  rmSync(home, { recursive: true, force: true });
});

it('keeps the server\'s raw rows of days past the sidecar\'s window, which the server\'s TTL still keeps', async () => {
  const server = storeCli(front.url, () => env);
  await server.ccotel('backfill', '--no-progress');
  const [kept] = await server.query<{ spans: number; days: number }>(
    `SELECT count() AS spans, uniqExact(toDate(Timestamp)) AS days FROM otel_traces WHERE Timestamp < now() - INTERVAL 10 DAY`);
  expect(kept.spans).toBeGreaterThan(0);
  expect(kept.days).toBeGreaterThan(0);
}, 300_000);
