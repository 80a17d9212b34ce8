// A complete API response: its `chat {model}` span, one token point per token type it used, and the GenAI
// conventions' client histograms (token usage by input/output, operation duration). Input tokens are as the
// conventions define them (cache reads and writes included); the provider's uncached part is its own attribute, and
// ccotel's own `ccotel.tokens` keep the provider's split (input = uncached).
import type { ChatCompleted } from '../../events.js';
import type { Attributes, TelemetryBatch } from '../../model.js';
import { commonAttributes, METRICS, providerAttributes } from '../../semconv.js';
import { CACHE_WRITE_1H_ATTRIBUTE } from '../price-chats.js';
import { point } from './records.js';
import { UNCACHED_INPUT_ATTRIBUTE } from '../../../../schemas/usage.js';

export function encodeChat(chat: ChatCompleted, out: TelemetryBatch): void {
  const { tokens, traceId, spanId } = chat;
  const inputTokens = tokens.input + tokens.cache_read + tokens.cache_creation;
  const attributes: Attributes = {
    ...commonAttributes(chat.sessionId, 'chat'),
    ...providerAttributes(chat.agent),
    'gen_ai.request.model': chat.model,
    'gen_ai.response.model': chat.model,
    'gen_ai.response.id': chat.messageId,
    'gen_ai.usage.input_tokens': inputTokens,
    [UNCACHED_INPUT_ATTRIBUTE]: tokens.input,
    'gen_ai.usage.output_tokens': tokens.output,
    'gen_ai.usage.cache_read.input_tokens': tokens.cache_read,
    'gen_ai.usage.cache_creation.input_tokens': tokens.cache_creation,
  };
  if (chat.cacheWrites1h > 0) attributes[CACHE_WRITE_1H_ATTRIBUTE] = chat.cacheWrites1h;
  if (chat.reportedCostUsd !== undefined) attributes['ccotel.cost.reported_usd'] = chat.reportedCostUsd;
  if (chat.requestId) attributes.request_id = chat.requestId;
  if (chat.stopReason) attributes['gen_ai.response.finish_reasons'] = chat.stopReason;
  if (chat.agentId) attributes['ccotel.agent.id'] = chat.agentId;
  out.spans.push({
    traceId,
    spanId,
    parentSpanId: chat.parentSpanId,
    name: `chat ${chat.model}`,
    kind: 'client',
    startMs: chat.startMs,
    endMs: chat.endMs,
    status: 'unset',
    statusMessage: '',
    attributes,
    events: [],
  });
  for (const [type, value] of Object.entries(tokens)) {
    if (value === 0) continue;
    const attrs = { 'gen_ai.token.type': type, 'gen_ai.request.model': chat.model };
    out.metrics.push(point(METRICS.tokens, { timeMs: chat.endMs, value, attributes: attrs, traceId, spanId, idSeed: `${spanId}:${type}` }));
  }
  const operation = { 'gen_ai.operation.name': 'chat', ...providerAttributes(chat.agent), 'gen_ai.request.model': chat.model, 'gen_ai.response.model': chat.model };
  const usage = { input: inputTokens, output: tokens.output };
  for (const [type, value] of Object.entries(usage)) {
    out.metrics.push(point(METRICS.genAiTokenUsage, { timeMs: chat.endMs, value, attributes: { ...operation, 'gen_ai.token.type': type }, traceId, spanId, idSeed: `${spanId}:usage:${type}` }));
  }
  out.metrics.push(point(METRICS.genAiOperationDuration, { timeMs: chat.endMs, value: Math.max(0, chat.endMs - chat.startMs) / 1000, attributes: operation, traceId, spanId, idSeed: `${spanId}:duration` }));
}
