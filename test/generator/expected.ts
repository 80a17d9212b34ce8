// The exact answer a correct reader of a generated corpus must give. Semantics: test/generator/README.md.

export type TurnOutcome = 'completed' | 'interrupted' | 'error' | 'abandoned';
export type ToolOutcome = 'success' | 'error' | 'denied' | 'interrupted' | 'unanswered';
export type SkipReason = 'malformed_json' | 'not_object' | 'missing_fields' | 'unknown_type' | 'partial_last_line';
export type SubagentLayout = 'inline' | 'legacy' | 'nested';

export const TURN_OUTCOMES: readonly TurnOutcome[] = ['completed', 'interrupted', 'error', 'abandoned'];
export const TOOL_OUTCOMES: readonly ToolOutcome[] = ['success', 'error', 'denied', 'interrupted', 'unanswered'];
export const SKIP_REASONS: readonly SkipReason[] = [
  'malformed_json', 'not_object', 'missing_fields', 'unknown_type', 'partial_last_line',
];

/**
 * Row types Claude Code 2.1.332 itself knows (read from its binary) plus older ones: a reader keeps
 * nothing but user / assistant / system rows and skips these without counting them as unknown.
 * Any other `type` is `unknown_type`.
 */
export const KNOWN_ROW_TYPES: readonly string[] = [
  'user', 'assistant', 'system', 'attachment', 'progress', 'summary', 'queue-operation', 'api-request', 'api-request-resumed',
  'api-request-shape', 'api-request-blob', 'frame-link', 'observer-ref', 'continued-in', 'resume-head-vouch',
  'file-history-snapshot', 'file-history-delta', 'attribution-snapshot', 'custom-title', 'ai-title', 'tag', 'relocated',
  'agent-name', 'agent-color', 'agent-setting', 'mode', 'permission-mode', 'session-owner', 'isolation-latch', 'dev-mods',
  'atis-latch', 'worktree-state', 'bridge-session', 'tools-used', 'data-flow-records', 'data-flow-incomplete', 'derived-from',
  'pr-link', 'history-suppression', 'ended-by-model', 'cost-state', 'last-prompt', 'content-replacement', 'memory-mode',
  'artifact-comment-monitor', 'artifact-autoreact-ledger', 'fork-context-ref', 'turn_end',
];

export interface TokenSums {
  input: number;
  output: number;
  cacheRead: number;
  cacheCreation: number;
}

export interface Expected {
  seed: number;
  /** Bytes written into .jsonl and .meta.json files. */
  bytes: number;
  /** Transcript files (.jsonl) written. */
  files: number;
  /** Every config dir written to (each holds projects/); pass them comma-joined as CLAUDE_CONFIG_DIR. */
  configDirs: string[];
  sessions: number;
  turns: number;
  turnsByOutcome: Record<TurnOutcome, number>;
  /** Distinct (message.id, requestId), API error rows excluded, subagent messages included. */
  chatSpans: number;
  tokens: TokenSums;
  tokensByModel: Record<string, TokenSums>;
  /** Each message counted once, in the session whose file it was first written to (see README). */
  perSessionTokens: Record<string, TokenSums>;
  /**
   * The same tokens by transcript file (path relative to the corpus root), each message in the first
   * file it was written to: for tools that name sessions by file (ccusage), subagent files included.
   */
  perFileTokens: Record<string, TokenSums>;
  /**
   * The same tokens by session and model, split by prompt size (input + cache read + cache write of the
   * message over 200 000 tokens or not: where long-context prices start), so a test can price them.
   */
  perSessionModelTokens: Record<string, Record<string, { standard: TokenSums; over200k: TokenSums }>>;
  /**
   * The totals ccusage 20.0.24 reports for this corpus: like `tokens`, except that a message without
   * requestId is counted once per session it was copied into (it deduplicates those only per session).
   */
  ccusageTokens: TokenSums;
  /** Sessions holding messages that also appear in another session's file (replay or fork copies). */
  sessionsSharingMessages: string[];
  toolCalls: number;
  toolCallsByOutcome: Record<ToolOutcome, number>;
  toolCallsByName: Record<string, Record<ToolOutcome, number>>;
  subagents: number;
  subagentsByType: Record<string, number>;
  subagentsByLayout: Record<SubagentLayout, number>;
  compactions: number;
  resumeStarts: number;
  resumeStartsByStyle: { sameFile: number; newFile: number };
  forks: number;
  skippedLines: Record<SkipReason, number>;
  /** Parsed rows by `type` (lines that were skipped as malformed / not objects / partial are not in here). */
  rowsByType: Record<string, number>;
}

export function zeroTokens(): TokenSums {
  return { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 };
}

export function addTokens(into: TokenSums, add: TokenSums): void {
  into.input += add.input;
  into.output += add.output;
  into.cacheRead += add.cacheRead;
  into.cacheCreation += add.cacheCreation;
}

