// A session older than the raw window has no spans left in otel_traces, but its span facts stay (the summaries'
// TTL): its turns, tool calls and API responses, with times, outcomes, models and tokens, without trace or
// parent ids, prompts or inputs. The session page shows them as turns: each tool call and API response under
// the turn whose time holds it, as the trace nested them.
import { CHAT_SPAN_PREFIX, TOOL_SPAN_PREFIX, UNCACHED_INPUT_ATTRIBUTE, USAGE_TABLES } from '../../../schemas/usage.js';
import { agentOfTurnFact, turnSpanName } from '../semconv.js';
import type { SpanRow } from './types.js';

export interface SpanFact {
  span_id: string;
  kind: 'turn' | 'tool' | 'chat';
  name: string;
  outcome: string;
  start_ms: number;
  end_ms: number;
  project: string;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

/** One session's span facts, oldest first, at most `limit`. */
export const sessionFactsSql = (limit: number) => `SELECT SpanId AS span_id, Kind AS kind, Name AS name, Outcome AS outcome,
    toUnixTimestamp64Milli(Timestamp) AS start_ms, toUnixTimestamp64Milli(EndTime) AS end_ms, Project AS project,
    InputTokens AS input_tokens, OutputTokens AS output_tokens, CostUsd AS cost_usd
  FROM ${USAGE_TABLES.spans} FINAL WHERE SessionId = {session:String}
  ORDER BY start_ms, kind != 'turn', span_id LIMIT ${limit}`;

function attributes(fact: SpanFact): Record<string, string> {
  const common: Record<string, string> = fact.project ? { 'ccotel.cwd': fact.project } : {};
  if (fact.kind === 'turn') return { ...common, 'ccotel.turn.outcome': fact.outcome, 'gen_ai.agent.name': agentOfTurnFact(fact.name) };
  if (fact.kind === 'tool') return { ...common, 'gen_ai.tool.name': fact.name, 'ccotel.tool.outcome': fact.outcome };
  return { ...common, 'gen_ai.request.model': fact.name, [UNCACHED_INPUT_ATTRIBUTE]: String(fact.input_tokens), 'gen_ai.usage.output_tokens': String(fact.output_tokens), 'ccotel.cost.usd': String(fact.cost_usd) };
}

const SPAN_NAME = { turn: (name: string) => turnSpanName(agentOfTurnFact(name)), tool: (name: string) => `${TOOL_SPAN_PREFIX}${name}`, chat: (name: string) => `${CHAT_SPAN_PREFIX}${name}` };

/**
 * The facts (oldest first) as spans: each turn a trace of its own (its span id as the trace id), each tool call
 * and API response a child of the latest turn that started at or before it and had not ended; one outside
 * every turn stays a trace of its own.
 */
export function spansFromFacts(facts: SpanFact[]): SpanRow[] {
  let turn: SpanFact | undefined;
  return facts.map((fact) => {
    if (fact.kind === 'turn') turn = fact;
    const parent = fact.kind !== 'turn' && turn && fact.start_ms <= turn.end_ms ? turn : undefined;
    return {
      trace_id: `facts-${(parent ?? fact).span_id}`,
      span_id: fact.span_id,
      parent_span_id: parent?.span_id ?? '',
      name: SPAN_NAME[fact.kind](fact.name),
      start_ms: fact.start_ms,
      duration_ms: Math.max(0, fact.end_ms - fact.start_ms),
      status: fact.outcome === 'error' ? 'Error' : 'Unset',
      attributes: attributes(fact),
      events: [],
    };
  });
}
