// Parse one transcript line into a typed entry, or say why it was skipped.
// Most bytes of a real transcript are not conversation (attachments with full prompt snapshots, request
// shapes, cost state): those rows are recognised by their type literal and skipped without a full parse.

import { costStateEntry, hookBlockEntry, optionalString, permissionModeEntry, queueOperationEntry, summaryEntry } from './non-conversation-rows.js';
import type { CostState } from './reported-cost.js';

export type SkipReason =
  | 'malformed_json'
  | 'not_object'
  | 'missing_fields'
  | 'unknown_type'
  | 'partial_last_line'
  | 'line_too_long';

/** Row types the correlator reads. */
const CONVERSATION_TYPES = ['user', 'assistant', 'system'] as const;
type ConversationType = (typeof CONVERSATION_TYPES)[number];

/**
 * Row types Claude Code writes that carry no conversation (or only copies of it): recognised and skipped on purpose.
 * `summary` and `ai-title` label conversations; `attachment` holds hook outcomes and context snapshots.
 */
export const KNOWN_NON_CONVERSATION_TYPES = new Set([
  'attachment',
  'summary',
  'ai-title',
  'file-history-snapshot',
  'queue-operation',
  'progress',
  'agent-setting',
  'pr-link',
  'turn_end',
  'api-request',
  'api-request-shape',
  'api-request-blob',
  'atis-latch',
  'tools-used',
  'last-prompt',
  'mode',
  'custom-title',
  'tag',
  'worktree-state',
  // The rest of the session-metadata types the 2.1.332 binary knows (file-history-delta: interactive file edits).
  'api-request-resumed', 'frame-link', 'observer-ref', 'continued-in', 'resume-head-vouch', 'file-history-delta',
  'attribution-snapshot', 'relocated', 'agent-name', 'agent-color', 'session-owner', 'isolation-latch', 'dev-mods',
  'bridge-session', 'data-flow-records', 'data-flow-incomplete', 'derived-from', 'history-suppression',
  'ended-by-model', 'content-replacement', 'memory-mode', 'artifact-comment-monitor', 'artifact-autoreact-ledger',
  'fork-context-ref',
]);

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

const TYPE_LITERALS = /"type":"([A-Za-z0-9_-]+)"/g;

function looksLikeWholeObject(line: string): boolean {
  return line.charCodeAt(0) === 0x7b /* { */ && line.charCodeAt(line.length - 1) === 0x7d /* } */;
}

/** A conversation row always contains its type literal; a line with none of them is never one. */
function mayBeConversation(line: string): boolean {
  return (
    line.includes('"type":"user"') || line.includes('"type":"assistant"') || line.includes('"type":"system"')
  );
}

export function parseTranscriptLine(line: string): ParseResult {
  if (!looksLikeWholeObject(line)) {
    // Not `{…}`: either broken or valid JSON that is not an object.
    try {
      return classifyRow(JSON.parse(line));
    } catch {
      return { ok: false, reason: 'malformed_json' };
    }
  }
  if (!mayBeConversation(line)) {
    // Not conversation for sure; only its type is wanted, for counting. The top-level `type` may follow a
    // nested object (attachments put theirs last), so any known type literal in the line will do.
    for (const match of line.matchAll(TYPE_LITERALS)) {
      if (KNOWN_NON_CONVERSATION_TYPES.has(match[1]) && !RUN_MARK_TYPES.has(match[1]) && !line.includes(HOOK_BLOCK_LITERAL)) return { ok: 'ignored', type: match[1] };
    }
  }
  let row: unknown;
  try {
    row = JSON.parse(line);
  } catch {
    return { ok: false, reason: 'malformed_json' };
  }
  return classifyRow(row);
}

export function classifyRow(row: unknown): ParseResult {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return { ok: false, reason: 'not_object' };
  const r = row as Record<string, unknown>;
  const type = r.type;
  if (typeof type !== 'string') return { ok: false, reason: 'missing_fields' };
  if (type === 'permission-mode') return permissionModeEntry(r);
  if (type === 'attachment') return hookBlockEntry(r);
  if (type === 'cost-state') return costStateEntry(r);
  if (type === 'queue-operation') return queueOperationEntry(r);
  if (type === 'summary') return summaryEntry(r);
  if (!(CONVERSATION_TYPES as readonly string[]).includes(type)) {
    return KNOWN_NON_CONVERSATION_TYPES.has(type) ? { ok: 'ignored', type } : { ok: false, reason: 'unknown_type', type };
  }
  const timeMs = typeof r.timestamp === 'string' ? Date.parse(r.timestamp) : NaN;
  if (typeof r.uuid !== 'string' || typeof r.sessionId !== 'string' || Number.isNaN(timeMs)) {
    return { ok: false, reason: 'missing_fields', type };
  }
  const message = r.message as TranscriptEntry['message'] | undefined;
  if (type !== 'system' && (typeof message !== 'object' || message === null || message.content === undefined)) {
    return { ok: false, reason: 'missing_fields', type };
  }
  const entry: TranscriptEntry = {
    type: type as ConversationType,
    uuid: r.uuid,
    parentUuid: typeof r.parentUuid === 'string' ? r.parentUuid : null,
    sessionId: r.sessionId,
    timeMs,
    isSidechain: r.isSidechain === true,
    isMeta: r.isMeta === true,
    isCompactSummary: r.isCompactSummary === true,
    isApiErrorMessage: r.isApiErrorMessage === true,
    agentId: optionalString(r.agentId),
    promptId: optionalString(r.promptId),
    turnPosition: typeof r.turnPosition === 'object' && r.turnPosition !== null ? (r.turnPosition as TranscriptEntry['turnPosition']) : undefined,
    requestId: optionalString(r.requestId),
    forkedFromSessionId: optionalString((r.forkedFrom as { sessionId?: unknown } | undefined)?.sessionId),
    cwd: optionalString(r.cwd),
    gitBranch: optionalString(r.gitBranch),
    version: optionalString(r.version),
    entrypoint: optionalString(r.entrypoint),
    permissionMode: optionalString(r.permissionMode),
    subtype: optionalString(r.subtype),
    systemContent: optionalString(r.content),
    compactMetadata: r.compactMetadata as TranscriptEntry['compactMetadata'],
    message: message ?? { content: '' },
    toolUseResult: r.toolUseResult,
    permissionDecision:
      typeof r.permissionDecision === 'object' && r.permissionDecision !== null ? (r.permissionDecision as TranscriptEntry['permissionDecision']) : undefined,
    toolDenialKind: optionalString(r.toolDenialKind),
    toolDenialBeforeRun: r.toolDenialBeforeRun === true ? true : undefined,
    costUSD: typeof r.costUSD === 'number' && Number.isFinite(r.costUSD) ? r.costUSD : undefined,
  };
  return { ok: true, entry };
}

const HOOK_BLOCK_LITERAL = '"hook_blocking_error"';
/** Rows that carry no conversation but mark where a resumed run starts (read whole, not only counted). */
const RUN_MARK_TYPES = new Set(['queue-operation', 'summary']);
