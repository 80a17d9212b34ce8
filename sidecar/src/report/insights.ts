// Where time and money go to waste (issue 35): recurring patterns found in the summaries (the span and event facts,
// schemas/usage.ts), each with what its turns cost, where it happened and what to change. The one place these
// figures are computed: `ccotel report insights` prints them, the web view shows the same JSON. Definitions,
// thresholds and the SQL of each pattern: docs/REPORT.md "Insights".
import type { ClickHouseClient } from '@clickhouse/client';
import { usageTableNames } from '../../../schemas/usage.js';
import { DEFAULTS, INSIGHT_KEYS } from '../config.js';
import type { priceChat } from '../processors/price-chats.js';
import { INSIGHT_PATTERNS, type Insight, type InsightDimension, type InsightFilter, type InsightPattern, type InsightsReport, type InsightThresholds } from './insight-types.js';
import { selectRows } from './select.js';

export { INSIGHT_DIMENSIONS, INSIGHT_PATTERNS, type Insight, type InsightDimension, type InsightFilter, type InsightPattern, type InsightsReport } from './insight-types.js';

/** A fact a pattern found: the rows every insight is summed from. */
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
  /** Tokens and cost of its turn. */
  tokens: number;
  cost: number;
}

const DIMENSION_SQL: Record<InsightDimension, string> = { project: 'project', repo: 'repo', user: 'user' };
const EXAMPLES = 5;

/** Where the patterns read: the facts tables, the condition a fact must meet (the time asked for), the value of --by. */
export interface InsightSource {
  spans: string;
  events: string;
  when: string;
}

interface Context extends InsightSource {
  params: Record<string, unknown>;
  value: string;
  /** The statement's settings. */
  settings: string;
}

/** Span facts of one kind in the time asked for, FINAL (one row per span id), with the columns the patterns read. */
const facts = (c: InsightSource, kind: string, columns: string[] = []) =>
  `(SELECT ${['SessionId', 'TraceId', 'SpanId', 'Timestamp', "toUInt64(greatest(0, dateDiff('millisecond', Timestamp, EndTime))) AS Ms", 'Name', 'Outcome', ...columns].join(', ')}
    FROM ${c.spans} FINAL WHERE Kind = '${kind}' AND ${c.when})`;

/**
 * Each pattern's hits: SessionId, TraceId, Timestamp, Ms, Key, Detail, Amount, After. `tools`, `turns`, `chats` and
 * `compactions` are the facts in the time asked for.
 */
export const INSIGHT_SQL: Record<InsightPattern, string> = {
  retry_loop: `SELECT SessionId, TraceId, Timestamp, Ms, concat(SessionId, ' ', toString(InputKey)) AS Key, Rule AS Detail, 0 AS Amount, 0 AS After
    FROM (SELECT *, count() OVER (PARTITION BY SessionId, InputKey) AS Repeats FROM tools WHERE Outcome = 'error' AND InputKey != 0)
    WHERE Repeats >= {retryMin:UInt32}`,
  // A read is repeated when the same read (file and range) came before it with no change of the file between.
  repeated_read: `SELECT SessionId, TraceId, Timestamp, Ms, concat(SessionId, ' ', toString(FileHash)) AS Key, Name AS Detail, ResultLength AS Amount, 0 AS After FROM (
      SELECT *, row_number() OVER (PARTITION BY SessionId, FileHash, Changes, InputKey ORDER BY Timestamp, SpanId) AS Nth FROM (
        SELECT *, sum(Name != 'Read') OVER (PARTITION BY SessionId, FileHash ORDER BY Timestamp, SpanId ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS Changes
        FROM tools WHERE FileHash != 0 AND Outcome = 'success'))
    WHERE Name = 'Read' AND Nth > 1`,
  not_found: `SELECT SessionId, TraceId, Timestamp, Ms, Name AS Key, Name AS Detail, 0 AS Amount, 0 AS After FROM tools WHERE Outcome = 'error' AND ErrorClass = 'not_found'`,
  permission_friction: `SELECT SessionId, TraceId, Timestamp, WaitedMs AS Ms, Rule AS Key, Rule AS Detail, 0 AS Amount, 0 AS After
    FROM (SELECT *, count() OVER (PARTITION BY Rule) AS Asks FROM tools WHERE Asked = 1 AND Outcome != 'denied') WHERE Asks >= {permissionAsksMin:UInt32}`,
  interrupted_work: `SELECT SessionId, TraceId, Timestamp, Ms, TraceId AS Key, '' AS Detail, 0 AS Amount, 0 AS After FROM turns WHERE Outcome = 'interrupted'`,
  // Tokens after: the context of the session's first response after the compaction.
  compaction_churn: `SELECT e.SessionId AS SessionId, e.TraceId AS TraceId, e.Timestamp AS Timestamp, 0 AS Ms, e.SessionId AS Key, '' AS Detail,
      e.PreTokens AS Amount, c.Context AS After
    FROM (SELECT * FROM (SELECT *, count() OVER (PARTITION BY SessionId) AS Compactions FROM compactions) WHERE Compactions >= {compactionsMin:UInt32}) AS e
    ASOF LEFT JOIN (SELECT SessionId, Timestamp, InputTokens + CacheReadTokens + CacheCreationTokens AS Context FROM chats) AS c
      ON e.SessionId = c.SessionId AND c.Timestamp > e.Timestamp`,
  slow_tools: `SELECT SessionId, TraceId, Timestamp, Ms, Name AS Key, if(WaitedMs > 0, concat(Name, ', ', toString(WaitedMs), ' ms of it waiting on the user'), Name) AS Detail,
    WaitedMs AS Amount, 0 AS After FROM tools WHERE Ms >= {slowToolMs:UInt64}`,
  // The responses of a project and model whose cache reads are less than the threshold's share of their input.
  cache_efficiency: `SELECT SessionId, TraceId, Timestamp, 0 AS Ms, concat(SessionProject, ' ', Name) AS Key, Name AS Detail, InputTokens AS Amount, CacheReadTokens AS After
    FROM (SELECT *, sum(CacheReadTokens) OVER w AS Read, sum(InputTokens + CacheReadTokens + CacheCreationTokens) OVER w AS Input
      FROM chats WINDOW w AS (PARTITION BY SessionProject, Name))
    WHERE Read * 100 < {cacheReadMinPercent:UInt32} * Input`,
};

