import { UNCACHED_INPUT_ATTRIBUTE } from '../../../schemas/usage.js';
import { describe, expect, it } from 'vitest';
import type { SpanRecord } from '../model.js';
import { CACHE_WRITE_1H_ATTRIBUTE, PriceChatsProcessor, priceChat } from './price-chats.js';

const AT = Date.UTC(2026, 10, 1);
const M = 1e6;

function chatSpan(model: string, attributes: Record<string, number>): SpanRecord {
  return {
    traceId: 't'.repeat(32), spanId: 's'.repeat(16), parentSpanId: '', name: `chat ${model}`, kind: 'client',
    startMs: AT, endMs: AT + 1000, status: 'unset', statusMessage: '', events: [],
    attributes: { 'gen_ai.request.model': model, ...attributes },
  };
}

describe('priceChat', () => {
  it('prices each token type at its list price, 1-hour cache writes at their own', () => {
    // claude-opus-4-5 list prices per million: input 5, output 25, cache read 0.5, 5-minute write 6.25, 1-hour write 10.
    const cost = priceChat('claude-opus-4-5', { input: 1000, output: 2000, cacheRead: 30_000, cacheCreation: 4000, cacheCreation1h: 1000 }, AT);
    expect(cost.unknownModel).toBe(false);
    expect(cost.byType.input).toBeCloseTo((1000 * 5) / M, 12);
    expect(cost.byType.output).toBeCloseTo((2000 * 25) / M, 12);
    expect(cost.byType.cache_read).toBeCloseTo((30_000 * 0.5) / M, 12);
    expect(cost.byType.cache_creation).toBeCloseTo((3000 * 6.25 + 1000 * 10) / M, 12);
    expect(cost.usd).toBeCloseTo(cost.byType.input + cost.byType.output + cost.byType.cache_read + cost.byType.cache_creation, 12);
  });

  it('reprices the whole request at the long-context tier once the prompt passes 200k tokens', () => {
    // claude-sonnet-4-5: input 3 → 6, output 15 → 22.5, cache read 0.3 → 0.6, write 3.75 → 7.5 past 200k input.
    const short = priceChat('claude-sonnet-4-5', { input: 100, output: 1000, cacheRead: 150_000, cacheCreation: 49_900, cacheCreation1h: 0 }, AT);
    expect(short.usd).toBeCloseTo((100 * 3 + 1000 * 15 + 150_000 * 0.3 + 49_900 * 3.75) / M, 12);
    const long = priceChat('claude-sonnet-4-5', { input: 101, output: 1000, cacheRead: 150_000, cacheCreation: 49_900, cacheCreation1h: 0 }, AT);
    expect(long.usd).toBeCloseTo((101 * 6 + 1000 * 22.5 + 150_000 * 0.6 + 49_900 * 7.5) / M, 12);
  });

  it('takes the price of the day a chat was made where the table changes it at a start date, in any order', () => {
    // claude-opus-4-6: a long-context tier (input 5 → 10, output 25 → 37.5 past 200k) until 2026-03-13, flat after.
    const tokens = { input: 250_000, output: 1000, cacheRead: 0, cacheCreation: 0, cacheCreation1h: 0 };
    const startDate = Date.UTC(2026, 2, 13);
    const flat = (250_000 * 5 + 1000 * 25) / M;
    const tiered = (250_000 * 10 + 1000 * 37.5) / M;
    expect(priceChat('claude-opus-4-6', tokens, startDate).usd).toBeCloseTo(flat, 12);
    expect(priceChat('claude-opus-4-6', tokens, startDate - 1).usd).toBeCloseTo(tiered, 12);
    expect(priceChat('claude-opus-4-6', tokens, startDate + 86_399_999).usd).toBeCloseTo(flat, 12);
    expect(priceChat('claude-opus-4-6', tokens, startDate - 86_400_000).usd).toBeCloseTo(tiered, 12);
  });

  it('knows the model of the recorded samples, by its dated id too', () => {
    expect(priceChat('claude-opus-5-5', { input: 2100, output: 29, cacheRead: 500, cacheCreation: 500, cacheCreation1h: 0 }, AT).usd)
      .toBeCloseTo(0.01158, 9); // what Claude Code 2.1.332 stated for this usage
    expect(priceChat('claude-haiku-4-5-20251001', { input: M, output: 0, cacheRead: 0, cacheCreation: 0, cacheCreation1h: 0 }, AT).usd).toBeCloseTo(1, 9);
  });

  it('costs a model it does not know at 0 and says so, and a response without tokens at 0 without a flag', () => {
    expect(priceChat('claude-imaginary-9', { input: 10, output: 10, cacheRead: 0, cacheCreation: 0, cacheCreation1h: 0 }, AT))
      .toEqual({ usd: 0, byType: { input: 0, output: 0, cache_read: 0, cache_creation: 0 }, unknownModel: true });
    expect(priceChat('<synthetic>', { input: 0, output: 0, cacheRead: 0, cacheCreation: 0, cacheCreation1h: 0 }, AT).unknownModel).toBe(false);
  });
});

