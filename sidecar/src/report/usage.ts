// Usage and cost by day, week, month, session and 5-hour billing block: the views ccusage made familiar,
// answered from the summaries kept at insert (schemas/usage.ts), so every period the summaries hold is
// there, also when the raw tables no longer hold it. The one place these figures are computed: `ccotel
// report <period>` prints them and the web UI shows the same JSON. Field names are stable (docs/REPORT.md).
import type { ClickHouseClient } from '@clickhouse/client';
import { SESSION_AGENT, usageTableNames } from '../../../schemas/usage.js';
import { DEFAULT_AGENT } from '../semconv.js';
import { billingBlocks, HOUR_MS, type HourUsage } from './blocks.js';
import { selectRows } from './select.js';
import { addTokens, emptyTokens, type ModelFigures, type TokenFigures, type UsageRow } from './tokens.js';
import { USAGE_DIMENSIONS, type UsageDimension, type UsagePeriod } from './usage-options.js';

export { isUsageDimension, USAGE_DIMENSIONS, USAGE_PERIODS, type UsageDimension, type UsagePeriod } from './usage-options.js';

const DIMENSION_SQL: Record<(typeof USAGE_DIMENSIONS)[number], string> = {
  host: 'Host', user: 'User', repo: 'Repository', branch: 'Branch', ticket: 'Ticket', team: `Resource['team']`, project: 'Project',
};

function dimensionSql(by: UsageDimension): string {
  return by.startsWith('resource.') ? 'Resource[{byKey:String}]' : DIMENSION_SQL[by as keyof typeof DIMENSION_SQL];
}

export interface UsageFilter {
  /** First local day included, YYYY-MM-DD. */
  since?: string;
  /** Last local day included, YYYY-MM-DD. */
  until?: string;
  /** Sessions whose working directory contains this text. */
  project?: string;
  /** Only this model. */
  model?: string;
  /** Only the sessions of this agent (`claude-code`, `codex`). */
  agent?: string;
  /** Only these sessions. */
  sessionIds?: string[];
  /** Usage whose repository (vcs.repository.url.full) contains this text. */
  repo?: string;
  /** Only usage on this branch, host, OS user. */
  branch?: string;
  host?: string;
  user?: string;
  /** Figures by this too: a row per period and value (`by` names the value's field: `repo`, `branch`, …). */
  by?: UsageDimension;
  /** IANA time zone the days are counted in; default the machine's. */
  timezone?: string;
  database?: string;
}

export interface UsageReport {
  period: UsagePeriod;
  timezone: string;
  rows: UsageRow[];
  totals: TokenFigures & { sessions: number };
  /** Models the price table does not know: their cost is Claude Code's own figure where it stated one, else 0. */
  unknown_models: string[];
  /** Sessions: the totals of each agent's sessions. */
  agents?: Record<string, TokenFigures & { sessions: number }>;
}

/**
 * One row per chat, plus, for models without a price, Claude Code's own cost of them in that session. Only
 * the sums need FINAL (one row per span id); max, argMin and argMax give the same answer over repeats of a row,
 * so those reads skip its merge.
 */
/** Where a usage item came from: its chat's host, user, repository, branch, ticket and resource attributes. */
const ATTRIBUTION_COLUMNS = ['Host', 'User', 'Repository', 'Branch', 'Ticket', 'Resource'];
const ATTRIBUTION = ATTRIBUTION_COLUMNS.join(', ');
const ATTRIBUTION_OF = (table: string) => ATTRIBUTION_COLUMNS.map((column) => `${table}.${column}`).join(', ');
/** An unpriced model's own cost is counted where its last chat of the session was. */
const LAST_ATTRIBUTION = ATTRIBUTION_COLUMNS.map((column) => `argMax(${column}, Timestamp) AS ${column}`).join(', ');

