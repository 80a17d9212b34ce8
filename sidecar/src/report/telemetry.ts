// `ccotel report telemetry`: Claude Code's own figures beside ccotel's, per session that has native telemetry
// in the store, and the failure mode `telemetry_gap` where they disagree (DESIGN §13): a request of the
// transcript that no `api_request` event names (the export stopped: named from the first such request), one
// exported that the transcript lacks, a model named otherwise, or token totals (`claude_code.token.usage`) that
// differ. ccotel's figures are the ones counted (from the transcript); the native ones are shown, labelled.
// Auxiliary requests (query_source auxiliary: titles, compaction summaries) have no transcript row and are left out.
import type { ClickHouseClient } from '@clickhouse/client';
import { UNCACHED_INPUT_ATTRIBUTE } from '../../../schemas/usage.js';
import { selectRows } from './select.js';

const NATIVE = 'claude-code';
const TOKEN_TYPES = ['input', 'output', 'cacheRead', 'cacheCreation'] as const;
type TokenType = (typeof TOKEN_TYPES)[number];
type Tokens = Record<TokenType, number>;

export interface TelemetrySession {
  session: string;
  /** From the transcript (ccotel's chat spans). */
  ccotel: { requests: number; tokens: Tokens; cost_usd: number };
  /** From Claude Code's own telemetry: api_request events, token and cost metrics (undefined: none exported). */
  native: { requests: number; tokens?: Tokens; cost_usd?: number };
  /** What differs; empty when the two agree. */
  gaps: string[];
  /** Time of the first request of the transcript no native event names (the export stopped there), ISO. */
  missing_from?: string;
}

export interface TelemetryReport {
  sessions: TelemetrySession[];
  /** Sessions with a telemetry_gap. */
  gaps: number;
}

interface ChatRow {
  session: string;
  request: string;
  model: string;
  time: string;
  input: number;
  output: number;
  cache_read: number;
  cache_creation: number;
  cost: number;
}

const zero = (): Tokens => ({ input: 0, output: 0, cacheRead: 0, cacheCreation: 0 });

/** ccotel's chat spans of the sessions Claude Code exported anything for (both within the raw rows' TTL). */
const CHATS = `SELECT SpanAttributes['session.id'] AS session, SpanAttributes['request_id'] AS request, SpanAttributes['gen_ai.request.model'] AS model,
    toString(Timestamp) AS time, toUInt64OrZero(SpanAttributes['${UNCACHED_INPUT_ATTRIBUTE}']) AS input, toUInt64OrZero(SpanAttributes['gen_ai.usage.output_tokens']) AS output,
    toUInt64OrZero(SpanAttributes['gen_ai.usage.cache_read.input_tokens']) AS cache_read, toUInt64OrZero(SpanAttributes['gen_ai.usage.cache_creation.input_tokens']) AS cache_creation,
    toFloat64OrZero(SpanAttributes['ccotel.cost.usd']) AS cost
  FROM otel_traces WHERE ServiceName != '${NATIVE}' AND startsWith(SpanName, 'chat ')
    AND SpanAttributes['session.id'] IN (SELECT DISTINCT LogAttributes['session.id'] FROM otel_logs WHERE ServiceName = '${NATIVE}')
  ORDER BY Timestamp LIMIT 1 BY SpanId`;
const API_REQUESTS = `SELECT LogAttributes['session.id'] AS session, LogAttributes['request_id'] AS request, LogAttributes['model'] AS model
  FROM otel_logs WHERE ServiceName = '${NATIVE}' AND LogAttributes['event.name'] = 'api_request' AND LogAttributes['query_source'] != 'auxiliary'
  LIMIT 1 BY LogAttributes['ccotel.record.id']`;
const NATIVE_SUMS = `SELECT Attributes['session.id'] AS session, MetricName AS metric, Attributes['type'] AS type, sum(Value) AS value
  FROM otel_metrics_sum WHERE ServiceName = '${NATIVE}' AND MetricName IN ('claude_code.token.usage', 'claude_code.cost.usage') AND Attributes['query_source'] != 'auxiliary'
  GROUP BY session, metric, type`;

export async function telemetryReport(client: ClickHouseClient): Promise<TelemetryReport> {
  const [chats, apiRequests, sums] = await Promise.all([
    selectRows<ChatRow>(client, CHATS),
    selectRows<{ session: string; request: string; model: string }>(client, API_REQUESTS),
    selectRows<{ session: string; metric: string; type: string; value: number }>(client, NATIVE_SUMS),
  ]);
  const ids = [...new Set([...apiRequests.map((r) => r.session), ...sums.map((s) => s.session)])].filter(Boolean).sort();
  const sessions = ids.map((session): TelemetrySession => {
    const ours = chats.filter((chat) => chat.session === session);
    const exported = new Map(apiRequests.filter((r) => r.session === session).map((r) => [r.request, r.model]));
    const tokens = zero();
    for (const chat of ours) {
      tokens.input += chat.input;
      tokens.output += chat.output;
      tokens.cacheRead += chat.cache_read;
      tokens.cacheCreation += chat.cache_creation;
    }
    const ccotel = { requests: ours.length, tokens, cost_usd: round(ours.reduce((total, chat) => total + chat.cost, 0)) };
    const points = sums.filter((s) => s.session === session);
    const tokenPoints = points.filter((p) => p.metric === 'claude_code.token.usage');
    const costPoints = points.filter((p) => p.metric === 'claude_code.cost.usage');
    const native: TelemetrySession['native'] = { requests: exported.size };
    if (tokenPoints.length > 0) {
      native.tokens = zero();
      for (const point of tokenPoints) if ((TOKEN_TYPES as readonly string[]).includes(point.type)) native.tokens[point.type as TokenType] += point.value;
    }
    if (costPoints.length > 0) native.cost_usd = round(costPoints.reduce((total, point) => total + point.value, 0));

    const gaps: string[] = [];
    const missing = ours.filter((chat) => chat.request && !exported.has(chat.request));
    if (missing.length > 0) gaps.push(`${missing.length} of ${ours.length} requests of the transcript not exported`);
    const known = new Set(ours.map((chat) => chat.request));
    const extra = [...exported.keys()].filter((request) => !known.has(request));
    if (extra.length > 0) gaps.push(`${extra.length} exported requests not in the transcript`);
    const renamed = new Set(ours.filter((chat) => exported.has(chat.request) && exported.get(chat.request) !== chat.model).map((chat) => `${chat.model} exported as ${exported.get(chat.request)}`));
    for (const rename of renamed) gaps.push(`model ${rename}`);
    if (native.tokens) {
      for (const type of TOKEN_TYPES) {
        if (native.tokens[type] !== tokens[type]) gaps.push(`${type} tokens: ${tokens[type]} in the transcript, ${native.tokens[type]} exported`);
      }
    }
    if (ccotel.cost_usd > 0 && native.tokens && !native.cost_usd) gaps.push('no exported cost');
    return { session, ccotel, native, gaps, ...(missing.length > 0 ? { missing_from: `${missing[0].time.replace(' ', 'T')}Z` } : {}) };
  });
  return { sessions, gaps: sessions.filter((s) => s.gaps.length > 0).length };
}

const round = (usd: number) => Math.round(usd * 1e6) / 1e6;
