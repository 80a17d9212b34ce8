/**
 * Dashboards and summaries on data the real pipeline wrote: a generated transcript corpus (with its exact
 * expected answer) is backfilled by the sidecar into an embedded store, then the committed dashboards'
 * panels (macros expanded as the plugin does) and the retention job's summaries must agree with the answer.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expandMacros } from '../../dashboards/src/macros.js';
import { ALL_VARIABLES } from '../../dashboards/src/sql.js';
import { backfill } from '../../sidecar/src/commands/backfill.js';
import { runRetention } from '../../sidecar/src/retention/run-retention.js';
import { generateCorpus } from '../generator/corpus.js';
import type { Expected } from '../generator/expected.js';

const DASHBOARD_DIR = join(import.meta.dirname, '..', '..', 'dashboards');
const root = mkdtempSync(join(tmpdir(), 'ccotel-pipeline-dashboards-'));
const storeDir = join(root, 'store');
const savedEnv = { ...process.env };
let expected: Expected;
let client: ClickHouseClient;

type Row = Record<string, unknown>;
async function panel(file: string, title: string): Promise<Row[]> {
  const dashboard = JSON.parse(readFileSync(join(DASHBOARD_DIR, file), 'utf8')) as { panels: Array<{ title: string; targets?: Array<{ rawSql: string }> }> };
  const found = dashboard.panels.find((p) => p.title === title);
  if (!found?.targets) throw new Error(`${file} has no panel "${title}"`);
  const query = expandMacros(found.targets[0].rawSql, { fromMs: Date.UTC(2026, 0, 1), toMs: Date.now() + 86_400_000, intervalMs: 3_600_000, variables: ALL_VARIABLES });
  return (await client.query({ query, format: 'JSONEachRow' })).json<Row>();
}
const nonZero = (record: Record<string, number>) => Object.fromEntries(Object.entries(record).filter(([, n]) => n > 0));
const sumBy = (rows: Row[], key: string, value: string) =>
  rows.reduce<Record<string, number>>((acc, r) => ({ ...acc, [String(r[key])]: (acc[String(r[key])] ?? 0) + Number(r[value]) }), {});

beforeAll(async () => {
  expected = await generateCorpus({ seed: 424242, root: join(root, 'corpus'), sessions: 8, hostLayout: 'multi-root' });
  Object.assign(process.env, {
    HOME: join(root, 'corpus', 'home'),
    XDG_CONFIG_HOME: join(root, 'xdg-config'),
    XDG_DATA_HOME: join(root, 'xdg-data'),
    CLAUDE_CONFIG_DIR: expected.configDirs.join(','),
    // The corpus is dated September 2026: keep it past the default 14-day TTL.
    CCOTEL_RAW_TTL_DAYS: '0',
  });
  await backfill({ store: storeDir, progress: false });
  client = createClient({ connection: createChdbConnection({ path: join(storeDir, 'chdb') }) } as never);
}, 300_000);

afterAll(async () => {
  await client?.close();
  process.env = savedEnv;
  rmSync(root, { recursive: true, force: true });
});

describe('dashboards on backfilled transcripts', () => {
  it('overview: turns, turns by outcome, tool success rate', async () => {
    expect(Number(Object.values((await panel('overview.json', 'Turns'))[0])[0])).toBe(expected.turns);
    expect(sumBy(await panel('overview.json', 'Turns by outcome'), 'outcome', 'turns')).toEqual(nonZero(expected.turnsByOutcome));
    const rate = Number(Object.values((await panel('overview.json', 'Tool success rate'))[0])[0]);
    expect(rate).toBeCloseTo(expected.toolCallsByOutcome.success / expected.toolCalls, 10);
  });

  it('overview: tokens by model, each message once', async () => {
    const table = await panel('overview.json', 'Tokens and cost by model');
    const got = Object.fromEntries(table.map((r) => [r.model, {
      input: Number(r.input), output: Number(r.output), cacheRead: Number(r.cache_read), cacheCreation: Number(r.cache_creation),
    }]));
    expect(got).toEqual(expected.tokensByModel);
  });

  it('tools: calls, errors and denials per tool', async () => {
    const table = await panel('tools-and-permissions.json', 'Calls by tool');
    const got = Object.fromEntries(table.map((r) => [r.tool, { calls: Number(r.calls), errors: Number(r.errors), denied: Number(r.denied) }]));
    const want = Object.fromEntries(Object.entries(expected.toolCallsByName).map(([tool, byOutcome]) => [tool, {
      calls: Object.values(byOutcome).reduce((a, b) => a + b, 0), errors: byOutcome.error ?? 0, denied: byOutcome.denied ?? 0,
    }]));
    expect(got).toEqual(want);
    expect(sumBy(await panel('tools-and-permissions.json', 'Tool calls by outcome'), 'outcome', 'calls'))
      .toEqual(nonZero(expected.toolCallsByOutcome));
  });

  it('retention summaries add up to the corpus totals', async () => {
    await runRetention(client, { rawTtlDays: 0 });
    const [totals] = await (await client.query({
      query: `SELECT sum(Turns) AS turns, sum(ToolCalls) AS tools, sumMap(InputTokens) AS input, sumMap(OutputTokens) AS output
              FROM ccotel_session_summaries FINAL`,
      format: 'JSONEachRow',
    })).json<{ turns: number; tools: number; input: Record<string, number>; output: Record<string, number> }>();
    expect(Number(totals.turns)).toBe(expected.turns);
    expect(Number(totals.tools)).toBe(expected.toolCalls);
    expect(Object.values(totals.input).reduce((a, b) => a + Number(b), 0)).toBe(expected.tokens.input);
    expect(Object.values(totals.output).reduce((a, b) => a + Number(b), 0)).toBe(expected.tokens.output);
  });
});
