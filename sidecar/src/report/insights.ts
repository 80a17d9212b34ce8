// Where time and money go to waste (issue 35): recurring patterns, each with what its turns cost, where it happened and
// what to change, read from the insight slots (schemas/insights.ts: each session's hits, found ahead in its span and
// event facts by retention/insight-slots.ts) with the thresholds applied here. The one place these figures are
// computed: `ccotel report insights` prints them, the web view shows the same JSON. Definitions, thresholds and the
// SQL of each pattern: docs/REPORT.md "Insights".
import type { ClickHouseClient } from '@clickhouse/client';
import { insightTableName } from '../../../schemas/insights.js';
import { DEFAULTS, INSIGHT_KEYS } from '../config.js';
import { HIT_SQL, type HitPattern } from '../retention/insight-slots.js';
import { INSIGHT_PATTERNS, type Insight, type InsightDimension, type InsightFilter, type InsightPattern, type InsightsReport, type InsightThresholds } from './insight-types.js';
import { selectRows } from './select.js';

export { INSIGHT_DIMENSIONS, INSIGHT_PATTERNS, type Insight, type InsightDimension, type InsightFilter, type InsightPattern, type InsightsReport } from './insight-types.js';

/** A hit of a pattern, as the report reads it: its examples and its details are made of these. */
interface Hit {
  value: string;
  session: string;
  trace: string;
  time_ms: number;
  ms: number;
  /** The occurrence it belongs to (a loop, a file, a rule, a session). */
  key: string;
  detail: string;
  amount: number;
  after: number;
}

/** What a pattern adds up to (of one value). */
interface Figures {
  count: number;
  sessions: number;
  turns: number;
  tokens: number;
  cost_usd: number;
  time_ms: number;
}

const DIMENSION_SQL: Record<InsightDimension, string> = { project: 'Project', repo: 'Repo', user: 'User' };
const EXAMPLES = 5;

/** Where the patterns are read: the slots table, the condition a slot must meet (the time asked for), the value of --by. */
export interface InsightSource {
  slots: string;
  when: string;
  /** The value a slot is counted under: '' for none, else a column (--by). */
  value?: string;
}

/**
 * When a hit the refresh kept (retention/insight-slots.ts HIT_SQL) is found, with the thresholds: its session's count
 * of the same failing call or of compactions (Repeats), its length, or (Asks) how often its rule was asked for in the
 * time asked for, of the hits kept by the other conditions (a window over them).
 */
export const HIT_CONDITION: Record<HitPattern, string> = {
  retry_loop: 'Repeats >= {retryMin:UInt32}',
  repeated_read: '1',
  not_found: '1',
  permission_friction: 'Asks >= {permissionAsksMin:UInt32}',
  interrupted_work: '1',
  compaction_churn: 'Repeats >= {compactionsMin:UInt32}',
  slow_tools: 'Ms >= {slowToolMs:UInt64}',
};

/** cache_efficiency: a project and model that read less than the threshold's share of its input from the cache. */
const cacheLow = (read: string, input: string) => `${read} * 100 < {cacheReadMinPercent:UInt32} * ${input}`;
const MODEL_INPUT = 'Models.InputTokens + Models.CacheReadTokens + Models.CacheCreationTokens';
export const CACHE_CONDITION = cacheLow('sum(Models.CacheReadTokens)', `sum(${MODEL_INPUT})`);

const HIT_PATTERNS = Object.keys(HIT_SQL) as HitPattern[];
const conditionsOf = (patterns: HitPattern[]) => `multiIf(${patterns.map((pattern) => `Pattern = '${pattern}', ${HIT_CONDITION[pattern]}`).join(', ')}, 1)`;
const ASKED = HIT_PATTERNS.filter((pattern) => HIT_CONDITION[pattern].includes('Asks'));

/** The hits found (of the slots), with `columns` of `Hits` (as named there) and the others' that `extra` names. */
const foundSql = (columns: string[], extra = '') => `SELECT * FROM (
      SELECT ${extra}${[...new Set(['Pattern', 'Key', 'Ms', 'Repeats', ...columns])].map((column) => `Hits.${column} AS ${column}`).join(', ')},
        count() OVER (PARTITION BY Pattern, Key) AS Asks
      FROM slots ARRAY JOIN Hits WHERE ${conditionsOf(HIT_PATTERNS.filter((pattern) => !ASKED.includes(pattern)))})
    WHERE ${conditionsOf(ASKED)}`;
