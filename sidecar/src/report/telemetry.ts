// `ccotel report telemetry`: Claude Code's own figures beside ccotel's, per session that has native telemetry
// in the store, and where they disagree (the failure mode `telemetry_gap`, processors/detectors/telemetry-gap.ts,
// which `run` also tells as a failure-mode record). ccotel's figures are the ones counted (from the transcript);
// the native ones are shown, labelled.
import type { ClickHouseClient } from '@clickhouse/client';
import { UNCACHED_INPUT_ATTRIBUTE } from '../../../schemas/usage.js';
import { costOf, roundUsd, telemetryGaps, TOKEN_TYPES, tokensOf, zeroTokens, type NativeFacts, type Tokens, type TokenType } from '../processors/detectors/telemetry-gap.js';
import { selectRows } from './select.js';

const NATIVE = 'claude-code';

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
  time_ms: number;
  input: number;
  output: number;
  cache_read: number;
  cache_creation: number;
  cost: number;
}

/** ccotel's chat spans of the sessions Claude Code exported anything for (both within the raw rows' TTL). */
const CHATS = `SELECT SpanAttributes['session.id'] AS session, SpanAttributes['request_id'] AS request, SpanAttributes['gen_ai.request.model'] AS model,
    toUnixTimestamp64Milli(Timestamp) AS time_ms, toUInt64OrZero(SpanAttributes['${UNCACHED_INPUT_ATTRIBUTE}']) AS input, toUInt64OrZero(SpanAttributes['gen_ai.usage.output_tokens']) AS output,
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
    const ours = chats.filter((chat) => chat.session === session).map((chat) => ({
      request: chat.request, model: chat.model, timeMs: Number(chat.time_ms), costUsd: chat.cost,
      tokens: { input: chat.input, output: chat.output, cacheRead: chat.cache_read, cacheCreation: chat.cache_creation },
    }));
    const exported: NativeFacts['requests'] = new Map();
    for (const row of apiRequests.filter((r) => r.session === session)) {
      const seen = exported.get(row.request);
      exported.set(row.request, { model: seen?.model ?? row.model, records: (seen?.records ?? 0) + 1 });
    }
    const points = sums.filter((s) => s.session === session);
    const tokenPoints = points.filter((p) => p.metric === 'claude_code.token.usage');
    const costPoints = points.filter((p) => p.metric === 'claude_code.cost.usage');
    const native: NativeFacts = { requests: exported };
    if (tokenPoints.length > 0) {
      native.tokens = zeroTokens();
      for (const point of tokenPoints) if ((TOKEN_TYPES as readonly string[]).includes(point.type)) native.tokens[point.type as TokenType] += point.value;
    }
    if (costPoints.length > 0) native.costUsd = roundUsd(costPoints.reduce((total, point) => total + point.value, 0));
    const { gaps, missingFromMs } = telemetryGaps(ours, native);
    return {
      session,
      ccotel: { requests: ours.length, tokens: tokensOf(ours), cost_usd: costOf(ours) },
      native: { requests: exported.size, ...(native.tokens ? { tokens: native.tokens } : {}), ...(native.costUsd !== undefined ? { cost_usd: native.costUsd } : {}) },
      gaps: gaps.map((gap) => gap.text),
      ...(missingFromMs !== undefined ? { missing_from: new Date(missingFromMs).toISOString() } : {}),
    };
  });
  return { sessions, gaps: sessions.filter((s) => s.gaps.length > 0).length };
}