function contextOf(filter: InsightFilter): Context & { timezone: string } {
  const { spans, events } = usageTableNames(filter.database ?? 'default');
  const timezone = filter.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  const conditions = ['1'];
  if (filter.since) conditions.push('toDate(Timestamp, {tz:String}) >= toDate({since:String})');
  if (filter.until) conditions.push('toDate(Timestamp, {tz:String}) <= toDate({until:String})');
  return {
    spans, events, timezone, when: conditions.join(' AND '),
    params: { tz: timezone, since: filter.since ?? '', until: filter.until ?? '' },
    value: filter.by === undefined ? "''" : `s.${DIMENSION_SQL[filter.by]}`,
    settings: ['enable_materialized_cte = 1', ...(filter.embedded ? ['max_threads = 1', 'max_block_size = 8192'] : [])].join(', '),
  };
}

/**
 * The CTEs every pattern reads: the facts in the time asked for, and each session's place. `materialized`: each read
 * once per statement (the report's one statement reads them for every pattern); the dashboard's SQL inlines them,
 * as a ClickHouse server older than materialized CTEs needs.
 */
function commonSql(c: InsightSource, materialized = false): string {
  const as = materialized ? 'AS MATERIALIZED' : 'AS';
  return `places ${as} (SELECT SessionId, argMinIf(Project, Timestamp, Project != '') AS project, argMaxIf(Repository, Timestamp, Repository != '') AS repo,
             argMaxIf(User, Timestamp, User != '') AS user FROM ${c.spans} GROUP BY SessionId),
  tools ${as} ${facts(c, 'tool', ['InputKey', 'Rule', 'FileHash', 'ErrorClass', 'Asked', 'WaitedMs', 'ResultLength'])},
  turns ${as} ${facts(c, 'turn')},
  chats ${as} (SELECT f.*, p.project AS SessionProject FROM ${facts(c, 'chat', ['InputTokens', 'CacheReadTokens', 'CacheCreationTokens', 'OutputTokens', 'CostUsd'])} AS f LEFT JOIN places AS p USING (SessionId)),
  compactions ${as} (SELECT SessionId, TraceId, Timestamp, PreTokens FROM ${c.events} FINAL WHERE EventName = 'ccotel.compaction.occurred' AND ${c.when})`;
}

/**
 * The tokens and cost of each hit's turn, all its responses. With no days asked for, `chatsRead` (the statement
 * materializes `chats`) has them all already, and every turn's sum costs less than asking which turns the hits name
 * (that IN plans every pattern again); with days, a turn may begin before the first: the hits' turns are read anew.
 */
