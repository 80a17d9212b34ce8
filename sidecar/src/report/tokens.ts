// The rows of a usage report and the token and cost figures each carries, under the field names the JSON keeps
// stable.
import type { UsageDimension } from './usage.js';

export interface TokenFigures {
  input_tokens: number;
  output_tokens: number;
  cache_creation_tokens: number;
  cache_read_tokens: number;
  /** The four above together, as ccusage counts them. */
  total_tokens: number;
  cost_usd: number;
}

export interface ModelFigures extends TokenFigures {
  model: string;
}

/** Usage broken down by a dimension (`report --by repo`): the row's value under the dimension's name. */
type DimensionValues = { [dimension in UsageDimension]?: string };

export interface UsageRow extends TokenFigures, DimensionValues {
  /** The day (YYYY-MM-DD), the week's Monday, the month (YYYY-MM), the session id, or the block's start (ISO). */
  period: string;
  sessions: number;
  models: string[];
  /** Figures by model (always given; `--breakdown` prints them). */
  breakdown: ModelFigures[];
  first_activity: string;
  last_activity: string;
  /** Sessions: the working directory. */
  project?: string;
  /** Sessions: the agent (`claude-code`, `codex`). */
  agent?: string;
  /** Sessions: Claude Code's own statement of the session's cost, null when it stated none. */
  reported_cost_usd?: number | null;
  /** Blocks: the block's end (start + 5 hours), and whether it is still running. */
  end?: string;
  is_active?: boolean;
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
