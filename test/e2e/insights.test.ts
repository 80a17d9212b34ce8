// Issue 35, insights end to end: generated transcripts (and hook events) holding every pattern beside twins that
// must not be found → `ccotel backfill` with no raw rows kept (every figure from the summaries) → `report insights
// --json`, held to the answer the plan computes: counts, sessions, turns, tokens, cost and time of each pattern.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InsightsReport } from '../../sidecar/src/report/insights.js';
import { expectedInsights, writeInsightSessions, type ExpectedInsight } from '../generator/insights.js';
import { assertBuilt, cliEnv, startRun, stopRun, transcriptStatus } from '../reliability/cli.js';
import { storeCli } from './store-cli.js';

const home = mkdtempSync(join(tmpdir(), 'ccotel-insights-'));
const env = cliEnv(home, { TZ: 'UTC' });
const { ccotel } = storeCli(join(home, 'store'), () => env);
const START = Date.UTC(2026, 9, 5, 9);
let expected: Record<string, ExpectedInsight>;
let sessionOf: Map<string, string>;
let report: InsightsReport;
let running: ReturnType<typeof startRun> | undefined;

const insights = async (...args: string[]) => JSON.parse(await ccotel('report', 'insights', '--json', ...args)) as InsightsReport;
const figures = (insight: InsightsReport['insights'][number]) => {
  const { count, sessions, turns, tokens, cost_usd, time_ms } = insight;
  return { count, sessions, turns, tokens, cost_usd, time_ms };
};

beforeAll(async () => {
  assertBuilt();
  const written = writeInsightSessions(join(home, 'claude'), join(home, 'state', 'spool'), START);
  expected = expectedInsights(written);
  sessionOf = new Map([...written].map(([name, session]) => [name, session.sessionId]));
  await ccotel('backfill', '--no-progress');
  report = await insights();
}, 300_000);

afterAll(async () => {
  await stopRun(running);
});

describe('report insights on generated sessions', () => {
  it.each(['retry_loop', 'repeated_read', 'not_found', 'permission_friction', 'interrupted_work', 'compaction_churn', 'slow_tools', 'cache_efficiency'])(
    'finds %s exactly: count, sessions, turns, tokens, cost and time of its turns, and not its twins', (pattern) => {
      const insight = report.insights.find((i) => i.pattern === pattern)!;
      expect(figures(insight)).toEqual(expected[pattern]);
      expect(insight.examples.length).toBe(Math.min(5, insight.count));
      for (const example of insight.examples) expect([...sessionOf.values()]).toContain(example.session);
    });

  it('names the rule that would stop the asking, the refusals by source, the not-found share by tool and the slow calls', () => {
    const of = (pattern: string) => report.insights.find((i) => i.pattern === pattern)!;
    expect(of('permission_friction').details).toEqual({
      rules: [{ rule: 'Bash(git push:*)', asks: 3, sessions: 1, waited_ms: 0 }],
      refusals: [{ source: 'rule', tool: 'Bash', refusals: 1 }],
    });
    expect(of('permission_friction').suggestion).toContain('"Bash(git push:*)"');
    // Errors: the retry session's 5, 3 in "elsewhere" (2 not found); the refused touch is a refusal, no error.
    expect(of('not_found').details).toMatchObject({ errors: 8, share_percent: 25 });
    expect(of('slow_tools').examples.map((e) => e.ms)).toEqual([45_000, 31_000]);
    expect(of('compaction_churn').details).toEqual({ sessions_churning: 1, tokens_before: 310_000, tokens_after: 300 });
    expect(of('repeated_read').details).toMatchObject({ files: 1 });
    expect(of('retry_loop').details).toMatchObject({ loops: 1, largest: [{ session: sessionOf.get('retry'), call: 'Bash(npm run:*)', calls: 3 }] });
    const cache = of('cache_efficiency').details.by_project_model as { project: string; read_share_percent: number }[];
    expect(cache.find((row) => row.project === '/work/gamma')!.read_share_percent).toBe(0);
  });

  it('breaks the figures down by project', async () => {
    const byProject = await insights('--by', 'project');
    const counts = byProject.insights.filter((i) => i.count > 0).map((i) => [i.pattern, i.value, i.count]);
    expect(counts).toEqual(expect.arrayContaining([['retry_loop', '/work/alpha', 3], ['permission_friction', '/work/beta', 3], ['compaction_churn', '/work/gamma', 2]]));
  });

  it('refuses a filter it does not apply, and a breakdown it does not have', async () => {
    await expect(ccotel('report', 'insights', '--project', 'alpha')).rejects.toThrow(/report insights takes --since, --until, --timezone, --by and --json, not --project/);
    await expect(ccotel('report', 'insights', '--by', 'branch')).rejects.toThrow(/use one of project, repo, user/);
  });

  it('counts only what happened in the days asked for', async () => {
    const later = await insights('--since', '2026-10-06');
    expect(later.insights.every((i) => i.count === 0)).toBe(true);
  });

  it('takes its thresholds from the configuration', async () => {
    const loose = JSON.parse(await storeCli(join(home, 'store'), () => ({ ...env, CCOTEL_INSIGHT_RETRY_MIN: '2' })).ccotel('report', 'insights', '--json')) as InsightsReport;
    // npm test's two failures are a loop now.
    expect(loose.insights.find((i) => i.pattern === 'retry_loop')!.count).toBe(5);
    expect(loose.thresholds.insight_retry_min).toBe(2);
  });

  it('answers the same through a running sidecar, whose endpoint reads with read-only sessions', async () => {
    const storeDir = join(home, 'store');
    const byProject = await insights('--by', 'project');
    running = startRun(['--store', storeDir], env);
    while ((await transcriptStatus(env, storeDir))?.running !== true) await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await insights()).toEqual(report);
    expect(await insights('--by', 'project')).toEqual(byProject);
  });

  it('prints a table with the suggestions and examples', async () => {
    const text = await ccotel('report', 'insights');
    expect(text).toMatch(/retry_loop\s*│\s*3\s*│\s*1\s*│\s*2/);
    expect(text).toContain(`session ${sessionOf.get('retry')}`);
  });
});