const usageSql = (c: InsightSource, chatsRead = false) => `usage AS (SELECT TraceId, sum(InputTokens + OutputTokens + CacheReadTokens + CacheCreationTokens) AS Tokens, sum(CostUsd) AS Cost
    FROM ${chatsRead && c.when === '1' ? "chats WHERE TraceId != ''" : `${c.spans} FINAL WHERE Kind = 'chat' AND TraceId != '' AND TraceId IN (SELECT TraceId FROM hits)`} GROUP BY TraceId)`;

/** Every pattern's hits, one UNION ALL: Pattern, SessionId, TraceId, Ms and what `columns` adds. */
const unionOfHits = (columns: string) =>
  INSIGHT_PATTERNS.map((pattern) => `SELECT '${pattern}' AS Pattern, SessionId, TraceId, toUInt64(Ms) AS Ms${columns} FROM (${INSIGHT_SQL[pattern]})`).join('\n  UNION ALL ');

/**
 * Each pattern's count, sessions, turns, time and its turns' tokens and cost in one statement (the dashboard's
 * Insights panel): the patterns' SQL as the report runs it, its thresholds put in by `threshold` (a Grafana variable).
 */
export function insightsSummarySql(source: InsightSource, threshold: (name: keyof InsightThresholds) => string): string {
  return `WITH ${commonSql(source)},
  hits AS (${unionOfHits('')}),
  ${usageSql(source)},
  figures AS (SELECT Pattern, count() AS Count, uniqExact(SessionId) AS Sessions, uniqExactIf(TraceId, TraceId != '') AS Turns, sum(Ms) AS TimeMs FROM hits GROUP BY Pattern),
  spent AS (SELECT Pattern, sum(Tokens) AS Tokens, sum(Cost) AS Cost FROM (SELECT DISTINCT Pattern, TraceId FROM hits WHERE TraceId != '') AS t INNER JOIN usage AS u USING (TraceId) GROUP BY Pattern)
SELECT p.Pattern AS pattern, ifNull(f.Count, 0) AS count, ifNull(f.Sessions, 0) AS sessions, ifNull(f.Turns, 0) AS turns,
  ifNull(s.Tokens, 0) AS tokens, round(ifNull(s.Cost, 0), 9) AS cost_usd, ifNull(f.TimeMs, 0) AS time_ms
FROM (SELECT arrayJoin([${INSIGHT_PATTERNS.map((pattern) => `'${pattern}'`).join(', ')}]) AS Pattern) AS p
LEFT JOIN figures AS f USING (Pattern) LEFT JOIN spent AS s USING (Pattern)
ORDER BY indexOf([${INSIGHT_PATTERNS.map((pattern) => `'${pattern}'`).join(', ')}], pattern)`
    // The query parameters ({retryMin:UInt32}), not a Grafana variable the source names (${host:singlequote}).
    .replace(/(?<!\$)\{(\w+):\w+\}/g, (_, name: string) => threshold(name as keyof InsightThresholds));
}

/** The join that gives rows (aliased `s`) their session's place, for --by; without it, none (each join costs the statement). */
const placeJoin = (c: Context) => (c.value === "''" ? '' : ' LEFT JOIN places AS s USING (SessionId)');

/** Rows of `source` with the value of their session's place. */
const placed = (c: Context, source: string) => `(SELECT f.*, ${c.value} AS value FROM ${source} AS f${placeJoin(c)})`;

/** The breakdowns some patterns show beside their hits: a row per value and what the pattern breaks down by, in `order`. */
const BREAKDOWNS: Partial<Record<InsightPattern, { sql: (c: Context) => string; order: string }>> = {
  not_found: {
    sql: (c) => `SELECT value, Name AS tool, count() AS errors, countIf(ErrorClass = 'not_found') AS not_found
      FROM ${placed(c, 'tools')} WHERE Outcome = 'error' GROUP BY value, tool`,
    order: 'value, not_found DESC, tool',
  },
  permission_friction: {
    sql: (c) => `SELECT value, Source AS source, Name AS tool, count() AS refusals
      FROM ${placed(c, `(SELECT SessionId, Source, Name FROM ${c.events} FINAL WHERE EventName = 'ccotel.permission.blocked' AND ${c.when})`)}
      GROUP BY value, source, tool`,
    order: 'value, refusals DESC, source, tool',
  },
  slow_tools: {
    sql: (c) => `SELECT value, Name AS tool, count() AS calls, quantileExact(0.5)(Ms) AS p50_ms, quantileExact(0.95)(Ms) AS p95_ms, max(Ms) AS max_ms,
        sum(WaitedMs) AS waited_ms
      FROM ${placed(c, 'tools')} GROUP BY value, tool`,
    order: 'value, p95_ms DESC, tool',
  },
  cache_efficiency: {
    sql: (c) => `SELECT value, SessionProject AS project, Name AS model, sum(InputTokens) AS input_tokens, sum(CacheReadTokens) AS cache_read_tokens,
        sum(CacheCreationTokens) AS cache_creation_tokens, toUnixTimestamp64Milli(max(Timestamp)) AS last_ms
      FROM ${placed(c, 'chats')} GROUP BY value, project, model`,
    order: 'value, project, model',
  },
};

