// The token and cost figures every usage row carries, under the field names the JSON keeps stable.

export interface TokenFigures {
  input_tokens: number;
  output_tokens: number;
  cache_creation_tokens: number;
  cache_read_tokens: number;
  /** The four above together, as ccusage counts them. */
  total_tokens: number;
  cost_usd: number;
}

type TokenSource = Omit<TokenFigures, 'total_tokens'> & { total_tokens?: number };

export function emptyTokens(): TokenFigures {
  return { input_tokens: 0, output_tokens: 0, cache_creation_tokens: 0, cache_read_tokens: 0, total_tokens: 0, cost_usd: 0 };
}

export function addTokens(target: TokenFigures, source: TokenSource): void {
  target.input_tokens += Number(source.input_tokens);
  target.output_tokens += Number(source.output_tokens);
  target.cache_creation_tokens += Number(source.cache_creation_tokens);
  target.cache_read_tokens += Number(source.cache_read_tokens);
  target.total_tokens = target.input_tokens + target.output_tokens + target.cache_creation_tokens + target.cache_read_tokens;
  // Sums of float prices: rounded to a nano-dollar so totals print the same whatever the order.
  target.cost_usd = Math.round((target.cost_usd + Number(source.cost_usd)) * 1e9) / 1e9;
}