function itemsSql(database: string, withProject: boolean): string {
  const { spans } = usageTableNames(database);
  // The session's project and agent are a join over every span fact: only asked for when shown or filtered on.
  const project = withProject
    ? {
        table: `,\n  projects AS (SELECT SessionId, argMinIf(Project, Timestamp, Project != '') AS Project,
                   ${SESSION_AGENT} AS Agent
                   FROM ${spans} GROUP BY SessionId)`,
        column: ', p.Project AS Project, p.Agent AS Agent',
        join: ' LEFT JOIN projects AS p USING (SessionId)',
      }
    : { table: '', column: '', join: '' };
  return `
WITH
  chats AS (SELECT SessionId, Timestamp, Name AS Model, InputTokens, OutputTokens, CacheReadTokens, CacheCreationTokens,
                   CostUsd, UnknownModel, ${ATTRIBUTION} FROM ${spans} FINAL WHERE Kind = 'chat'),
  ${unpricedSql(database)}${project.table}
SELECT i.*${project.column} FROM (
  SELECT SessionId, Timestamp, Model, InputTokens, OutputTokens, CacheReadTokens, CacheCreationTokens, CostUsd, UnknownModel, ${ATTRIBUTION} FROM chats
  UNION ALL
  SELECT u.SessionId, u.Timestamp, u.Model, 0, 0, 0, 0, r.ByModel[u.Model], 1, ${ATTRIBUTION_OF('u')} FROM unpriced AS u INNER JOIN reported AS r USING (SessionId)
) AS i${project.join}`;
}

/**
 * The CTEs `reported` (Claude Code's latest cost by model, per session) and `unpriced` (each session's models
 * without a price, at the time of their last chat): the items of those models cost what Claude Code said.
 */
function unpricedSql(database: string): string {
  const { spans, events } = usageTableNames(database);
  return `reported AS (SELECT SessionId, argMax(ReportedCostByModel, ReportedCostUsd) AS ByModel FROM ${events}
               WHERE EventName = 'ccotel.cost.reported' GROUP BY SessionId),
  unpriced AS (SELECT SessionId, Model, LastTime AS Timestamp, ${ATTRIBUTION} FROM (
               SELECT SessionId, Name AS Model, max(Timestamp) AS LastTime, ${LAST_ATTRIBUTION} FROM ${spans}
               WHERE Kind = 'chat' AND UnknownModel = 1 GROUP BY SessionId, Model))`;
}

const PERIOD_KEY: Record<Exclude<UsagePeriod, 'blocks'>, string> = {
  daily: `toString(toDate(Timestamp, {tz:String}))`,
  // Weeks start on Monday, as ccusage counts them.
  weekly: `toString(toStartOfWeek(Timestamp, 1, {tz:String}))`,
  monthly: `formatDateTime(Timestamp, '%Y-%m', {tz:String})`,
  session: `SessionId`,
  all: `'all'`,
};

function filterSql(filter: UsageFilter): string {
  const conditions = ['1'];
  if (filter.since) conditions.push(`toDate(Timestamp, {tz:String}) >= toDate({since:String})`);
  if (filter.until) conditions.push(`toDate(Timestamp, {tz:String}) <= toDate({until:String})`);
  if (filter.project) conditions.push(`position(Project, {project:String}) > 0`);
  if (filter.model) conditions.push(`Model = {model:String}`);
  if (filter.agent) conditions.push(`Agent = {agent:String}`);
  if (filter.sessionIds) conditions.push(`SessionId IN {sessions:Array(String)}`);
  if (filter.repo) conditions.push(`position(Repository, {repo:String}) > 0`);
  if (filter.branch) conditions.push(`Branch = {branch:String}`);
  if (filter.host) conditions.push(`Host = {host:String}`);
  if (filter.user) conditions.push(`User = {user:String}`);
  return conditions.join(' AND ');
}

interface GroupRow {
  period: string;
  model: string;
  sessions: string[];
  input_tokens: number;
  output_tokens: number;
  cache_creation_tokens: number;
  cache_read_tokens: number;
  cost_usd: number;
  unknown: number;
  first_ms: number;
  last_ms: number;
  /** Sessions only. */
  project?: string;
  /** The dimension's value, when broken down by one. */
  value?: string;
  agent?: string;
}

const TOKEN_SUMS = `sum(InputTokens) AS input_tokens, sum(OutputTokens) AS output_tokens,
  sum(CacheCreationTokens) AS cache_creation_tokens, sum(CacheReadTokens) AS cache_read_tokens, sum(CostUsd) AS cost_usd,
  max(UnknownModel) AS unknown, toUnixTimestamp64Milli(min(Timestamp)) AS first_ms, toUnixTimestamp64Milli(max(Timestamp)) AS last_ms`;