type Found = Hit & { pattern: InsightPattern; nth: number; breakdown: string };

/**
 * Everything the report reads, in one statement, so that the facts are read once for all patterns: every hit with
 * its turn's tokens and cost (in time order), then every breakdown row as JSON (`breakdown`, in its `nth` place).
 */
async function findAll(client: ClickHouseClient, c: Context): Promise<Found[]> {
  const breakdowns = Object.entries(BREAKDOWNS).map(([pattern, { sql, order }]) =>
    `SELECT '${pattern}' AS Pattern, toString(value) AS Value, row_number() OVER (ORDER BY ${order}) AS Nth, formatRowNoNewline('JSONEachRow', *) AS Row FROM (${sql(c)})`);
  return selectRows(client,
    `WITH ${commonSql(c, true)},
       hits AS MATERIALIZED (${unionOfHits(', Timestamp, Key, Detail, toUInt64(Amount) AS Amount, toUInt64(After) AS After')}),
       ${usageSql(c, true)}
     SELECT * FROM (
       SELECT h.Pattern AS pattern, ${c.value} AS value, h.SessionId AS session, h.TraceId AS trace, toUnixTimestamp64Milli(h.Timestamp) AS time_ms, h.Ms AS ms,
         h.Key AS key, h.Detail AS detail, h.Amount AS amount, h.After AS after, u.Tokens AS tokens, u.Cost AS cost, 0 AS nth, '' AS breakdown
       FROM hits AS h${placeJoin(c)} LEFT JOIN usage AS u USING (TraceId)
       UNION ALL
       SELECT Pattern, Value, '', '', 0, 0, '', '', 0, 0, 0, 0, Nth, Row FROM (${breakdowns.join('\n         UNION ALL ')}))
     ORDER BY breakdown != '', nth, time_ms, session, trace
     SETTINGS ${c.settings}`, c.params);
}

const round = (usd: number) => Math.round(usd * 1e9) / 1e9;
const percent = (part: number, whole: number) => (whole > 0 ? Math.round((1000 * part) / whole) / 10 : 0);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const usd = (value: number) => `$${value.toFixed(2)}`;
/** "1 loop", "2 loops". */
const counted = (count: number, noun: string) => `${count} ${count === 1 ? noun : `${noun}s`}`;

/** The examples a pattern shows first: the longest calls, the responses with the most uncached input; else the earliest. */
const EXAMPLE_ORDER: Partial<Record<InsightPattern, (a: Hit, b: Hit) => number>> = {
  slow_tools: (a, b) => b.ms - a.ms || a.time_ms - b.time_ms,
  cache_efficiency: (a, b) => b.amount - a.amount || a.time_ms - b.time_ms,
};

/** What a hit's group of a pattern adds up to, without the pattern's own details and suggestion. */
function sums(hits: Hit[], order?: (a: Hit, b: Hit) => number): Omit<Insight, 'pattern' | 'suggestion' | 'details'> {
  const turns = new Map<string, { tokens: number; cost: number }>();
  for (const hit of hits) if (hit.trace !== '') turns.set(hit.trace, { tokens: Number(hit.tokens ?? 0), cost: Number(hit.cost ?? 0) });
  const ordered = order ? [...hits].sort(order) : hits;
  return {
    count: hits.length,
    sessions: new Set(hits.map((hit) => hit.session)).size,
    turns: turns.size,
    tokens: [...turns.values()].reduce((sum, turn) => sum + turn.tokens, 0),
    cost_usd: round([...turns.values()].reduce((sum, turn) => sum + turn.cost, 0)),
    time_ms: hits.reduce((sum, hit) => sum + Number(hit.ms), 0),
    examples: ordered.slice(0, EXAMPLES).map((hit) => ({ session: hit.session, trace: hit.trace, time: new Date(hit.time_ms).toISOString(), ms: Number(hit.ms), detail: hit.detail })),
  };
}

/** Hits by their occurrence key, largest first. */
function byKey(hits: Hit[]): { key: string; hits: Hit[] }[] {
  const groups = new Map<string, Hit[]>();
  for (const hit of hits) {
    const group = groups.get(hit.key);
    if (group === undefined) groups.set(hit.key, [hit]);
    else group.push(hit);
  }
  return [...groups].map(([key, group]) => ({ key, hits: group })).sort((a, b) => b.hits.length - a.hits.length || a.key.localeCompare(b.key));
}

