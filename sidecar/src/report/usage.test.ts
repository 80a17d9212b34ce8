import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTempChdb, runAll, type TempChdb } from '../../../schemas/chdb-testing.js';
import { otelTablesDdl } from '../../../schemas/clickhouse.js';
import { chTime } from '../../../schemas/corpus.js';
import { USAGE_TABLES, usageTablesDdl } from '../../../schemas/usage.js';
import { renderUsage } from '../commands/report.js';
import { billingBlocks, type HourUsage } from './blocks.js';
import { SHARED_QUERIES, spanGroups } from './queries.js';
import { selectRows } from './select.js';
import { dailyFromChatDays, unpricedByDay, usageByPlace, usageByProject, usageReport, usageSummedBy, type ChatDay } from './usage.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 9, 5, 22, 30); // a Monday, 22:30 UTC
let store: TempChdb;

interface Chat { id: string; session: string; atMs: number; model: string; input: number; output?: number; costUsd: number; unknown?: boolean; project?: string; branch?: string }

const chats: Chat[] = [
  { id: 'a1', session: 's-a', atMs: T0, model: 'claude-opus-5-5', input: 100, output: 10, costUsd: 0.5, project: '/src/payments' },
  { id: 'a2', session: 's-a', atMs: T0 + 2 * HOUR, model: 'claude-opus-5-5', input: 200, costUsd: 1, project: '/src/payments' },
  { id: 'b1', session: 's-b', atMs: T0 + 30 * HOUR, model: 'claude-sonnet-4-5', input: 50, costUsd: 0.25, project: '/src/web', branch: 'feature/x' },
  // A model the price table does not know: 0 from ccotel, Claude Code said 0.75 for it.
  { id: 'b2', session: 's-b', atMs: T0 + 31 * HOUR, model: 'claude-future-9', input: 70, costUsd: 0, unknown: true, project: '/src/web', branch: 'feature/y' },
];

beforeAll(async () => {
  store = openTempChdb();
  await runAll(store.client, [...otelTablesDdl(), ...usageTablesDdl()]);
  const values = chats.map((c) => ({
    SpanId: c.id, Timestamp: chTime(c.atMs), EndTime: chTime(c.atMs + 1000), SessionId: c.session, Project: c.project, Kind: 'chat',
    Name: c.model, InputTokens: c.input, OutputTokens: c.output ?? 0, CostUsd: c.costUsd, UnknownModel: c.unknown ? 1 : 0,
    Repository: c.project === '/src/web' ? 'https://h/acme/web' : '', Branch: c.branch ?? 'main', Resource: { team: c.session === 's-a' ? 'payments' : 'web' },
  }));
  await store.client.insert({ table: USAGE_TABLES.spans, values, format: 'JSONEachRow' });
  await store.client.insert({ table: USAGE_TABLES.events, format: 'JSONEachRow', values: [0.5, 2].map((usd, i) => ({
    RecordId: `r${i}`, Timestamp: chTime(T0 + (32 + i) * HOUR), SessionId: 's-b', EventName: 'ccotel.cost.reported',
    ReportedCostUsd: usd, ReportedCostByModel: { 'claude-sonnet-4-5': 0.25 * (i + 1), 'claude-future-9': 0.75 * (i + 1) },
  })) });
});
afterAll(async () => {
  await store?.close();
});

