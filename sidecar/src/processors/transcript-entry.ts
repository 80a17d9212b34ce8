// What parsing a transcript line gives: the typed entry of a row the correlator reads, or why it was skipped.
// Apart from the parser, so the row readers it calls (non-conversation-rows.ts) and the correlator depend on
// these types without depending on the parser.
import type { CostState } from './reported-cost.js';

import type { SkipReason } from '../records/agent-rows.js';

export type { SkipReason };

/** Row types the correlator reads. */
export const CONVERSATION_TYPES = ['user', 'assistant', 'system'] as const;
export type ConversationType = (typeof CONVERSATION_TYPES)[number];

export interface ContentBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
}

export interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
  /** Claude Code ≥ 2.1: the cache writes split by lifetime (1-hour writes cost more). */
  cache_creation?: { ephemeral_1h_input_tokens?: number; ephemeral_5m_input_tokens?: number };
}

/** The fields of a conversation row the correlator uses; the rest of the row is ignored. */
export interface TranscriptEntry {
  type: ConversationType | 'attachment' | 'permission-mode' | 'cost-state' | 'queue-operation' | 'summary';
  uuid: string;
  parentUuid: string | null;
  sessionId: string;
  /** NaN only on a `permission-mode` row written without a timestamp: it takes the time of its neighbours. */
  timeMs: number;
  isSidechain: boolean;
  isMeta: boolean;
  isCompactSummary: boolean;
  isApiErrorMessage: boolean;
  agentId?: string;
  promptId?: string;
  /** Claude Code ≥ 2.1.3xx: which prompt of this process (promptIndex) and of the session (turnIndex) a row starts. */
  turnPosition?: { promptIndex?: number; turnIndex?: number };
  requestId?: string;
  /** Set on the rows of a session forked from another (`--fork-session`, /branch). */
  forkedFromSessionId?: string;
  cwd?: string;
  gitBranch?: string;
  version?: string;
  /** A `summary` row's: the last row of the conversation it labels. */
  leafUuid?: string;
  /** How Claude Code ran (2.1.1xx on): `cli` interactive, `sdk-cli` print mode. */
  entrypoint?: string;
  /** The permission mode (default, acceptEdits, plan, bypassPermissions, auto …): `permission-mode` rows, 2.1.3xx user rows. */
  permissionMode?: string;
  subtype?: string;
  /**
   * system rows that say the turn is over (2.1.x): `turn_duration` (interactive), or in print mode `stop_hook_summary`
   * with no hook error (a Stop hook that exits 2 makes the model go on). Written after the turn's last answer.
   */
  endsTurn?: boolean;
  /** system rows: `content`; compact_boundary: `compactMetadata`. */
  systemContent?: string;
  compactMetadata?: { trigger?: string; preTokens?: number };
  message: {
    id?: string;
    model?: string;
    role?: string;
    stop_reason?: string | null;
    usage?: Usage;
    content: string | ContentBlock[];
  };
  toolUseResult?: unknown;
  /** Claude Code ≥ 2.1.3xx on tool-result rows: who allowed or refused the call (reasonType `classifier`: auto mode). */
  permissionDecision?: { decision?: string; source?: string; reasonType?: string; reasonCode?: string };
  /** Set on a result whose call did not run (`user-rejected`, `permission-rule`, `automode-…`), refused or cut short by an interrupt. */
  toolDenialKind?: string;
  /** 2.1.332: true when the call was refused before it ran (an interactive "No"); absent on a call cut short. */
  toolDenialBeforeRun?: boolean;
  /** Older releases: the cost Claude Code computed for this API response. */
  costUSD?: number;
  /** `cost-state` rows: Claude Code's own running totals for the session. */
  costState?: CostState;
  /** `attachment` rows read: a hook that blocked (exit code 2) the event of a tool call. */
  hookBlock?: { toolUseId: string; hookEvent: string; hookName: string };
}

export type ParseResult =
  | { ok: true; entry: TranscriptEntry }
  | { ok: false; reason: SkipReason; type?: string }
  /** A known row type that carries nothing the correlator needs. */
  | { ok: 'ignored'; type: string };