type PriceChat = typeof priceChat;

/** Per token: what a model's input costs, and its cache reads (asked at a size below any long-context tier). */
function cacheRates(price: PriceChat, model: string, atMs: number): { input: number; cacheRead: number } {
  const zero = { input: 0, output: 0, cacheRead: 0, cacheCreation: 0, cacheCreation1h: 0 };
  const per = 1000;
  return {
    input: price(model, { ...zero, input: per }, atMs).usd / per,
    cacheRead: price(model, { ...zero, cacheRead: per }, atMs).usd / per,
  };
}

/** The pattern's own figures and what to change, out of its hits and breakdown rows (of one value). */
function explain(pattern: InsightPattern, hits: Hit[], breakdown: Record<string, unknown>[], t: InsightThresholds, price: PriceChat): { details: Record<string, unknown>; suggestion: string } {
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
          : `${counted(hits.length, 'read')} of ${counted(groups.length, 'file')} already read and unchanged (${chars.toLocaleString('en-US')} characters of results again): point the agent at the part it needs (line ranges), or note the files' gist in CLAUDE.md.`,
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
    case 'interrupted_work': {
      const s = sums(hits);
      return {
        details: {},
        suggestion: hits.length === 0 ? 'No turn was interrupted.'
          : `${counted(hits.length, 'turn')} interrupted after ${usd(s.cost_usd)} and ${seconds(s.time_ms)}: on tasks that go astray, ask for a plan first (plan mode) and state what done looks like.`,
      };
    }
    case 'compaction_churn': {
      const before = hits.reduce((sum, hit) => sum + Number(hit.amount), 0);
      const after = hits.reduce((sum, hit) => sum + Number(hit.after), 0);
      return {
        details: { sessions_churning: groups.length, tokens_before: before, tokens_after: after },
        suggestion: hits.length === 0 ? `No session compacted ${t.compactionsMin} times or more.`
          : `${counted(groups.length, 'session')} compacted ${counted(hits.length, 'time')} (${before.toLocaleString('en-US')} tokens of context down to ${after.toLocaleString('en-US')}): start a fresh session per task (/clear) and keep tool output and CLAUDE.md lean.`,
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
        const rates = cacheRates(price, String(row.model), Number(row.last_ms));
        return {
          project: String(row.project), model: String(row.model), input_tokens: input, cache_read_tokens: read, cache_creation_tokens: write,
          read_share_percent: percent(read, input + read + write),
          saved_usd: round(read * (rates.input - rates.cacheRead)),
          would_save_usd: round(input * (rates.input - rates.cacheRead)),
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

export async function insightsReport(client: ClickHouseClient, filter: InsightFilter = {}, thresholds: InsightThresholds = DEFAULTS.insights): Promise<InsightsReport> {
  const c = contextOf(filter);
  c.params = { ...c.params, ...thresholds };
  // The price table (cache_efficiency's saved and would-save) loads while the store answers: its ~0.1 s of
  // compiling overlaps the query instead of adding to it.
  const pricing = import('../processors/price-chats.js');
  const [found, { priceChat: price }] = await Promise.all([findAll(client, c), pricing]);
  const insights: Insight[] = [];
  for (const pattern of INSIGHT_PATTERNS) {
    const ofPattern = found.filter((row) => row.pattern === pattern);
    const hits = ofPattern.filter((row) => row.breakdown === '');
    const breakdown = ofPattern.filter((row) => row.breakdown !== '').map((row) => JSON.parse(row.breakdown) as Record<string, unknown>);
    // Without --by: every pattern, found or not; with it, each value it was found in (or has figures for).
    const values = filter.by === undefined ? [''] : [...new Set([...hits.map((hit) => hit.value), ...breakdown.map((row) => String(row.value))])].sort();
    for (const value of values) {
      const mine = hits.filter((hit) => hit.value === value);
      const rows = breakdown.filter((row) => String(row.value) === value).map(({ value: _, ...row }) => row);
      insights.push({
        pattern, ...(filter.by === undefined ? {} : { value }), ...sums(mine, EXAMPLE_ORDER[pattern]),
        ...explain(pattern, mine, rows, thresholds, price),
      });
    }
  }
  const named = Object.fromEntries(Object.entries(INSIGHT_KEYS).map(([name, key]) => [key, thresholds[name as keyof InsightThresholds]]));
  return { timezone: c.timezone, thresholds: named, ...(filter.by === undefined ? {} : { by: filter.by }), insights };
}
