// ccotel's price of every recorded real Claude Code session against Claude Code's own figure: the `cost-state`
// rows of its transcript and the `total_cost_usd` of its print-mode results (test/fixtures/real, recorded from
// the real CLI). Fixtures recorded per release (test/fixtures/real/<version>/<scenario>) are read as well.
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { backfill } from '../../sidecar/src/commands/backfill.js';
import { usageReport, type UsageReport } from '../../sidecar/src/report/usage.js';
import { openStore, type Store } from '../../sidecar/src/store/open-store.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'real');

/** Scenario folders (those with recorded results), directly under FIXTURES or under a release folder. */
function scenarioDirs(dir: string, depth = 0): string[] {
  if (existsSync(join(dir, 'results'))) return [dir];
  if (depth > 1) return [];
  return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).flatMap((e) => scenarioDirs(join(dir, e.name), depth + 1));
}

const maxBy = (map: Map<string, number>, key: string, value: number) => map.set(key, Math.max(map.get(key) ?? 0, value));

/** Claude Code's own figures per session: from the results it printed, and from its transcripts' cost-state rows. */
function statedCosts(dirs: string[]): { printed: Map<string, number>; costState: Map<string, number>; linesAdded: Map<string, number> } {
  const printed = new Map<string, number>();
  const costState = new Map<string, number>();
  const linesAdded = new Map<string, number>();
  for (const dir of dirs) {
    for (const file of readdirSync(join(dir, 'results'))) {
      const result = JSON.parse(readFileSync(join(dir, 'results', file), 'utf8')) as { session_id: string; total_cost_usd: number };
      maxBy(printed, result.session_id, result.total_cost_usd);
    }
    const projects = join(dir, 'projects');
    for (const file of readdirSync(projects, { recursive: true }) as string[]) {
      if (!file.endsWith('.jsonl')) continue;
      for (const line of readFileSync(join(projects, file), 'utf8').split('\n')) {
        if (!line.includes('"type":"cost-state"')) continue;
        const row = JSON.parse(line) as { sessionId: string; totalCostUSD: number; totalLinesAdded: number };
        maxBy(costState, row.sessionId, row.totalCostUSD);
        maxBy(linesAdded, row.sessionId, row.totalLinesAdded);
      }
    }
  }
  return { printed, costState, linesAdded };
}

const dirs = scenarioDirs(FIXTURES);
const stated = statedCosts(dirs);
const storeDir = mkdtempSync(join(tmpdir(), 'ccotel-cost-real-'));
let store: Store;
let sessions: UsageReport;

beforeAll(async () => {
  process.env.HOME = mkdtempSync(join(tmpdir(), 'ccotel-home-'));
  process.env.CCOTEL_STATE_DIR = mkdtempSync(join(tmpdir(), 'ccotel-state-'));
  process.env.CLAUDE_CONFIG_DIR = dirs.join(',');
  process.env.CCOTEL_RAW_TTL_DAYS = '0'; // the samples age: keep their raw metric points
  await backfill({ store: storeDir });
  store = await openStore(storeDir, { command: 'test', access: 'read' });
  sessions = await usageReport(store.client, 'session', { timezone: 'UTC' });
}, 300_000);

afterAll(async () => {
  await store?.close();
});

it('has recorded samples with Claude Code\'s own cost to check against', () => {
  expect(dirs.length).toBeGreaterThanOrEqual(9);
  expect(stated.printed.size).toBeGreaterThanOrEqual(11);
  for (const [session, usd] of stated.printed) expect(stated.costState.get(session), session).toBe(usd);
});

it('prices every recorded session within 1% of what Claude Code says it cost', () => {
  expect(sessions.unknown_models).toEqual([]);
  for (const [session, usd] of stated.printed) {
    const row = sessions.rows.find((r) => r.period === session);
    expect(row, session).toBeDefined();
    expect(usd).toBeGreaterThan(0);
    expect(Math.abs(row!.cost_usd - usd) / usd, `${session}: ccotel ${row!.cost_usd}, Claude Code ${usd}`).toBeLessThan(0.01);
    // Claude Code's statement is kept next to ccotel's figure (from the cost-state rows).
    expect(row!.reported_cost_usd, session).toBe(usd);
  }
});

it('counts the lines Claude Code says it added as ccotel.lines_of_code', async () => {
  const result = await store.client.query({
    query: `SELECT Attributes['session.id'] AS session, sum(Value) AS lines FROM otel_metrics_sum
            WHERE MetricName = 'ccotel.lines_of_code' AND Attributes['type'] = 'added' GROUP BY session`,
    format: 'JSONEachRow',
  });
  const counted = new Map((await result.json<{ session: string; lines: number }>()).map((r) => [r.session, Number(r.lines)]));
  const added = [...stated.linesAdded].filter(([, lines]) => lines > 0);
  expect(added.length).toBeGreaterThan(0);
  for (const [session, lines] of added) expect(counted.get(session), session).toBe(lines);
});
