// Claude's 5-hour usage windows, counted the way ccusage counts them: a block starts at the full hour of its
// first message and lasts 5 hours; a message after the block's end, or more than 5 hours after the previous
// message, starts a new one.
//
// The store sums the usage by hour (and model) first, so that a year of history comes out as a few thousand rows,
// not one per API response: the messages of one hour are always in one block, but for those at the very first
// millisecond of the hour, which may still end the block that started 5 hours before (its end is inclusive). So an
// hour is two groups: its first millisecond, and the rest (HourUsage.on_hour).
import { addTokens, emptyTokens, type ModelFigures, type TokenFigures, type UsageRow } from './tokens.js';

export const BLOCK_MS = 5 * 3_600_000;
export const HOUR_MS = 3_600_000;

/** The usage of one model in one hour (or in its first millisecond only: on_hour), as the store sums it. */
export interface HourUsage extends Omit<TokenFigures, 'total_tokens'> {
  hour: number;
  /** 1: the messages at the hour's first millisecond; 0: the rest of the hour. */
  on_hour: number;
  model: string;
  sessions: string[];
  first_ms: number;
  last_ms: number;
}

/** Blocks of `groups` (sorted by hour, the first millisecond first), oldest first; `nowMs` tells which block is still running. */
export function billingBlocks(groups: HourUsage[], nowMs: number): UsageRow[] {
  // The groups of each part of an hour together: all of one block.
  const parts = new Map<string, HourUsage[]>();
  for (const group of groups) {
    const key = `${group.hour}:${group.on_hour}`;
    if (!parts.has(key)) parts.set(key, []);
    parts.get(key)!.push(group);
  }
  const blocks: { start: number; first: number; last: number; groups: HourUsage[] }[] = [];
  for (const part of parts.values()) {
    const first = Math.min(...part.map((group) => group.first_ms));
    const last = Math.max(...part.map((group) => group.last_ms));
    const current = blocks[blocks.length - 1];
    if (current && first - current.start <= BLOCK_MS && first - current.last <= BLOCK_MS) {
      current.groups.push(...part);
      current.last = last;
    } else {
      blocks.push({ start: Math.floor(first / HOUR_MS) * HOUR_MS, first, last, groups: [...part] });
    }
  }
  return blocks.map((block) => {
    const byModel = new Map<string, ModelFigures>();
    const row: UsageRow = {
      period: new Date(block.start).toISOString(),
      end: new Date(block.start + BLOCK_MS).toISOString(),
      is_active: nowMs - block.last < BLOCK_MS && nowMs < block.start + BLOCK_MS,
      sessions: new Set(block.groups.flatMap((group) => group.sessions)).size,
      models: [],
      breakdown: [],
      ...emptyTokens(),
      first_activity: new Date(block.first).toISOString(),
      last_activity: new Date(block.last).toISOString(),
    };
    for (const group of block.groups) {
      let figures = byModel.get(group.model);
      if (!figures) byModel.set(group.model, (figures = { model: group.model, ...emptyTokens() }));
      addTokens(figures, group);
      addTokens(row, group);
    }
    row.breakdown = [...byModel.values()].sort((a, b) => a.model.localeCompare(b.model));
    row.models = row.breakdown.map((figures) => figures.model);
    return row;
  });
}