const listOf = (names: readonly string[]) => `[${names.map((name) => `'${name}'`).join(', ')}]`;

/** The slots in the time asked for, each with the value it is counted under: what every statement reads. */
const slotsSql = (c: InsightSource) => `slots AS (SELECT *, ${c.value ?? "''"} AS value FROM ${c.slots} FINAL WHERE ${c.when})`;

/**
 * Each pattern's count, sessions, turns, time and its turns' tokens and cost in one statement (the dashboard's
 * Insights panel): the report's conditions, its thresholds put in by `threshold` (a Grafana variable).
 */
export function insightsSummarySql(source: InsightSource, threshold: (name: keyof InsightThresholds) => string): string {
  const zero = (column: string) => `ifNull(${column}, 0) AS ${column}`;
  return `WITH ${slotsSql(source)},
  found AS (${foundSql(['TraceId', 'Tokens', 'Cost'], 'SessionId, ')}),
  cached AS (SELECT SessionId, Models.Chats AS Chats, Models.Turns AS Turns FROM slots ARRAY JOIN Models
    WHERE (Project, Models.Name) IN (SELECT Project, Models.Name FROM slots ARRAY JOIN Models GROUP BY Project, Models.Name HAVING ${CACHE_CONDITION})),
  figures AS (SELECT Pattern, count() AS count, uniqExact(SessionId) AS sessions, sum(Ms) AS time_ms FROM found GROUP BY Pattern
    UNION ALL SELECT 'cache_efficiency', sum(Chats), uniqExact(SessionId), 0 FROM cached),
  spent AS (SELECT Pattern, count() AS turns, sum(Tokens) AS tokens, sum(Cost) AS cost_usd FROM (
      SELECT Pattern, TraceId, any(Tokens) AS Tokens, any(Cost) AS Cost FROM (
        SELECT Pattern, TraceId, Tokens, Cost FROM found WHERE TraceId != ''
        UNION ALL SELECT 'cache_efficiency', turn.1, turn.2, turn.3 FROM cached ARRAY JOIN Turns AS turn)
      GROUP BY Pattern, TraceId)
    GROUP BY Pattern)
SELECT p.Pattern AS pattern, ${['count', 'sessions', 'turns', 'tokens'].map(zero).join(', ')}, round(ifNull(cost_usd, 0), 9) AS cost_usd, ${zero('time_ms')}
FROM (SELECT arrayJoin(${listOf(INSIGHT_PATTERNS)}) AS Pattern) AS p LEFT JOIN figures AS f USING (Pattern) LEFT JOIN spent AS s USING (Pattern)
ORDER BY indexOf(${listOf(INSIGHT_PATTERNS)}, pattern)`
    // The query parameters ({retryMin:UInt32}), not a Grafana variable the source names (${host:singlequote}).
    .replace(/(?<!\$)\{(\w+):\w+\}/g, (_, name: string) => threshold(name as keyof InsightThresholds));
}

/**
 * What the report reads, in simple statements (one statement of everything, over the facts, took longer to plan than
 * `report daily` takes to answer): the hits found, in time order; the tool calls, refusals and responses by value and
 * tool, source or project and model (the breakdowns, one statement); then, only if there are any, the responses low on
 * cache reads by slot.
 */
