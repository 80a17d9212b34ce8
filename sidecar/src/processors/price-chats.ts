// Prices every `chat` span (DESIGN §10) from the price table shipped in @pydantic/genai-prices (its data is
// bundled: no network at run time): sets `ccotel.cost.usd` and emits one `ccotel.cost` point per token type.
// A model the table does not know costs 0 and is flagged with `ccotel.cost.unknown_model=true`.
import { calcPrice, type ModelInfo, type ModelPrice, type TieredPrices } from '@pydantic/genai-prices';
import type { MetricPoint, Processor, SpanRecord, TelemetryBatch } from '../model.js';
import { UNCACHED_INPUT_ATTRIBUTE } from '../../../schemas/usage.js';
import { AGENTS, ATTRS, DEFAULT_AGENT, METRICS, metricPoint, SPANS } from '../semconv.js';

export const COST_ATTRIBUTE = 'ccotel.cost.usd';
export const UNKNOWN_MODEL_ATTRIBUTE = 'ccotel.cost.unknown_model';
/** 1-hour cache writes (of the cache_creation tokens), priced apart from the 5-minute ones. */
export const CACHE_WRITE_1H_ATTRIBUTE = 'ccotel.usage.cache_creation_1h.input_tokens';

export interface ChatTokens {
  input: number;
  output: number;
  cacheRead: number;
  /** All cache writes, 5-minute and 1-hour. */
  cacheCreation: number;
  cacheCreation1h: number;
}

/** Cost by `gen_ai.token.type` (input, output, cache_read, cache_creation), USD. */
export type CostByType = Record<'input' | 'output' | 'cache_read' | 'cache_creation', number>;

export interface ChatCost {
  usd: number;
  byType: CostByType;
  /** The table has no price for this model: usd is 0. */
  unknownModel: boolean;
}

const PER_MILLION = 1e6;

/** The price per million tokens that applies: a long-context tier reprices the whole request past its start. */
function perMillion(price: number | TieredPrices | undefined, totalInput: number): number {
  if (price === undefined) return 0;
  if (typeof price === 'number') return price;
  return price.tiers.reduce((current, tier) => (totalInput > tier.start ? tier.price : current), price.base);
}

const DAY_MS = 86_400_000;
/** Prices found, by model and UTC day; cleared past a bound (a year of a few models fits). */
const pricesByDay = new Map<string, ModelPrice | null>();
const MAX_PRICES_BY_DAY = 10_000;

/** Prices that change only at a start date (a UTC day, `new Date('2026-03-13')`) are the same all day. */
function changesOnlyByDay(model: ModelInfo): boolean {
  if (!Array.isArray(model.prices)) return true;
  return model.prices.every(({ constraint }) => constraint === undefined || (constraint.type === 'start_date' && /^\d{4}-\d{2}-\d{2}$/.test(constraint.start_date)));
}

/**
 * The table is asked which model this is and what it cost at that time (prices change by date, some by time of
 * day). Asking is most of the cost of pricing a chat: a model whose prices change only by date is asked once a day.
 */
function modelPriceAt(model: string, atMs: number, provider: string): ModelPrice | null {
  const key = `${provider}\n${model}\n${Math.floor(atMs / DAY_MS)}`;
  const known = pricesByDay.get(key);
  if (known !== undefined) return known;
  const found = calcPrice({ input_tokens: 1, output_tokens: 1 }, model, { providerId: provider, timestamp: new Date(atMs) });
  if (pricesByDay.size >= MAX_PRICES_BY_DAY) pricesByDay.clear();
  // A model the table does not know is unknown at any time.
  if (!found || changesOnlyByDay(found.model)) pricesByDay.set(key, found ? found.model_price : null);
  return found ? found.model_price : null;
}

