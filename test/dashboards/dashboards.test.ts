/**
 * Every panel of every committed dashboard: its SQL, macros expanded as Grafana and the ClickHouse plugin
 * expand them, runs on a real ClickHouse (chdb) loaded with a corpus shaped as DESIGN.md says, and returns
 * the columns and the figures the corpus specs imply (the specs, not the database, give the expected values).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARDS, INSIGHT_VARIABLES, renderDashboardFiles } from '../../dashboards/src/dashboards.js';
import { insightsReport } from '../../sidecar/src/report/insights.js';
import { ensureInsightSlots } from '../../sidecar/src/retention/insight-slots.js';
import { expandMacros } from '../../dashboards/src/macros.js';
import { ALL, ALL_VARIABLES, DIMENSIONS, RAW_DETAIL } from '../../dashboards/src/sql.js';
import { otelTablesDdl } from '../../schemas/clickhouse.js';
import { usageTablesDdl } from '../../schemas/usage.js';
import { openTempChdb, rows, runAll, type TempChdb } from '../../schemas/chdb-testing.js';
import {
  chatCost, corpusRows, expectedSummary, generateSessions, healthRows, insertCorpus, insertHealth, type HealthSpec, type SessionSpec,
} from '../../schemas/corpus.js';

const DASHBOARD_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dashboards');
const NOW = Date.now();
const HOUR = 3_600_000;

const drill: SessionSpec = {
  id: 'sess-drill', host: 'host-drill', user: 'dana', project: '/work/drill', startMs: NOW - 5 * HOUR,
  restarts: [{ atMs: HOUR, source: 'resume' }],
  turns: [
    { atMs: 60_000, durationMs: 12_000, outcome: 'completed',
      chats: [{ model: 'claude-sonnet-4-5', input: 1000, output: 200, cacheRead: 5000, cacheCreation: 300 }],
      tools: [{ name: 'Bash', outcome: 'success', command: 'npm test', durationMs: 4000 },
        { name: 'Edit', outcome: 'denied', blockedBy: 'user', durationMs: 50 }] },
    { atMs: 2 * HOUR, durationMs: 3_000, outcome: 'interrupted',
      chats: [{ model: 'claude-opus-4-5', input: 10, output: 20, cacheRead: 0, cacheCreation: 0 }],
      tools: [{ name: 'Bash', outcome: 'interrupted', command: 'sleep 600', durationMs: 2000 }] },
  ],
  failureModes: [
    { atMs: 2 * HOUR + 10_000, mode: 'signal_propagation' },
    { atMs: 2 * HOUR + 20_000, mode: 'telemetry_gap', cause: 'not_exported', detail: '1 of 2 requests of the transcript not exported (from 2026-11-20T12:00:10.000Z)' },
  ],
  end: { atMs: 3 * HOUR, reason: 'abandoned' },
};
/** Every third generated session is a Codex one. */
const specs: SessionSpec[] = [drill, ...generateSessions(30, NOW, 3, 11).map((spec, i) => (i % 3 === 1 ? { ...spec, agent: 'codex' as const } : spec))];
const health: HealthSpec[] = [
  { host: 'host-0', atMs: NOW - 2 * HOUR, lagBytes: 1200, unusable: [{ source: 'transcript', result: 'malformed', count: 3 }], exportFailures: 2 },
  { host: 'host-0', atMs: NOW - HOUR, lagBytes: 800, unusable: [], exportFailures: 0 },
  { host: 'host-1', atMs: NOW - HOUR, lagBytes: 50_000, unusable: [{ source: 'hook', result: 'unknown_event', count: 1 }], exportFailures: 5 },
];

let store: TempChdb;
/** "<file>/<panel title>" → rows the panel's query returned. */
const results = new Map<string, Record<string, unknown>[]>();

interface Target { rawSql: string; queryType: string; editorType: string; format: number; datasource: { type: string } }
interface Panel { type: string; title: string; description?: string; targets?: Target[]; datasource?: { type: string; uid: string } }

const committed = (file: string) => JSON.parse(readFileSync(join(DASHBOARD_DIR, file), 'utf8')) as { panels: Panel[]; templating: { list: Array<{ name: string }> } };
const files = Object.keys(DASHBOARDS).map((name) => `${name}.json`);
const queryPanels = (file: string) => committed(file).panels.filter((p) => p.type !== 'row');