const STATEMENTS = {
  hits: `SELECT Pattern AS pattern, toString(value) AS value, SessionId AS session, TraceId AS trace, toUnixTimestamp64Milli(Time) AS time_ms,
      Ms AS ms, Key AS key, Detail AS detail, Amount AS amount, After AS after, Tokens AS tokens, Cost AS cost
    FROM (${foundSql(['TraceId', 'Time', 'Detail', 'Amount', 'After', 'Tokens', 'Cost'], 'SessionId, value, ')}) ORDER BY time_ms, session, trace`,
  tools: `SELECT toString(value) AS value, Tools.Name AS tool, sum(Tools.Calls) AS calls, sum(Tools.Errors) AS errors, sum(Tools.NotFound) AS not_found,
      quantileExactArray(0.5)(Tools.Durations) AS p50_ms, quantileExactArray(0.95)(Tools.Durations) AS p95_ms, maxArray(Tools.Durations) AS max_ms,
      sum(Tools.WaitedMs) AS waited_ms
    FROM slots ARRAY JOIN Tools GROUP BY value, tool ORDER BY value, tool`,
  refusals: `SELECT toString(value) AS value, Refusals.Source AS source, Refusals.Tool AS tool, sum(Refusals.Count) AS refusals
    FROM slots ARRAY JOIN Refusals GROUP BY value, source, tool ORDER BY value, refusals DESC, source, tool`,
  // `low`: the project and model (of every value) reads less than the threshold's share from the cache.
  models: `SELECT toString(value) AS value, Project AS project, Models.Name AS model, sum(Models.InputTokens) AS input_tokens,
      sum(Models.CacheReadTokens) AS cache_read_tokens, sum(Models.CacheCreationTokens) AS cache_creation_tokens,
      sum(Models.SavedUsd) AS saved_usd, sum(Models.WouldSaveUsd) AS would_save_usd,
      ${cacheLow('sum(sum(Models.CacheReadTokens)) OVER place', `sum(sum(${MODEL_INPUT})) OVER place`)} AS low
    FROM slots ARRAY JOIN Models GROUP BY value, project, model WINDOW place AS (PARTITION BY project, model) ORDER BY value, project, model`,
  // The responses of the projects and models low on cache reads (the models rows that say so).
  cached: `SELECT toString(value) AS value, SessionId AS session, Models.Name AS model, Models.Chats AS chats, arrayMap(t -> (t.1, t.2, t.3), Models.Turns) AS turns,
      arrayMap(e -> (e.TraceId, toUnixTimestamp64Milli(e.Time), e.InputTokens), Models.Examples) AS examples
    FROM slots ARRAY JOIN Models WHERE has(arrayZip({lowProjects:Array(String)}, {lowModels:Array(String)}), (Project, Models.Name))`,
};

type Row = Record<string, unknown> & { value: string };
type HitRow = Hit & { pattern: InsightPattern; tokens: number; cost: number };
interface CachedRow { value: string; session: string; model: string; chats: number; turns: [string, number, number][]; examples: [string, number, number][] }

/** Every statement's rows. */
async function readAll(client: ClickHouseClient, filter: InsightFilter, params: Record<string, unknown>) {
  const conditions = ['1'];
  if (filter.since) conditions.push('toDate(Slot, {tz:String}) >= toDate({since:String})');
  if (filter.until) conditions.push('toDate(Slot, {tz:String}) <= toDate({until:String})');
  const source: InsightSource = { slots: insightTableName(filter.database ?? 'default'), when: conditions.join(' AND '), value: filter.by && DIMENSION_SQL[filter.by] };
  const settings = filter.embedded ? ' SETTINGS max_threads = 1, max_block_size = 8192' : '';
  const read = <T>(sql: string, more: Record<string, unknown> = {}) => selectRows<T>(client, `WITH ${slotsSql(source)} ${sql}${settings}`, { ...params, ...more });
  // The breakdowns in one statement, a row of JSON each: one statement costs less than three.
  const breakdowns = (['tools', 'refusals', 'models'] as const).map((name) => `SELECT '${name}' AS kind, formatRowNoNewline('JSONEachRow', *) AS row FROM (${STATEMENTS[name]})`);
  const [hits, rows] = await Promise.all([read<HitRow>(STATEMENTS.hits), read<{ kind: string; row: string }>(breakdowns.join('\n    UNION ALL '))]);
  const of = <T>(kind: string) => rows.filter((row) => row.kind === kind).map((row) => JSON.parse(row.row) as T);
  const [tools, refusals, models] = [of<Row>('tools'), of<Row>('refusals'), of<Row & { low: number }>('models')];
  // Most histories have no project and model low on cache reads: then there is nothing more to read.
  const low = models.filter((row) => Number(row.low) === 1);
  const cached = low.length === 0 ? [] : await read<CachedRow>(STATEMENTS.cached, { lowProjects: low.map((row) => row.project), lowModels: low.map((row) => row.model) });
  return { hits, tools, refusals, models: models.map(({ low: _, ...row }) => row), cached };
}

