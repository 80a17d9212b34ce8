// The web view's data: the report module's figures (`buildReport`, exactly what `ccotel report --json`
// prints) plus the per-day, per-session and per-span views of ui/queries.ts, all for one time range.
import type { ClickHouseClient } from '@clickhouse/client';
import { buildReport } from '../commands/report.js';
import { FAILURES, LOGS_PER_DAY, SESSION_LOGS, SESSION_SPAN_LIMIT, SESSION_SPANS, SESSIONS, SPANS_PER_DAY } from './queries.js';
import type { DaySeries, FailureRow, LogRow, Overview, ProjectRow, SessionDetail, SessionRow, SpanRow, TimeRange } from './types.js';

const RAW_TABLES = ['otel_traces', 'otel_logs'];

/**
 * `client`, with every read of the raw tables limited to `range` (ClickHouse's `additional_table_filters`):
 * the report's own SQL answers for a time range without a second copy of it. The setting goes into the
 * statement's SETTINGS clause, not `clickhouse_settings`: the embedded store turns those into `SET`s that
 * would stay on its one session and filter every later query.
 */
export function withRange(client: ClickHouseClient, range: TimeRange): ClickHouseClient {
  const conditions = [
    range.fromMs === undefined ? '' : `Timestamp >= fromUnixTimestamp64Milli(${Math.trunc(range.fromMs)})`,
    range.toMs === undefined ? '' : `Timestamp < fromUnixTimestamp64Milli(${Math.trunc(range.toMs)})`,
  ].filter(Boolean);
  if (conditions.length === 0) return client;
  const filter = conditions.join(' AND ');
  const settings = `SETTINGS additional_table_filters = {${RAW_TABLES.map((table) => `'${table}': '${filter}'`).join(', ')}}`;
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property !== 'query') return Reflect.get(target, property, receiver);
      return (params: Parameters<ClickHouseClient['query']>[0]) => target.query({ ...params, query: `${params.query}\n${settings}` } as never);
    },
  });
}

async function rows<T>(client: ClickHouseClient, query: string, params: Record<string, unknown> = {}): Promise<T[]> {
  const result = await client.query({ query, query_params: params, format: 'JSONEachRow', clickhouse_settings: { output_format_json_quote_64bit_integers: 0 } });
  return result.json<T>();
}

interface SpanDay {
  day: number;
  sessions: number;
  turns: number;
  tool_calls: number;
  tool_success: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_creation_tokens: number;
}
interface LogDay {
  day: number;
  permission_blocks: number;
  starts: number;
  resumes: number;
  failure_modes: Record<string, number>;
}

/** Both per-day queries on one x axis: every day either has data for, in order. */
export function mergeDays(spanDays: SpanDay[], logDays: LogDay[]): DaySeries {
  const days = [...new Set([...spanDays, ...logDays].map((row) => row.day))].sort((a, b) => a - b);
  const spansBy = new Map(spanDays.map((row) => [row.day, row]));
  const logsBy = new Map(logDays.map((row) => [row.day, row]));
  const spanColumn = (key: keyof SpanDay) => days.map((day) => spansBy.get(day)?.[key] ?? 0);
  const logColumn = (key: 'permission_blocks' | 'starts' | 'resumes') => days.map((day) => logsBy.get(day)?.[key] ?? 0);
  const modes = [...new Set(logDays.flatMap((row) => Object.keys(row.failure_modes)))].filter(Boolean).sort();
  return {
    days,
    sessions: spanColumn('sessions'),
    turns: spanColumn('turns'),
    toolCalls: spanColumn('tool_calls'),
    toolSuccess: spanColumn('tool_success'),
    inputTokens: spanColumn('input_tokens'),
    outputTokens: spanColumn('output_tokens'),
    cacheReadTokens: spanColumn('cache_read_tokens'),
    cacheCreationTokens: spanColumn('cache_creation_tokens'),
    permissionBlocks: logColumn('permission_blocks'),
    starts: logColumn('starts'),
    resumes: logColumn('resumes'),
    failureModes: Object.fromEntries(modes.map((mode) => [mode, days.map((day) => logsBy.get(day)?.failure_modes[mode] ?? 0)])),
  };
}

/** Sessions, turns and tokens by project, from the session rows (a session's project is its first turn's cwd). */
export function byProject(sessions: SessionRow[]): ProjectRow[] {
  const projects = new Map<string, ProjectRow>();
  for (const session of sessions) {
    const row = projects.get(session.project) ?? { project: session.project, sessions: 0, turns: 0, tokens: 0 };
    row.sessions += 1;
    row.turns += session.turns;
    row.tokens += session.input_tokens + session.output_tokens + session.cache_read_tokens + session.cache_creation_tokens;
    projects.set(session.project, row);
  }
  return [...projects.values()].sort((a, b) => b.tokens - a.tokens || a.project.localeCompare(b.project));
}

export class UiData {
  constructor(private readonly client: ClickHouseClient) {}

  async overview(range: TimeRange): Promise<Overview> {
    const client = withRange(this.client, range);
    const report = await buildReport(client);
    const days = mergeDays(await rows<SpanDay>(client, SPANS_PER_DAY), await rows<LogDay>(client, LOGS_PER_DAY));
    const projects = byProject(await this.sessions(range));
    return { range, report, days, projects };
  }

  sessions(range: TimeRange): Promise<SessionRow[]> {
    return rows<SessionRow>(withRange(this.client, range), SESSIONS);
  }

  failures(range: TimeRange): Promise<FailureRow[]> {
    return rows<FailureRow>(withRange(this.client, range), FAILURES);
  }

  async session(session: string): Promise<SessionDetail> {
    type RawSpan = Omit<SpanRow, 'events'> & { event_names: string[]; event_times_ms: number[]; event_attributes: Record<string, string>[] };
    const raw = await rows<RawSpan>(this.client, SESSION_SPANS, { session });
    const spans = raw.slice(0, SESSION_SPAN_LIMIT).map(({ event_names, event_times_ms, event_attributes, ...span }) => ({
      ...span,
      events: event_names.map((name, index) => ({ name, time_ms: event_times_ms[index], attributes: event_attributes[index] })),
    }));
    const logs = await rows<LogRow>(this.client, SESSION_LOGS, { session });
    return { session, spans, logs, truncated: raw.length > SESSION_SPAN_LIMIT };
  }
}
