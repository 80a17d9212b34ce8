// Claude's 5-hour usage windows, counted the way ccusage counts them: a block starts at the full hour of its
// first message and lasts 5 hours; a message after the block's end, or more than 5 hours after the previous
// message, starts a new one.
import { addTokens, emptyTokens, type ModelFigures, type UsageRow } from './tokens.js';

export const BLOCK_MS = 5 * 3_600_000;
const HOUR_MS = 3_600_000;

export interface UsageItem {
  session: string;
  time_ms: number;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cache_creation_tokens: number;
  cache_read_tokens: number;
  cost_usd: number;
}

/** Blocks of `items` (sorted by time), oldest first; `nowMs` tells which block is still running. */
export function billingBlocks(items: UsageItem[], nowMs: number): UsageRow[] {
  const blocks: { start: number; last: number; items: UsageItem[] }[] = [];
  for (const item of items) {
    const current = blocks[blocks.length - 1];
    if (current && item.time_ms - current.start <= BLOCK_MS && item.time_ms - current.last <= BLOCK_MS) {
      current.items.push(item);
      current.last = item.time_ms;
    } else {
      blocks.push({ start: Math.floor(item.time_ms / HOUR_MS) * HOUR_MS, last: item.time_ms, items: [item] });
    }
  }
  return blocks.map((block) => {
    const byModel = new Map<string, ModelFigures>();
    const row: UsageRow = {
      period: new Date(block.start).toISOString(),
      end: new Date(block.start + BLOCK_MS).toISOString(),
      is_active: nowMs - block.last < BLOCK_MS && nowMs < block.start + BLOCK_MS,
      sessions: new Set(block.items.map((item) => item.session)).size,
      models: [],
      breakdown: [],
      ...emptyTokens(),
      first_activity: new Date(block.items[0].time_ms).toISOString(),
      last_activity: new Date(block.last).toISOString(),
    };
    for (const item of block.items) {
      let figures = byModel.get(item.model);
      if (!figures) byModel.set(item.model, (figures = { model: item.model, ...emptyTokens() }));
      addTokens(figures, item);
      addTokens(row, item);
    }
    row.breakdown = [...byModel.values()].sort((a, b) => a.model.localeCompare(b.model));
    row.models = row.breakdown.map((figures) => figures.model);
    return row;
  });
}