/** Figures out of what was counted, the sessions it was in and its turns (trace, tokens, cost; '' for none). */
function figuresOf(count: number, sessions: string[], turns: [string, number, number][], timeMs: number): Figures {
  const spent = new Map(turns.filter(([trace]) => trace !== '').map(([trace, tokens, cost]) => [trace, { tokens: Number(tokens), cost: Number(cost) }]));
  return {
    count,
    sessions: new Set(sessions).size,
    turns: spent.size,
    tokens: [...spent.values()].reduce((sum, turn) => sum + turn.tokens, 0),
    cost_usd: round([...spent.values()].reduce((sum, turn) => sum + turn.cost, 0)),
    time_ms: timeMs,
  };
}

const round = (usd: number) => Math.round(usd * 1e9) / 1e9;
const percent = (part: number, whole: number) => (whole > 0 ? Math.round((1000 * part) / whole) / 10 : 0);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const usd = (value: number) => `$${value.toFixed(2)}`;
/** Strings in byte order, as ClickHouse sorts them (localeCompare's first use costs ~5 ms of ICU). */
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** 1234567 → "1,234,567", as en-US writes a whole number (without Intl, whose first use costs ~10 ms). */
const thousands = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
/** "1 loop", "2 loops". */
const counted = (count: number, noun: string) => `${count} ${count === 1 ? noun : `${noun}s`}`;

/** The examples a pattern shows first: the longest calls, the responses with the most uncached input; else the earliest. */
const EXAMPLE_ORDER: Partial<Record<InsightPattern, (a: Hit, b: Hit) => number>> = {
  slow_tools: (a, b) => b.ms - a.ms || a.time_ms - b.time_ms,
  cache_efficiency: (a, b) => b.amount - a.amount || a.time_ms - b.time_ms,
};

/** A pattern's first examples: the hits in their order (or `order`'s). */
const examplesOf = (hits: Hit[], order?: (a: Hit, b: Hit) => number) =>
  (order ? [...hits].sort(order) : hits).slice(0, EXAMPLES)
    .map((hit) => ({ session: hit.session, trace: hit.trace, time: new Date(hit.time_ms).toISOString(), ms: Number(hit.ms), detail: hit.detail }));

function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [item]);
    else group.push(item);
  }
  return groups;
}

/** Hits by their occurrence key, largest first. */
function byKey(hits: Hit[]): { key: string; hits: Hit[] }[] {
  return [...groupBy(hits, (hit) => hit.key)].map(([key, group]) => ({ key, hits: group })).sort((a, b) => b.hits.length - a.hits.length || byText(a.key, b.key));
}