function sumTokens(a: TokenSums, b: TokenSums): TokenSums {
  const sum = zeroTokens();
  addTokens(sum, a);
  addTokens(sum, b);
  return sum;
}

function zeroRecord<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
}

/** Counters the generator bumps as it writes; `finish` returns them as an Expected with sorted keys. */
export class ExpectedTally {
  sessions = new Set<string>();
  turnsByOutcome = zeroRecord(TURN_OUTCOMES);
  chatSpans = 0;
  tokens = zeroTokens();
  tokensByModel = new Map<string, TokenSums>();
  perSessionTokens = new Map<string, TokenSums>();
  perFileTokens = new Map<string, TokenSums>();
  perSessionModelTokens = new Map<string, Record<string, { standard: TokenSums; over200k: TokenSums }>>();
  /** Copied messages without requestId, which ccusage counts again. */
  ccusageExtra = zeroTokens();
  sessionsSharingMessages = new Set<string>();
  toolCallsByName = new Map<string, Record<ToolOutcome, number>>();
  subagentsByType = new Map<string, number>();
  subagentsByLayout = zeroRecord<SubagentLayout>(['inline', 'legacy', 'nested']);
  compactions = 0;
  resumeSameFile = 0;
  resumeNewFile = 0;
  forks = 0;
  skippedLines = zeroRecord(SKIP_REASONS);
  rowsByType = new Map<string, number>();
  files = 0;
  bytes = 0;

  turn(outcome: TurnOutcome): void {
    this.turnsByOutcome[outcome]++;
  }

  chat(sessionId: string, file: string, model: string, usage: TokenSums): void {
    this.chatSpans++;
    addTokens(this.tokens, usage);
    addTokens(getOrInit(this.tokensByModel, model, zeroTokens), usage);
    addTokens(getOrInit(this.perSessionTokens, sessionId, zeroTokens), usage);
    addTokens(getOrInit(this.perFileTokens, file, zeroTokens), usage);
    const byModel = getOrInit(this.perSessionModelTokens, sessionId, (): Record<string, { standard: TokenSums; over200k: TokenSums }> => ({}));
    byModel[model] ??= { standard: zeroTokens(), over200k: zeroTokens() };
    addTokens(byModel[model][usage.input + usage.cacheRead + usage.cacheCreation > 200_000 ? 'over200k' : 'standard'], usage);
  }

  tool(name: string, outcome: ToolOutcome): void {
    getOrInit(this.toolCallsByName, name, () => zeroRecord(TOOL_OUTCOMES))[outcome]++;
  }

  subagent(agentType: string, layout: SubagentLayout): void {
    this.subagentsByType.set(agentType, (this.subagentsByType.get(agentType) ?? 0) + 1);
    this.subagentsByLayout[layout]++;
  }

  row(type: string): void {
    this.rowsByType.set(type, (this.rowsByType.get(type) ?? 0) + 1);
  }

  finish(seed: number, configDirs: string[]): Expected {
    const toolCallsByOutcome = zeroRecord(TOOL_OUTCOMES);
    for (const byOutcome of this.toolCallsByName.values()) {
      for (const o of TOOL_OUTCOMES) toolCallsByOutcome[o] += byOutcome[o];
    }
    return {
      seed,
      bytes: this.bytes,
      files: this.files,
      configDirs,
      sessions: this.sessions.size,
      turns: TURN_OUTCOMES.reduce((sum, o) => sum + this.turnsByOutcome[o], 0),
      turnsByOutcome: this.turnsByOutcome,
      chatSpans: this.chatSpans,
      tokens: this.tokens,
      tokensByModel: sortedObject(this.tokensByModel),
      perSessionTokens: sortedObject(this.perSessionTokens),
      perFileTokens: sortedObject(this.perFileTokens),
      perSessionModelTokens: sortedObject(this.perSessionModelTokens),
      ccusageTokens: sumTokens(this.tokens, this.ccusageExtra),
      sessionsSharingMessages: [...this.sessionsSharingMessages].sort(),
      toolCalls: TOOL_OUTCOMES.reduce((sum, o) => sum + toolCallsByOutcome[o], 0),
      toolCallsByOutcome,
      toolCallsByName: sortedObject(this.toolCallsByName),
      subagents: [...this.subagentsByType.values()].reduce((a, b) => a + b, 0),
      subagentsByType: sortedObject(this.subagentsByType),
      subagentsByLayout: this.subagentsByLayout,
      compactions: this.compactions,
      resumeStarts: this.resumeSameFile + this.resumeNewFile,
      resumeStartsByStyle: { sameFile: this.resumeSameFile, newFile: this.resumeNewFile },
      forks: this.forks,
      skippedLines: this.skippedLines,
      rowsByType: sortedObject(this.rowsByType),
    };
  }
}

function getOrInit<K, V>(map: Map<K, V>, key: K, init: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = init();
    map.set(key, value);
  }
  return value;
}

function sortedObject<V>(map: Map<string, V>): Record<string, V> {
  return Object.fromEntries([...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