const iso = (ms: number): string => new Date(ms).toISOString();

/** The usage items `filter` selects, and the query parameters their SQL takes. */
/** The query parameters filterSql's conditions read, and the time zone days are counted in. */
function filterParams(filter: UsageFilter): { params: Record<string, unknown>; timezone: string } {
  const timezone = filter.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  const given = { project: filter.project, model: filter.model, agent: filter.agent, repo: filter.repo, branch: filter.branch, host: filter.host, user: filter.user };
  const text = Object.fromEntries(Object.entries(given).map(([key, value]) => [key, value ?? '']));
  const byKey = filter.by?.startsWith('resource.') ? filter.by.slice('resource.'.length) : '';
  return { params: { tz: timezone, since: filter.since ?? '', until: filter.until ?? '', ...text, sessions: filter.sessionIds ?? [], byKey }, timezone };
}

function filteredItems(filter: UsageFilter, withProject: boolean): { items: string; params: Record<string, unknown>; timezone: string } {
  const project = withProject || filter.project !== undefined || filter.agent !== undefined || filter.by === 'project';
  return { items: `(${itemsSql(filter.database ?? 'default', project)}) WHERE ${filterSql(filter)}`, ...filterParams(filter) };
}

export async function usageReport(client: ClickHouseClient, period: UsagePeriod, filter: UsageFilter = {}): Promise<UsageReport> {
  const { items, params, timezone } = filteredItems(filter, period === 'session');
  // One query per report: the totals' sessions and the unpriced models come out of the same rows.
  let rows: UsageRow[];
  let slices: { sessions: string[]; model: string; unknown: number }[];
  if (period === 'blocks') {
    // Summed by hour in the store (blocks.ts): the blocks are made of those sums, not of every API response.
    const groups = await selectRows<HourUsage & { unknown: number }>(client,
      `SELECT intDiv(time_ms, ${HOUR_MS}) AS hour, time_ms % ${HOUR_MS} = 0 AS on_hour, Model AS model, groupUniqArray(SessionId) AS sessions, ${TOKEN_SUMS}
       FROM (SELECT *, toUnixTimestamp64Milli(Timestamp) AS time_ms FROM ${items}) GROUP BY hour, on_hour, model ORDER BY hour, on_hour DESC, model`, params);
    rows = billingBlocks(groups, Date.now());
    slices = groups;
  } else {
    const project = period === 'session' ? `, argMinIf(Project, Timestamp, Project != '') AS project, any(Agent) AS agent` : '';
    // Broken down by a dimension: a group per period and value ('' where the usage names none).
    const value = filter.by === undefined ? '' : ` ${dimensionSql(filter.by)} AS value,`;
    const keys = filter.by === undefined ? 'period, model' : 'period, value, model';
    const groups = await selectRows<GroupRow>(client,
      `SELECT ${PERIOD_KEY[period]} AS period,${value} Model AS model, groupUniqArray(SessionId) AS sessions, ${TOKEN_SUMS}${project}
       FROM ${items} GROUP BY ${keys} ORDER BY ${keys}`, params);
    rows = groupRows(groups, filter.by);
    slices = groups;
    if (period === 'session') await addReportedCost(client, rows, filter.database ?? 'default');
  }
  const totals = { ...emptyTokens(), sessions: new Set(slices.flatMap((slice) => slice.sessions)).size };
  for (const row of rows) addTokens(totals, row);
  const unknownModels = [...new Set(slices.filter((slice) => Number(slice.unknown) === 1).map((slice) => slice.model))].sort();
  return { period, timezone, rows, totals, unknown_models: unknownModels, ...(period === 'session' ? { agents: agentTotals(rows) } : {}) };
}

function agentTotals(rows: UsageRow[]): Record<string, TokenFigures & { sessions: number }> {
  const agents: Record<string, TokenFigures & { sessions: number }> = {};
  for (const row of rows) {
    const agent = (agents[row.agent ?? DEFAULT_AGENT] ??= { ...emptyTokens(), sessions: 0 });
    agent.sessions++;
    addTokens(agent, row);
  }
  return agents;
}