/** "<file>/<panel title>" → rows of the panels that show figures, asked again once the raw rows are gone. */
const afterRawExpired = new Map<string, Record<string, unknown>[]>();

const RANGE = { fromMs: NOW - 4 * 24 * HOUR, toMs: NOW + HOUR, intervalMs: 300_000 };

async function runPanels(into: Map<string, Record<string, unknown>[]>, only: (panel: Panel) => boolean = () => true, chosen: Record<string, string> = {}): Promise<void> {
  for (const file of files) {
    for (const panel of queryPanels(file).filter(only)) {
      const sql = expandMacros(panel.targets?.[0]?.rawSql ?? '', { ...RANGE, variables: { session_id: drill.id, ...ALL_VARIABLES, ...INSIGHT_VARIABLES, ...chosen } });
      try {
        into.set(`${file}/${panel.title}`, await rows(store.client, sql));
      } catch (error) {
        throw new Error(`${file} "${panel.title}": ${(error as Error).message}\n${sql}`);
      }
    }
  }
}

beforeAll(async () => {
  store = openTempChdb();
  await runAll(store.client, [...otelTablesDdl(), ...usageTablesDdl()]);
  await insertCorpus(store.client, 'default', corpusRows(specs));
  await insertHealth(store.client, 'default', healthRows(health));
  // The insights board reads the insight slots, made from the facts (made and filled as a store's first open does).
  await ensureInsightSlots(store.client);
  await runPanels(results);
  // What the raw TTL does to the detail: every figure panel must answer the same without it.
  for (const table of ['otel_traces', 'otel_logs']) await store.client.command({ query: `TRUNCATE TABLE ${table}` });
  await runPanels(afterRawExpired, (panel) => !panel.description?.includes(RAW_DETAIL));
});
afterAll(async () => {
  await store?.close();
});

const result = (key: string) => {
  const value = results.get(key);
  if (!value) throw new Error(`no panel ${key}`);
  return value;
};
const single = (key: string) => Object.values(result(key)[0] ?? {})[0];
const sumBy = <T>(items: T[], key: (t: T) => string, value: (t: T) => number = () => 1) =>
  items.reduce<Record<string, number>>((acc, t) => ({ ...acc, [key(t)]: (acc[key(t)] ?? 0) + value(t) }), {});
const allTools = specs.flatMap((s) => s.turns.flatMap((t) => t.tools));
const allChats = specs.flatMap((s) => s.turns.flatMap((t) => t.chats));

