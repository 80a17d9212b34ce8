import { describe, expect, it } from 'vitest';
import type { ChatCompleted } from '../../events.js';
import { emptyBatch } from '../../model.js';
import { histogramBounds } from '../../semconv.js';
import { RowMapper } from '../../sinks/clickhouse-rows.js';
import { encodeChat } from './chats.js';

const chat: ChatCompleted = {
  kind: 'ChatCompleted', traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), parentSpanId: 'c'.repeat(16), sessionId: 's', model: 'claude-sonnet-4-5',
  messageId: 'msg_1', startMs: 1_000, endMs: 3_500, tokens: { input: 10, output: 20, cache_read: 300, cache_creation: 4000 }, cacheWrites1h: 0,
} as ChatCompleted;

describe('a chat as the GenAI conventions define it', () => {
  it('counts input with cache reads and writes, keeps the uncached part, and adds the client histograms', () => {
    const out = emptyBatch();
    encodeChat(chat, out);
    expect(out.spans[0].attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 4310, 'ccotel.usage.uncached.input_tokens': 10, 'gen_ai.usage.output_tokens': 20 });
    const usage = out.metrics.filter((point) => point.name === 'gen_ai.client.token.usage');
    expect(usage.map((point) => [point.attributes['gen_ai.token.type'], point.value])).toEqual([['input', 4310], ['output', 20]]);
    expect(usage[0].attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'anthropic', 'gen_ai.request.model': 'claude-sonnet-4-5' });
    const [duration] = out.metrics.filter((point) => point.name === 'gen_ai.client.operation.duration');
    expect([duration.unit, duration.kind, duration.value]).toEqual(['s', 'histogram', 2.5]);
    // ccotel's own token counter keeps the provider's split.
    expect(out.metrics.find((point) => point.name === 'ccotel.tokens' && point.attributes['gen_ai.token.type'] === 'input')?.value).toBe(10);
    // The store's histogram row has the conventions' bounds, as OTLP does.
    const row = new RowMapper({}, '0').histogram([usage[0]]);
    expect(row).toContainEqual(histogramBounds('gen_ai.client.token.usage'));
  });
});