export interface ProjectUsage {
  project: string;
  sessions: number;
  /** total_tokens of its sessions. */
  tokens: number;
  cost_usd: number;
}

/** A session's usage where it was: its project and the repository of its latest span that names one ('' : none). */
export interface PlaceUsage extends ProjectUsage {
  repository: string;
}

/**
 * `usageReport(…, 'session')`'s rows summed by project (a session's project is its first cwd) and repository (its
 * last), in SQL: the same figures without a row per session and model leaving the store. Unordered. One read with
 * FINAL of the span facts gives each session's place and its chats' sums together (the items' join of a project to
 * every chat read them twice); the unpriced models' own cost is added per session.
 */
export async function usageByPlace(client: ClickHouseClient, filter: UsageFilter = {}): Promise<PlaceUsage[]> {
  const database = filter.database ?? 'default';
  const { spans } = usageTableNames(database);
  const { params } = filterParams(filter);
  // The item filters but the project's apply to each chat (as to each item); the project's to the session.
  const itemFilter = filterSql({ ...filter, project: undefined });
  const chat = `Kind = 'chat' AND ${itemFilter}`;
  const places = await selectRows<PlaceUsage>(client,
    `WITH ${unpricedSql(database)},
       unpricedCost AS (SELECT SessionId, sum(r.ByModel[u.Model]) AS Cost FROM unpriced AS u INNER JOIN reported AS r USING (SessionId)
                        WHERE ${itemFilter} GROUP BY SessionId)
     SELECT Project AS project, Repository AS repository, count() AS sessions, sum(Tokens) AS tokens, sum(s.Cost + u.Cost) AS cost_usd FROM (
       SELECT SessionId, argMinIf(Project, Timestamp, Project != '') AS Project,
         argMaxIf(Repository, Timestamp, Repository != '') AS Repository, sumIf(CostUsd, ${chat}) AS Cost,
         sumIf(InputTokens + OutputTokens + CacheReadTokens + CacheCreationTokens, ${chat}) AS Tokens
       FROM (SELECT *, Name AS Model FROM ${spans} FINAL) GROUP BY SessionId HAVING countIf(${chat}) > 0
     ) AS s LEFT JOIN unpricedCost AS u USING (SessionId)
     WHERE ${filterSql({ project: filter.project })} GROUP BY project, repository`, params);
  return places.map((row) => ({ ...row, cost_usd: roundUsd(row.cost_usd) }));
}

/** Rounded as addTokens rounds the per-session sums. */
const roundUsd = (usd: number) => Math.round(usd * 1e9) / 1e9;

/** Usage of `places` summed by project, or by repository: each session is in one place, so the sums are exact. */
export function usageSummedBy<K extends 'project' | 'repository'>(places: readonly PlaceUsage[], key: K): (Pick<PlaceUsage, K | 'sessions' | 'tokens' | 'cost_usd'>)[] {
  const sums = new Map<string, Pick<PlaceUsage, K | 'sessions' | 'tokens' | 'cost_usd'>>();
  for (const place of places) {
    const sum = sums.get(place[key]) ?? ({ [key]: place[key], sessions: 0, tokens: 0, cost_usd: 0 } as Pick<PlaceUsage, K | 'sessions' | 'tokens' | 'cost_usd'>);
    sums.set(place[key], { ...sum, sessions: sum.sessions + Number(place.sessions), tokens: sum.tokens + Number(place.tokens), cost_usd: roundUsd(sum.cost_usd + place.cost_usd) });
  }
  return [...sums.values()];
}

/** `usageByPlace` by project. Unordered. */
export async function usageByProject(client: ClickHouseClient, filter: UsageFilter = {}): Promise<ProjectUsage[]> {
  return usageSummedBy(await usageByPlace(client, filter), 'project');
}

/** Chats of one model on one UTC day, summed (the report's span groups, `model_day`). */
export interface ChatDay {
  day: number;
  name: string;
  input: number;
  output: number;
  cache_read: number;
  cache_creation: number;
  /** Not rounded. */
  cost: number;
}