/** `provider`: the `gen_ai.provider.name` of the chat (the table names models by provider). */
export function priceChat(model: string, tokens: ChatTokens, atMs: number, provider: string = AGENTS[DEFAULT_AGENT].provider): ChatCost {
  const totalInput = tokens.input + tokens.cacheRead + tokens.cacheCreation;
  const zero: CostByType = { input: 0, output: 0, cache_read: 0, cache_creation: 0 };
  if (totalInput + tokens.output === 0) return { usd: 0, byType: zero, unknownModel: false };
  const price = modelPriceAt(model, atMs, provider);
  if (!price) return { usd: 0, byType: zero, unknownModel: true };
  const rate = (key: string) => perMillion(price[key], totalInput) / PER_MILLION;
  const writes5m = tokens.cacheCreation - tokens.cacheCreation1h;
  // A model without a 1-hour write price is charged its cache write price for them.
  const write1hRate = price.cache_write_1h_mtok !== undefined ? rate('cache_write_1h_mtok') : rate('cache_write_mtok');
  const byType: CostByType = {
    input: tokens.input * rate('input_mtok'),
    output: tokens.output * rate('output_mtok'),
    cache_read: tokens.cacheRead * rate('cache_read_mtok'),
    cache_creation: writes5m * rate('cache_write_mtok') + tokens.cacheCreation1h * write1hRate,
  };
  return { usd: byType.input + byType.output + byType.cache_read + byType.cache_creation, byType, unknownModel: false };
}

const numberAttribute = (span: SpanRecord, key: string): number => Number(span.attributes[key] ?? 0) || 0;

export function chatTokens(span: SpanRecord): ChatTokens {
  return {
    input: numberAttribute(span, UNCACHED_INPUT_ATTRIBUTE),
    output: numberAttribute(span, 'gen_ai.usage.output_tokens'),
    cacheRead: numberAttribute(span, 'gen_ai.usage.cache_read.input_tokens'),
    cacheCreation: numberAttribute(span, 'gen_ai.usage.cache_creation.input_tokens'),
    cacheCreation1h: numberAttribute(span, CACHE_WRITE_1H_ATTRIBUTE),
  };
}

/** Cost points carry 12 decimals at most: sums of floats stay readable. */
const round = (usd: number): number => Math.round(usd * 1e12) / 1e12;

export class PriceChatsProcessor implements Processor {
  readonly name = 'price-chats';

  async process(batch: TelemetryBatch): Promise<TelemetryBatch> {
    const points: MetricPoint[] = [];
    // A chat's agent, as its token points name it (the encoder's): its cost points name it too.
    const agentOf = new Map(batch.metrics.filter((point) => point.name === METRICS.tokens.name).map((point) => [point.spanId, point.attributes[ATTRS.agentName]]));
    for (const span of batch.spans) {
      // A received span (another agent's "chat …") is priced by its sender, if at all.
      if (span.origin || !span.name.startsWith(SPANS.chatPrefix)) continue;
      const model = String(span.attributes[ATTRS.requestModel] ?? span.name.slice(SPANS.chatPrefix.length));
      const cost = priceChat(model, chatTokens(span), span.startMs, String(span.attributes['gen_ai.provider.name'] ?? AGENTS[DEFAULT_AGENT].provider));
      span.attributes[COST_ATTRIBUTE] = round(cost.usd);
      if (cost.unknownModel) span.attributes[UNKNOWN_MODEL_ATTRIBUTE] = true;
      for (const [type, usd] of Object.entries(cost.byType)) {
        if (usd === 0) continue;
        points.push(
          metricPoint(METRICS.cost, {
            id: `${span.spanId}:cost:${type}`,
            timeMs: span.endMs,
            value: round(usd),
            attributes: { [ATTRS.agentName]: agentOf.get(span.spanId) ?? DEFAULT_AGENT, [ATTRS.requestModel]: model, 'gen_ai.token.type': type },
            traceId: span.traceId,
            spanId: span.spanId,
          }),
        );
      }
    }
    if (points.length === 0) return batch;
    return { ...batch, metrics: batch.metrics.concat(points) };
  }
}