describe('PriceChatsProcessor', () => {
  it('sets ccotel.cost.usd on chat spans and emits ccotel.cost points by type that add up to it', async () => {
    const known = chatSpan('claude-opus-4-5', {
      [UNCACHED_INPUT_ATTRIBUTE]: 1000, 'gen_ai.usage.input_tokens': 3000, 'gen_ai.usage.output_tokens': 100, 'gen_ai.usage.cache_read.input_tokens': 0,
      'gen_ai.usage.cache_creation.input_tokens': 2000, [CACHE_WRITE_1H_ATTRIBUTE]: 2000,
    });
    const unknown = { ...chatSpan('claude-imaginary-9', { [UNCACHED_INPUT_ATTRIBUTE]: 5 }), spanId: 'u'.repeat(16) };
    const tool = { ...chatSpan('x', {}), name: 'execute_tool Bash', spanId: 'b'.repeat(16) };
    const out = await new PriceChatsProcessor().process({ spans: [known, unknown, tool], logs: [], metrics: [] });
    expect(known.attributes['ccotel.cost.usd']).toBeCloseTo((1000 * 5 + 100 * 25 + 2000 * 10) / M, 12);
    expect(unknown.attributes).toMatchObject({ 'ccotel.cost.usd': 0, 'ccotel.cost.unknown_model': true });
    expect(tool.attributes['ccotel.cost.usd']).toBeUndefined();
    const points = out.metrics.filter((p) => p.name === 'ccotel.cost');
    expect(points.map((p) => p.attributes['gen_ai.token.type']).sort()).toEqual(['cache_creation', 'input', 'output']);
    expect(points.every((p) => p.unit === 'USD' && p.attributes['gen_ai.request.model'] === 'claude-opus-4-5' && p.spanId === known.spanId)).toBe(true);
    expect(points.reduce((sum, p) => sum + p.value, 0)).toBeCloseTo(Number(known.attributes['ccotel.cost.usd']), 12);
  });

  it('prices a chat at the list price of its provider: an OpenAI model of a Codex chat is no unknown Anthropic one', async () => {
    const codex = chatSpan('gpt-5.1-codex', { 'gen_ai.usage.input_tokens': 5000, [UNCACHED_INPUT_ATTRIBUTE]: 1000, 'gen_ai.usage.output_tokens': 100, 'gen_ai.usage.cache_read.input_tokens': 4000 });
    codex.attributes['gen_ai.provider.name'] = 'openai';
    const claude = { ...chatSpan('gpt-5.1-codex', { [UNCACHED_INPUT_ATTRIBUTE]: 1000 }), spanId: 'c'.repeat(16) };
    await new PriceChatsProcessor().process({ spans: [codex, claude], logs: [], metrics: [] });
    // OpenAI's list price of gpt-5.1-codex: $1.25 input, $0.125 cached input, $10 output per million.
    expect(codex.attributes['ccotel.cost.usd']).toBeCloseTo((1000 * 1.25 + 4000 * 0.125 + 100 * 10) / M, 12);
    expect(codex.attributes['ccotel.cost.unknown_model']).toBeUndefined();
    expect(claude.attributes['ccotel.cost.unknown_model']).toBe(true);
  });
});

describe('PriceChatsProcessor and received spans', () => {
  it("leaves a received span named like a chat alone (its sender prices it, if at all)", async () => {
    const received = { ...chatSpan('claude-opus-4-5', { 'gen_ai.usage.input_tokens': 1000 }), origin: { resource: {}, scopeName: '', scopeVersion: '', spanKind: 'SPAN_KIND_CLIENT', traceState: '', links: [] } };
    const out = await new PriceChatsProcessor().process({ spans: [received], logs: [], metrics: [] });
    expect(out.spans[0].attributes).toEqual({ 'gen_ai.request.model': 'claude-opus-4-5', 'gen_ai.usage.input_tokens': 1000 });
    expect(out.metrics).toEqual([]);
  });
});