/** The pattern's own figures and what to change, out of its hits and breakdown rows (of one value). */
function explain(pattern: InsightPattern, figures: Figures, hits: Hit[], breakdown: Record<string, unknown>[], t: InsightThresholds): { details: Record<string, unknown>; suggestion: string } {
  const groups = byKey(hits);
  switch (pattern) {
    case 'retry_loop': {
      const loops = groups.map((g) => ({ session: g.hits[0].session, call: g.hits[0].detail, calls: g.hits.length }));
      const top = loops[0];
      return {
        details: { loops: loops.length, largest: loops.slice(0, EXAMPLES) },
        suggestion: top === undefined ? `No call failed the same way ${t.retryMin} times in a session.`
          : `${counted(loops.length, 'loop')} of the same failing call (up to ${top.calls}×, e.g. ${top.call}): say in CLAUDE.md what to do when it fails, or fix what it needs, so the agent stops re-running it unchanged.`,
      };
    }
    case 'repeated_read': {
      const chars = hits.reduce((sum, hit) => sum + Number(hit.amount), 0);
      return {
        details: { files: groups.length, result_chars: chars, result_tokens_estimate: Math.ceil(chars / 4) },
        suggestion: hits.length === 0 ? 'No file was read again unchanged.'
          : `${counted(hits.length, 'read')} of ${counted(groups.length, 'file')} already read and unchanged (${thousands(chars)} characters of results again): point the agent at the part it needs (line ranges), or note the files' gist in CLAUDE.md.`,
      };
    }
    case 'not_found': {
      const tools = breakdown.map((row) => ({ tool: String(row.tool), errors: Number(row.errors), not_found: Number(row.not_found), share_percent: percent(Number(row.not_found), Number(row.errors)) }));
      const errors = tools.reduce((sum, row) => sum + row.errors, 0);
      const worst = tools.find((row) => row.not_found > 0);
      return {
        details: { errors, share_percent: percent(hits.length, errors), by_tool: tools },
        suggestion: worst === undefined ? 'No tool error was a missing file, path or command.'
          : `${percent(hits.length, errors)}% of tool errors are missing files, paths or commands (most in ${worst.tool}): describe the project's layout and its commands in CLAUDE.md.`,
      };
    }
    case 'permission_friction': {
      const rules = groups.map((g) => ({ rule: g.key, asks: g.hits.length, sessions: new Set(g.hits.map((hit) => hit.session)).size, waited_ms: g.hits.reduce((sum, hit) => sum + Number(hit.ms), 0) }));
      const refusals = breakdown.map((row) => ({ source: String(row.source), tool: String(row.tool), refusals: Number(row.refusals) }));
      return {
        details: { rules, refusals },
        suggestion: rules.length === 0 ? `No call was asked for and allowed ${t.permissionAsksMin} times or more.`
          : `Add to "permissions": { "allow": [...] } in .claude/settings.json: ${rules.map((rule) => JSON.stringify(rule.rule)).join(', ')} (asked ${counted(hits.length, 'time')}, allowed every time).`,
      };
    }
    case 'interrupted_work':
      return {
        details: {},
        suggestion: figures.count === 0 ? 'No turn was interrupted.'
          : `${counted(figures.count, 'turn')} interrupted after ${usd(figures.cost_usd)} and ${seconds(figures.time_ms)}: on tasks that go astray, ask for a plan first (plan mode) and state what done looks like.`,
      };
    case 'compaction_churn': {
      const before = hits.reduce((sum, hit) => sum + Number(hit.amount), 0);
      const after = hits.reduce((sum, hit) => sum + Number(hit.after), 0);
      return {
        details: { sessions_churning: groups.length, tokens_before: before, tokens_after: after },
        suggestion: hits.length === 0 ? `No session compacted ${t.compactionsMin} times or more.`
          : `${counted(groups.length, 'session')} compacted ${counted(hits.length, 'time')} (${thousands(before)} tokens of context down to ${thousands(after)}): start a fresh session per task (/clear) and keep tool output and CLAUDE.md lean.`,
      };
    }
    case 'slow_tools': {
      const tools = breakdown.map((row) => ({ tool: String(row.tool), calls: Number(row.calls), p50_ms: Number(row.p50_ms), p95_ms: Number(row.p95_ms), max_ms: Number(row.max_ms), waited_ms: Number(row.waited_ms) }));
      const waited = hits.reduce((sum, hit) => sum + Number(hit.amount), 0);
      const worst = tools[0];
      return {
        details: { by_tool: tools, waited_on_user_ms: waited },
        suggestion: hits.length === 0 ? `No tool call took ${seconds(t.slowToolMs)} or longer.`
          : `${counted(hits.length, 'call')} took ${seconds(t.slowToolMs)} or longer (${worst.tool}: p95 ${seconds(worst.p95_ms)}): run long commands in the background or with a timeout, and allow what the user waits to approve.`,
      };
    }
    case 'cache_efficiency': {
      const rows = breakdown.map((row) => {
        const [input, read, write] = [Number(row.input_tokens), Number(row.cache_read_tokens), Number(row.cache_creation_tokens)];
        return {
          project: String(row.project), model: String(row.model), input_tokens: input, cache_read_tokens: read, cache_creation_tokens: write,
          read_share_percent: percent(read, input + read + write),
          saved_usd: round(Number(row.saved_usd)),
          would_save_usd: round(Number(row.would_save_usd)),
        };
      });
      const low = rows.filter((row) => row.read_share_percent < t.cacheReadMinPercent && row.input_tokens + row.cache_read_tokens + row.cache_creation_tokens > 0);
      return {
        details: { by_project_model: rows },
        suggestion: low.length === 0 ? `Every project and model reads ${t.cacheReadMinPercent}% or more of its input from the cache.`
          : `${low.map((row) => `${row.project || '(none)'} ${row.model}: ${row.read_share_percent}%`).join('; ')} of input read from the cache: keep the prompt's start (CLAUDE.md, tools, MCP servers) stable within a session; a session resumed after the cache expired writes it again.`,
      };
    }
  }
}

