// The JSON of `report insights` (docs/REPORT.md "Insights") and its options: no Node, so the web view's page types with it.

/** What `report insights` counts as a pattern (docs/REPORT.md "Insights"; config keys: config.ts INSIGHT_KEYS). */
export interface InsightThresholds {
  /** retry_loop: failing calls of one input in a session. */
  retryMin: number;
  /** permission_friction: calls of one rule asked for and allowed. */
  permissionAsksMin: number;
  /** compaction_churn: compactions in a session. */
  compactionsMin: number;
  /** slow_tools: a call this long or longer is slow (ms). */
  slowToolMs: number;
  /** cache_efficiency: a project and model reading less of its input from the cache than this (percent). */
  cacheReadMinPercent: number;
}

/**
 * The shortest call `slow_tools` can count (ms): the refresh keeps the calls from here up as hits
 * (retention/insight-slots.ts), and `insight_slow_tool_ms` may not be set lower (config.ts).
 */
export const SLOW_TOOL_FLOOR_MS = 1000;

export const INSIGHT_PATTERNS = [
  'retry_loop', 'repeated_read', 'not_found', 'permission_friction', 'interrupted_work', 'compaction_churn', 'slow_tools', 'cache_efficiency',
] as const;
export type InsightPattern = (typeof INSIGHT_PATTERNS)[number];

export const INSIGHT_DIMENSIONS = ['project', 'repo', 'user'] as const;
export type InsightDimension = (typeof INSIGHT_DIMENSIONS)[number];

export interface InsightFilter {
  /** First and last local day included, YYYY-MM-DD. */
  since?: string;
  until?: string;
  timezone?: string;
  /** An insight per pattern and value of this (the session's project, repository or OS user). */
  by?: InsightDimension;
  database?: string;
  /**
   * The store is one user's history in the CLI's own embedded engine: the statement runs on one thread, in blocks of
   * one granule (8 192 rows). Its ~100 000 facts a GB of transcripts are too few for parallel streams and 65 536-row
   * blocks to pay for their buffers: a fifth less CPU, the same wall time (BENCHMARKS.md). A server's history may be
   * far larger: not there; nor through a running sidecar's endpoint, whose read-only sessions refuse a setting.
   */
  embedded?: boolean;
}

export interface InsightExample {
  session: string;
  /** The turn (one trace per turn); '' for what happened between turns. */
  trace: string;
  time: string;
  ms: number;
  detail: string;
}

export interface Insight {
  pattern: InsightPattern;
  /** With --by: the value ('' : none). */
  value?: string;
  /** What is counted (docs/REPORT.md): calls, reads, errors, asks, turns, compactions or chats. */
  count: number;
  sessions: number;
  turns: number;
  /** Tokens and cost of the affected turns' API responses, priced as everywhere else. */
  tokens: number;
  cost_usd: number;
  /** Time the pattern took (its calls, turns, or the user's wait), ms. */
  time_ms: number;
  examples: InsightExample[];
  suggestion: string;
  /** The pattern's own figures. */
  details: Record<string, unknown>;
}

export interface InsightsReport {
  timezone: string;
  /** By the configuration's keys (`insight_retry_min`, …). */
  thresholds: Record<string, number>;
  by?: InsightDimension;
  insights: Insight[];
}

