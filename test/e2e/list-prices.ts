// The providers' list prices for the models the corpus generator and the Codex fixtures use, typed in here on
// purpose: tests price exact tokens with them, independently of the price table ccotel ships.
import type { Expected, TokenSums } from '../generator/expected.js';

interface Prices { input: number; output: number; cacheRead: number; cacheCreation: number }

/** USD per million tokens; `over200k`: the whole request past 200k prompt tokens, where the model has such a tier. */
const LIST_PRICES: Record<string, Prices & { over200k?: Prices }> = {
  'claude-opus-5-5': { input: 4, output: 20, cacheRead: 0.2, cacheCreation: 5 },
  'claude-sonnet-4-5': { input: 3, output: 15, cacheRead: 0.3, cacheCreation: 3.75, over200k: { input: 6, output: 22.5, cacheRead: 0.6, cacheCreation: 7.5 } },
  'claude-haiku-4-5': { input: 1, output: 5, cacheRead: 0.1, cacheCreation: 1.25 },
  // OpenAI (Codex's model in the fixtures): cached input at a tenth, no cache writes.
  'gpt-5.1-codex': { input: 1.25, output: 10, cacheRead: 0.125, cacheCreation: 0 },
};

export function listCost(model: string, tokens: TokenSums, longContext: boolean): number {
  const p = (longContext ? LIST_PRICES[model].over200k : undefined) ?? LIST_PRICES[model];
  return (tokens.input * p.input + tokens.output * p.output + tokens.cacheRead * p.cacheRead + tokens.cacheCreation * p.cacheCreation) / 1e6;
}

/** List price of a generated session's tokens. */
export function sessionListCost(expected: Expected, sessionId: string): number {
  let cost = 0;
  for (const [model, { standard, over200k }] of Object.entries(expected.perSessionModelTokens[sessionId])) {
    cost += listCost(model, standard, false) + listCost(model, over200k, true);
  }
  return cost;
}