/** The error of a store that has no insight slots (a server made before them, asked by a reader). */
export const missingSlots = (error: unknown): boolean => /\bUnknown table\b[^\n]*\bccotel_insight_slots\b/i.test(String((error as Error)?.message));

export async function insightsReport(client: ClickHouseClient, filter: InsightFilter = {}, thresholds: InsightThresholds = DEFAULTS.insights): Promise<InsightsReport> {
  const timezone = filter.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  const params = { tz: timezone, since: filter.since ?? '', until: filter.until ?? '', ...thresholds };
  const rows = await readAll(client, filter, params);
  const breakdowns: Partial<Record<InsightPattern, Row[]>> = {
    not_found: rows.tools.filter((row) => Number(row.errors) > 0).sort((a, b) => Number(b.not_found) - Number(a.not_found) || byText(String(a.tool), String(b.tool))),
    permission_friction: rows.refusals,
    slow_tools: [...rows.tools].sort((a, b) => Number(b.p95_ms) - Number(a.p95_ms) || byText(String(a.tool), String(b.tool))),
    cache_efficiency: rows.models,
  };
  const hitsOf = groupBy(rows.hits, (hit) => `${hit.pattern}\0${hit.value}`);
  const cachedOf = groupBy(rows.cached, (row) => row.value);
  // Without --by: every pattern, found or not; with it, each value it was found in (or has figures for).
  const values = filter.by === undefined ? [''] : [...new Set([...rows.hits, ...rows.cached, ...rows.tools, ...rows.refusals, ...rows.models].map((row) => row.value))].sort(byText);
  const insights: Insight[] = [];
  for (const pattern of INSIGHT_PATTERNS) {
    const breakdownOf = groupBy(breakdowns[pattern] ?? [], (row) => row.value);
    for (const value of values) {
      const breakdown = (breakdownOf.get(value) ?? []).map(({ value: _, ...row }) => row);
      let figures: Figures;
      let hits: Hit[];
      if (pattern === 'cache_efficiency') {
        const cached = cachedOf.get(value) ?? [];
        figures = figuresOf(cached.reduce((sum, row) => sum + row.chats, 0), cached.map((row) => row.session), cached.flatMap((row) => row.turns), 0);
        hits = cached.flatMap((row) => row.examples.map(([trace, time, input]) => ({ value, session: row.session, trace, time_ms: time, ms: 0, key: row.model, detail: row.model, amount: input, after: 0 })));
      } else {
        hits = hitsOf.get(`${pattern}\0${value}`) ?? [];
        const found = hits as HitRow[];
        figures = figuresOf(found.length, found.map((hit) => hit.session), found.map((hit) => [hit.trace, hit.tokens, hit.cost]), found.reduce((sum, hit) => sum + hit.ms, 0));
      }
      if (filter.by !== undefined && figures.count === 0 && breakdown.length === 0) continue;
      insights.push({
        pattern, ...(filter.by === undefined ? {} : { value }), ...figures, examples: examplesOf(hits, EXAMPLE_ORDER[pattern]),
        ...explain(pattern, figures, hits, breakdown, thresholds),
      });
    }
  }
  const named = Object.fromEntries(Object.entries(INSIGHT_KEYS).map(([name, key]) => [key, thresholds[name as keyof InsightThresholds]]));
  return { timezone, thresholds: named, ...(filter.by === undefined ? {} : { by: filter.by }), insights };
}