/** Claude Code's own cost of the models without a price, by UTC day and model (the items usageReport adds). */
export function unpricedByDay(client: ClickHouseClient, database = 'default'): Promise<{ period: string; model: string; cost_usd: number }[]> {
  return selectRows(client,
    `WITH ${unpricedSql(database)}
     SELECT toString(toDate(u.Timestamp, 'UTC')) AS period, u.Model AS model, sum(r.ByModel[u.Model]) AS cost_usd
     FROM unpriced AS u INNER JOIN reported AS r USING (SessionId) GROUP BY period, model`);
}

/**
 * Tokens and cost per UTC day, as `usageReport(…, 'daily', { timezone: 'UTC' })` adds them up, out of the
 * chats' sums by model and day a read of the span facts made already, and `unpriced` (unpricedByDay): the
 * daily figures without reading the facts with FINAL again.
 */
export function dailyFromChatDays(chatDays: ChatDay[], unpriced: Awaited<ReturnType<typeof unpricedByDay>>): (TokenFigures & { period: string })[] {
  // Keyed by day, then model: the keys' order is usageReport's (days have one length).
  const groups = new Map<string, TokenFigures & { period: string }>();
  const group = (period: string, model: string) => {
    const key = `${period}\n${model}`;
    if (!groups.has(key)) groups.set(key, { period, ...emptyTokens() });
    return groups.get(key)!;
  };
  for (const chats of chatDays) {
    Object.assign(group(new Date(chats.day * 1000).toISOString().slice(0, 10), chats.name), {
      input_tokens: chats.input, output_tokens: chats.output, cache_read_tokens: chats.cache_read, cache_creation_tokens: chats.cache_creation, cost_usd: chats.cost,
    });
  }
  for (const item of unpriced) group(item.period, item.model).cost_usd += item.cost_usd;
  const days = new Map<string, TokenFigures & { period: string }>();
  for (const key of [...groups.keys()].sort()) {
    const figures = groups.get(key)!;
    if (!days.has(figures.period)) days.set(figures.period, { period: figures.period, ...emptyTokens() });
    addTokens(days.get(figures.period)!, figures);
  }
  return [...days.values()];
}

function groupRows(groups: GroupRow[], by: UsageDimension | undefined): UsageRow[] {
  const byPeriod = new Map<string, { row: UsageRow; sessions: Set<string> }>();
  for (const g of groups) {
    const key = by === undefined ? g.period : `${g.period}\n${g.value}`;
    let entry = byPeriod.get(key);
    if (!entry) {
      const dimension = by === undefined ? {} : { [by]: g.value ?? '' };
      entry = {
        row: { period: g.period, ...dimension, sessions: 0, models: [], breakdown: [], ...emptyTokens(), first_activity: iso(g.first_ms), last_activity: iso(g.last_ms) },
        sessions: new Set(),
      };
      byPeriod.set(key, entry);
    }
    const { row } = entry;
    const figures: ModelFigures = { model: g.model, ...emptyTokens() };
    addTokens(figures, g);
    row.breakdown.push(figures);
    row.models.push(g.model);
    addTokens(row, g);
    for (const session of g.sessions) entry.sessions.add(session);
    row.sessions = entry.sessions.size;
    if (g.project && !row.project) row.project = g.project;
    if (g.agent) row.agent = g.agent;
    if (g.first_ms < Date.parse(row.first_activity)) row.first_activity = iso(g.first_ms);
    if (g.last_ms > Date.parse(row.last_activity)) row.last_activity = iso(g.last_ms);
  }
  return [...byPeriod.values()].map((entry) => entry.row);
}

async function addReportedCost(client: ClickHouseClient, rows: UsageRow[], database: string): Promise<void> {
  const { events } = usageTableNames(database);
  const reported = await selectRows<{ session: string; usd: number }>(client,
    // Every session's (max needs no FINAL); those without a row are left out below.
    `SELECT SessionId AS session, max(ReportedCostUsd) AS usd FROM ${events}
     WHERE EventName = 'ccotel.cost.reported' GROUP BY session`);
  const bySession = new Map(reported.map((r) => [r.session, r.usd]));
  for (const row of rows) {
    row.project ??= '';
    row.reported_cost_usd = bySession.get(row.period) ?? null;
  }
}