describe('usageReport', () => {
  it('counts days in the time zone asked for', async () => {
    expect((await usageReport(store.client, 'daily', { timezone: 'UTC' })).rows.map((r) => [r.period, r.input_tokens]))
      .toEqual([['2026-10-05', 100], ['2026-10-06', 200], ['2026-10-07', 120]]);
    // 22:30 UTC on the 5th is already the 6th in Tokyo, and 00:30 UTC on the 6th still the 6th.
    expect((await usageReport(store.client, 'daily', { timezone: 'Asia/Tokyo' })).rows.map((r) => [r.period, r.input_tokens]))
      .toEqual([['2026-10-06', 300], ['2026-10-07', 120]]);
    expect((await usageReport(store.client, 'weekly', { timezone: 'UTC' })).rows.map((r) => r.period)).toEqual(['2026-10-05']);
  });

  it('costs a model without a price at Claude Code\'s own latest figure for it, and names it', async () => {
    const report = await usageReport(store.client, 'session', { timezone: 'UTC' });
    const b = report.rows.find((r) => r.period === 's-b')!;
    expect(b.breakdown.map((m) => [m.model, m.cost_usd])).toEqual([['claude-future-9', 1.5], ['claude-sonnet-4-5', 0.25]]);
    expect(b.reported_cost_usd).toBe(2);
    expect(b.project).toBe('/src/web');
    expect(report.unknown_models).toEqual(['claude-future-9']);
    expect(report.totals).toMatchObject({ sessions: 2, input_tokens: 420, cost_usd: 3.25 });
    const text = renderUsage(report, true);
    expect(text).toContain('$2.00 (ccotel -$0.25)');
    expect(text).toContain('no list price for claude-future-9');
    expect(text).toContain('total (2 sessions)');
    // One session is one session, not "1 sessions".
    expect(renderUsage({ ...report, rows: [], totals: { ...report.totals, sessions: 1 } }, false)).toContain('total (1 session)');
  });

  it("sums the session rows by project, Claude Code's cost of an unpriced model included; only session rows name one", async () => {
    const sessions = await usageReport(store.client, 'session', { timezone: 'UTC' });
    const projects = await usageByProject(store.client, { timezone: 'UTC' });
    expect(projects.sort((x, y) => x.project.localeCompare(y.project))).toEqual(sessions.rows.map((row) => ({
      project: row.project, sessions: 1, tokens: row.total_tokens, cost_usd: row.cost_usd,
    })).sort((x, y) => x.project!.localeCompare(y.project!)));
    expect(projects.find((row) => row.project === '/src/web')).toMatchObject({ tokens: 120, cost_usd: 1.75 });
    expect(await usageByProject(store.client, { timezone: 'UTC', model: 'claude-sonnet-4-5' })).toEqual([{ project: '/src/web', sessions: 1, tokens: 50, cost_usd: 0.25 }]);
    expect((await usageReport(store.client, 'daily', { timezone: 'UTC' })).rows.map((row) => row.project)).toEqual([undefined, undefined, undefined]);
  });

  it('sums the session rows by project and repository in one read, and by either from those', async () => {
    const places = await usageByPlace(store.client, { timezone: 'UTC' });
    expect(places.sort((x, y) => x.project.localeCompare(y.project))).toEqual([
      { project: '/src/payments', repository: '', sessions: 1, tokens: 310, cost_usd: 1.5 },
      { project: '/src/web', repository: 'https://h/acme/web', sessions: 1, tokens: 120, cost_usd: 1.75 },
    ]);
    expect(usageSummedBy([...places, { ...places[1], project: '/src/web-2' }], 'repository').sort((x, y) => x.repository.localeCompare(y.repository))).toEqual([
      { repository: '', sessions: 1, tokens: 310, cost_usd: 1.5 },
      { repository: 'https://h/acme/web', sessions: 2, tokens: 240, cost_usd: 3.5 },
    ]);
  });

  it("adds up the days from the report's span groups as `report daily` does, Claude Code's cost of an unpriced model included", async () => {
    const groups = await selectRows<Record<string, unknown>>(store.client, SHARED_QUERIES.spanGroups);
    const days = dailyFromChatDays(spanGroups(groups, 'model_day', 'chat') as unknown as ChatDay[], await unpricedByDay(store.client));
    const daily = await usageReport(store.client, 'daily', { timezone: 'UTC' });
    expect(days).toEqual(daily.rows.map(({ period, input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens, total_tokens, cost_usd }) =>
      ({ period, input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens, total_tokens, cost_usd })));
    expect(days.map((day) => day.cost_usd)).toEqual([0.5, 1, 1.75]);
  });

  it('breaks usage down by branch, repository and team, an unpriced model\'s own cost where its chat was', async () => {
    const by = async (dimension: 'branch' | 'repo' | 'team', period: 'all' | 'daily' = 'all') =>
      (await usageReport(store.client, period, { timezone: 'UTC', by: dimension })).rows.map((row) => [row.period, row[dimension], row.sessions, row.input_tokens, row.cost_usd]);
    expect(await by('branch')).toEqual([['all', 'feature/x', 1, 50, 0.25], ['all', 'feature/y', 1, 70, 1.5], ['all', 'main', 1, 300, 1.5]]);
    expect(await by('repo')).toEqual([['all', '', 1, 300, 1.5], ['all', 'https://h/acme/web', 1, 120, 1.75]]);
    expect(await by('team', 'daily')).toEqual([['2026-10-05', 'payments', 1, 100, 0.5], ['2026-10-06', 'payments', 1, 200, 1], ['2026-10-07', 'web', 1, 120, 1.75]]);
    const totals = (await usageReport(store.client, 'all', { timezone: 'UTC', by: 'branch', branch: 'feature/y' })).totals;
    expect(totals).toMatchObject({ sessions: 1, input_tokens: 70, cost_usd: 1.5 });
  });

  it('filters by day, project, model and session', async () => {
    const totals = async (filter: Parameters<typeof usageReport>[2]) => (await usageReport(store.client, 'daily', { timezone: 'UTC', ...filter })).totals;
    expect(await totals({ since: '2026-10-06', until: '2026-10-06' })).toMatchObject({ sessions: 1, input_tokens: 200 });
    expect(await totals({ project: 'payments' })).toMatchObject({ sessions: 1, input_tokens: 300 });
    expect(await totals({ model: 'claude-sonnet-4-5' })).toMatchObject({ sessions: 1, input_tokens: 50, cost_usd: 0.25 });
    expect(await totals({ sessionIds: ['s-b'] })).toMatchObject({ sessions: 1, input_tokens: 120 });
  });
});