describe('dashboard JSON', () => {
  it('is current (run `npm run dashboards` after changing dashboards/src)', () => {
    for (const [file, content] of Object.entries(renderDashboardFiles())) {
      expect(readFileSync(join(DASHBOARD_DIR, file), 'utf8'), file).toBe(content);
    }
  });

  it('targets the ClickHouse plugin with SQL that uses its time macros, in every panel', () => {
    for (const file of files) {
      const panels = queryPanels(file);
      expect(panels.length, file).toBeGreaterThan(3);
      expect(committed(file).templating.list.map((v) => v.name)).toContain('datasource');
      for (const panel of panels) {
        const [target] = panel.targets ?? [];
        expect(panel.datasource).toEqual({ type: 'grafana-clickhouse-datasource', uid: '${datasource}' });
        expect(target).toMatchObject({ editorType: 'sql', datasource: { type: 'grafana-clickhouse-datasource' } });
        expect([['table', 1], ['timeSeries', 0]]).toContainEqual([target.queryType, target.format]);
        expect(target.queryType === 'timeSeries', panel.title).toBe(panel.type === 'timeseries');
        expect(target.rawSql, `${file} ${panel.title}`).toMatch(/\$__timeFilter\((Timestamp|TimeUnix)\)/);
        if (panel.type === 'timeseries') expect(target.rawSql).toContain('$__timeInterval(');
        const variables = committed(file).templating.list.map((v) => v.name);
        for (const [, name] of target.rawSql.matchAll(/\$\{?(?!__)(\w+)/g)) expect(variables, panel.title).toContain(name);
      }
    }
  });
});

describe('figures', () => {
  it('come from the summaries: every panel but those labelled raw detail answers the same once the raw rows expired', () => {
    expect(afterRawExpired.size).toBeGreaterThan(15);
    for (const [key, rows] of afterRawExpired) expect(rows, key).toEqual(results.get(key));
  });
});

describe('overview', () => {
  const key = (title: string) => `overview.json/${title}`;
  it('counts sessions, turns, hosts and users once each despite repeated rows', () => {
    expect(Number(single(key('Sessions')))).toBe(specs.length);
    expect(Number(single(key('Turns')))).toBe(specs.reduce((n, s) => n + s.turns.length, 0));
    expect(Number(single(key('Active hosts')))).toBe(new Set(specs.map((s) => s.host)).size);
    expect(Number(single(key('Active users')))).toBe(new Set(specs.map((s) => s.user)).size);
  });

  it('computes tool success rate, permission blocks and resume frequency', () => {
    expect(Number(single(key('Tool success rate')))).toBeCloseTo(
      allTools.filter((t) => t.outcome === 'success').length / allTools.length, 10);
    expect(Number(single(key('Permission blocks')))).toBe(allTools.filter((t) => t.blockedBy).length);
    const starts = specs.reduce((n, s) => n + 1 + s.restarts.length, 0);
    const resumes = specs.reduce((n, s) => n + s.restarts.filter((r) => r.source === 'resume').length, 0);
    expect(resumes).toBeGreaterThan(0);
    expect(Number(single(key('Resume frequency')))).toBeCloseTo(resumes / starts, 10);
  });

  it('plots turns by outcome in interval buckets', () => {
    const series = result(key('Turns by outcome'));
    expect(Object.keys(series[0])).toEqual(['time', 'outcome', 'turns']);
    expect(sumBy(series, (r) => String(r.outcome), (r) => Number(r.turns)))
      .toEqual(sumBy(specs.flatMap((s) => s.turns), (t) => t.outcome));
    for (const row of series) expect(Date.parse(`${row.time}Z`) % 300_000).toBe(0);
  });

  it('plots cost by model from the summaries', () => {
    const series = result(key('Cost by model'));
    expect(Object.keys(series[0])).toEqual(['time', 'model', 'cost_usd']);
    const byModel = sumBy(series, (r) => String(r.model), (r) => Number(r.cost_usd));
    for (const [model, usd] of Object.entries(byModel)) {
      expect(usd, model).toBeCloseTo(allChats.filter((c) => c.model === model).reduce((sum, c) => sum + chatCost(c), 0), 6);
    }
  });

  it('sums tokens by model and prices them', () => {
    const table = result(key('Tokens and cost by model'));
    expect(Object.keys(table[0])).toEqual(['model', 'input', 'output', 'cache_read', 'cache_creation', 'cost_usd']);
    for (const row of table) {
      const model = String(row.model);
      const chats = allChats.filter((c) => c.model === model);
      const total = (f: 'input' | 'output' | 'cacheRead' | 'cacheCreation') => chats.reduce((n, c) => n + c[f], 0);
      expect([row.input, row.output, row.cache_read, row.cache_creation].map(Number), model)
        .toEqual([total('input'), total('output'), total('cacheRead'), total('cacheCreation')]);
      expect(Number(row.cost_usd), model).toBeCloseTo(chats.reduce((usd, c) => usd + chatCost(c), 0), 6);
    }
    expect(table.map((r) => r.model).sort()).toEqual([...new Set(allChats.map((c) => c.model))].sort());
  });
});

describe('session drill-down', () => {
  const key = (title: string) => `session-drilldown.json/${title}`;
  it('shows the turn timeline of the chosen session only', () => {
    const timeline = result(key('Turn timeline'));
    expect(timeline.map((r) => [r.outcome, Number(r.duration_s), Number(r.tool_calls)]))
      .toEqual(drill.turns.map((t) => [t.outcome, t.durationMs / 1000, t.tools.length]));
  });

  it('lists its tool calls, shell commands, failure modes and tokens', () => {
    expect(result(key('Tool calls')).map((r) => [r.tool, r.outcome]))
      .toEqual(drill.turns.flatMap((t) => t.tools.map((tool) => [tool.name, tool.outcome])));
    expect(result(key('Shell commands')).map((r) => r.command)).toEqual(['npm test', 'sleep 600']);
    expect(result(key('Failure modes')).map((r) => r.mode)).toEqual(['signal_propagation', 'telemetry_gap']);
    const want = expectedSummary(drill);
    expect(result(key('Tokens by model')).map((r) => [r.model, Number(r.input), Number(r.cache_read)]))
      .toEqual(Object.keys(want.InputTokens).sort().map((m) => [m, want.InputTokens[m], want.CacheReadTokens[m]]));
  });
});

describe('tools and permissions', () => {
  const key = (title: string) => `tools-and-permissions.json/${title}`;
  it('counts calls, success rate, errors and denials per tool', () => {
    const table = result(key('Calls by tool'));
    expect(Object.keys(table[0])).toEqual(['tool', 'calls', 'success_rate', 'errors', 'denied', 'p95_s']);
    for (const row of table) {
      const calls = allTools.filter((t) => t.name === row.tool);
      expect([Number(row.calls), Number(row.errors), Number(row.denied)], String(row.tool)).toEqual([
        calls.length, calls.filter((t) => t.outcome === 'error').length, calls.filter((t) => t.outcome === 'denied').length]);
      expect(Number(row.success_rate)).toBeCloseTo(calls.filter((t) => t.outcome === 'success').length / calls.length, 4);
    }
    expect(table.length).toBe(new Set(allTools.map((t) => t.name)).size);
  });

  it('breaks permission blocks down by tool and source, and over time', () => {
    const blocked = allTools.filter((t) => t.blockedBy);
    expect(sumBy(result(key('Permission blocks by tool and source')), (r) => `${r.tool}/${r.source}`, (r) => Number(r.blocks)))
      .toEqual(sumBy(blocked, (t) => `${t.name}/${t.blockedBy}`));
    expect(result(key('Permission blocks')).reduce((n, r) => n + Number(r.blocks), 0)).toBe(blocked.length);
    expect(result(key('Tool calls by outcome')).reduce((n, r) => n + Number(r.calls), 0)).toBe(allTools.length);
  });
});

describe('failure modes', () => {
  const key = (title: string) => `failure-modes.json/${title}`;
  const detections = specs.flatMap((s) => s.failureModes.map((f) => ({ ...f, host: s.host, session: s.id })));
  it('counts detections by mode, host and over time', () => {
    expect(detections.length).toBeGreaterThan(2);
    expect(sumBy(result(key('Detections by mode and host')), (r) => `${r.mode}@${r.host}`, (r) => Number(r.detections)))
      .toEqual(sumBy(detections, (d) => `${d.mode}@${d.host}`));
    expect(sumBy(result(key('Detections by mode')), (r) => String(r.mode), (r) => Number(r.detections)))
      .toEqual(sumBy(detections, (d) => d.mode));
    expect(result(key('Recent detections')).map((r) => r.session).sort()).toEqual(detections.map((d) => d.session).sort());
  });

  it('lists the telemetry gaps with what differs and from when', () => {
    expect(result(key('Telemetry gaps'))).toEqual([expect.objectContaining({ session: drill.id, host: drill.host, differs: 'not_exported', detail: drill.failureModes[1].detail })]);
  });

  it('counts abandoned sessions per host', () => {
    const abandoned = specs.filter((s) => s.end?.reason === 'abandoned');
    expect(sumBy(result(key('Abandoned sessions by host')), (r) => String(r.host), (r) => Number(r.abandoned_sessions)))
      .toEqual(sumBy(abandoned, (s) => s.host));
  });
});

describe('insights', () => {
  it('gives each pattern the figures of report insights, from the summaries', async () => {
    const report = await insightsReport(store.client, { timezone: 'UTC' });
    const interrupted = specs.flatMap((s) => s.turns).filter((t) => t.outcome === 'interrupted').length;
    expect(interrupted).toBeGreaterThan(0);
    expect(report.insights.find((i) => i.pattern === 'interrupted_work')!.count).toBe(interrupted);
    const panel = result('insights.json/Insights');
    expect(panel.map((row) => [row.pattern, row.count, row.sessions, row.turns, row.tokens, row.time_ms].map(String)))
      .toEqual(report.insights.map((i) => [i.pattern, i.count, i.sessions, i.turns, i.tokens, i.time_ms].map(String)));
    panel.forEach((row, index) => expect(Number(row.cost_usd)).toBeCloseTo(report.insights[index].cost_usd, 8));
    expect(result('insights.json/Tool errors by class and tool').length).toBeGreaterThan(0);
  });
});

describe('sidecar health', () => {
  const key = (title: string) => `sidecar-health.json/${title}`;
  it('shows when each host last sent anything', () => {
    const table = result(key('Last record per host'));
    expect(Object.keys(table[0])).toEqual(['host', 'last_seen', 'age_s']);
    expect(table.map((r) => r.host)).toEqual([...new Set([...specs.map((s) => s.host), ...health.map((h) => h.host)])].sort());
    for (const row of table) expect(Number(row.age_s)).toBeGreaterThan(-2 * 3600);
  });

  it('sums unusable records and export failures once per point, and shows the lag', () => {
    expect(sumBy(result(key('Unusable input records')), (r) => String(r.reason), (r) => Number(r.records))).toEqual(
      sumBy(health.flatMap((h) => h.unusable), (u) => `${u.source}: ${u.result}`, (u) => u.count));
    expect(sumBy(result(key('Export failures')), (r) => String(r.sink), (r) => Number(r.failures)))
      .toEqual({ otlp: health.reduce((n, h) => n + h.exportFailures, 0) });
    expect(Math.max(...result(key('Ingest lag')).map((r) => Number(r.lag_bytes)))).toBe(50_000);
  });
});

describe('attribution variables (host, user, repository, branch, team) and the agent', () => {
  interface Variable { name: string; type: string; query?: string; multi?: boolean; includeAll?: boolean; allValue?: string }
  const variablesOf = (file: string) => (committed(file).templating.list as Variable[]).filter((v) => v.type === 'query');

  it('are on every board whose figures read the facts, each a multi-value choice with an All that lets everything through', () => {
    for (const file of files) {
      const readsFacts = queryPanels(file).some((panel) => /ccotel_(span|event)_facts/.test(panel.targets?.[0]?.rawSql ?? ''));
      expect(variablesOf(file).map((v) => v.name), file).toEqual(readsFacts ? DIMENSIONS.map((d) => d.variable) : []);
      for (const variable of variablesOf(file)) expect(variable, `${file} ${variable.name}`).toMatchObject({ multi: true, includeAll: true, allValue: ALL });
    }
  });

  it('offer the values the facts hold in the time range', async () => {
    const values = (variable: Variable) => rows<{ value: string }>(store.client, expandMacros(variable.query ?? '', RANGE)).then((r) => r.map((row) => row.value));
    const [host, user, repo, branch, team, agent] = variablesOf('overview.json');
    const distinct = (of: (spec: SessionSpec) => string | undefined) => [...new Set(specs.map(of).filter((v): v is string => Boolean(v)))].sort();
    expect(await values(host)).toEqual(distinct((s) => s.host));
    expect(await values(user)).toEqual(distinct((s) => s.user));
    expect(await values(repo)).toEqual(distinct((s) => s.repo));
    expect(await values(branch)).toEqual(distinct((s) => s.branch));
    expect(await values(team)).toEqual(distinct((s) => s.team));
    expect(await values(agent)).toEqual(['claude-code', 'codex']);
  });

  it('narrow every figure to the sessions of the agents chosen', async () => {
    await expectNarrowed({ agent: "'codex'" }, specs.filter((s) => s.agent === 'codex'));
  });

  /** The sessions, tokens and blocks panels with `choice` made count exactly the `picked` sessions' own. */
  const expectNarrowed = async (choice: Record<string, string>, picked: SessionSpec[]) => {
    const chosen = new Map<string, Record<string, unknown>[]>();
    await runPanels(chosen, (panel) => ['Sessions', 'Tokens and cost by model', 'Permission blocks'].includes(panel.title), choice);
    expect(picked.length).toBeGreaterThan(0);
    expect(picked.length).toBeLessThan(specs.length);
    expect(Number(Object.values(chosen.get('overview.json/Sessions')![0])[0])).toBe(picked.length);
    const input = sumBy(picked.flatMap((s) => s.turns.flatMap((t) => t.chats)), (c) => c.model, (c) => c.input);
    expect(Object.fromEntries(chosen.get('overview.json/Tokens and cost by model')!.map((row) => [row.model, Number(row.input)]))).toEqual(input);
    expect(Number(Object.values(chosen.get('overview.json/Permission blocks')![0])[0]))
      .toBe(picked.flatMap((s) => s.turns.flatMap((t) => t.tools)).filter((t) => t.blockedBy).length);
  };

  it('narrow every figure to the values chosen (a session that names none is left out once any is chosen)', async () => {
    const repo = 'https://git.example.com/acme/project-1';
    const picked = specs.filter((s) => s.repo === repo && s.team === 'team-1' && ['main', 'feature/PAY-1'].includes(s.branch ?? ''));
    await expectNarrowed({ repo: `'${repo}'`, branch: "'main','feature/PAY-1'", team: "'team-1'" }, picked);
  });
});