describe('billingBlocks', () => {
  interface Item { time: number; model: string; session: string; tokens: number }
  /** The items summed as the store sums them: by model, hour, and whether at the hour's first millisecond. */
  function hourUsage(items: Item[]): HourUsage[] {
    const groups = new Map<string, HourUsage>();
    for (const { time, model, session, tokens } of [...items].sort((a, b) => a.time - b.time)) {
      const [hour, onHour] = [Math.floor(time / HOUR), time % HOUR === 0 ? 1 : 0];
      const key = `${hour}:${1 - onHour}:${model}`;
      const group = groups.get(key) ?? { hour, on_hour: onHour, model, sessions: [], input_tokens: 0, output_tokens: 0, cache_creation_tokens: 0, cache_read_tokens: 0, cost_usd: 0, first_ms: time, last_ms: time };
      groups.set(key, { ...group, sessions: [...new Set([...group.sessions, session])], input_tokens: group.input_tokens + tokens, last_ms: time });
    }
    return [...groups.keys()].sort((a, b) => a.localeCompare(b, 'en', { numeric: true })).map((key) => groups.get(key)!);
  }
  const item = (time: number, model = 'm', session = 's'): Item => ({ time, model, session, tokens: 1 });

  it('starts a block at the full hour, a new one past 5 hours or after a 5-hour gap, and knows the running one', () => {
    const start = Date.UTC(2026, 9, 5, 9, 40);
    const blocks = billingBlocks(hourUsage([item(start), item(start + 4 * HOUR), item(start + 5.5 * HOUR), item(start + 12 * HOUR)]), start + 12.5 * HOUR);
    expect(blocks.map((b) => [b.period, b.input_tokens, b.is_active])).toEqual([
      ['2026-10-05T09:00:00.000Z', 2, false],
      ['2026-10-05T15:00:00.000Z', 1, false],
      ['2026-10-05T21:00:00.000Z', 1, true],
    ]);
    expect(blocks[0].end).toBe('2026-10-05T14:00:00.000Z');
  });

  it('ends a block with the messages at its last millisecond, though they share their hour with the next block', () => {
    const start = Date.UTC(2026, 9, 5, 9);
    const blocks = billingBlocks(hourUsage([item(start + 10 * 60_000, 'a', 's1'), item(start + 5 * HOUR, 'b', 's2'), item(start + 5 * HOUR + 1, 'a', 's3')]), start + 24 * HOUR);
    expect(blocks.map((b) => [b.period, b.input_tokens, b.sessions, b.models, b.first_activity, b.last_activity])).toEqual([
      ['2026-10-05T09:00:00.000Z', 2, 2, ['a', 'b'], '2026-10-05T09:10:00.000Z', '2026-10-05T14:00:00.000Z'],
      ['2026-10-05T14:00:00.000Z', 1, 1, ['a'], '2026-10-05T14:00:00.001Z', '2026-10-05T14:00:00.001Z'],
    ]);
  });
});
