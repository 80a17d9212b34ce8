// Parse one transcript line into a typed entry, or say why it was skipped.
// Most bytes of a real transcript are not conversation (attachments with full prompt snapshots, request
// shapes, cost state): those rows are recognised by their type literal and skipped without a full parse.

import { costStateEntry, hookBlockEntry, optionalString, permissionModeEntry, queueOperationEntry, summaryEntry } from './non-conversation-rows.js';
import { CONVERSATION_TYPES, type ConversationType, type ParseResult, type TranscriptEntry } from './transcript-entry.js';
import { isJsonObject, parseJsonObject } from '../records/json-object.js';

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

const TYPE_PREFIX = Buffer.from('"type":"');
const QUOTE = 0x22;
/** A conversation row always contains its type literal; a line with none of them is never one. */
const CONVERSATION_LITERALS = ['"type":"user"', '"type":"assistant"', '"type":"system"'].map((literal) => Buffer.from(literal));
const LONGEST_TYPE = Math.max(...[...KNOWN_NON_CONVERSATION_TYPES].map((type) => type.length));

/**
 * The type of a row that is surely not conversation, read from its bytes without decoding them (most bytes of a real
 * transcript are such rows), or undefined: the row is to be parsed. The top-level `type` may follow a nested object
 * (attachments put theirs last), so any known type literal in the row will do.
 */
export function ignoredRowType(bytes: Buffer): string | undefined {
  if (bytes[0] !== 0x7b /* { */ || bytes[bytes.length - 1] !== 0x7d /* } */) return undefined;
  if (CONVERSATION_LITERALS.some((literal) => bytes.includes(literal)) || bytes.includes(HOOK_BLOCK_LITERAL)) return undefined;
  for (let at = bytes.indexOf(TYPE_PREFIX); at !== -1; at = bytes.indexOf(TYPE_PREFIX, at + TYPE_PREFIX.length)) {
    const from = at + TYPE_PREFIX.length;
    const to = bytes.indexOf(QUOTE, from);
    if (to === -1) return undefined;
    if (to - from > LONGEST_TYPE) continue;
    const type = bytes.toString('latin1', from, to);
    if (KNOWN_NON_CONVERSATION_TYPES.has(type) && !RUN_MARK_TYPES.has(type)) return type;
  }
  return undefined;
}

export function parseTranscriptLine(line: string): ParseResult {
  const ignored = ignoredRowType(Buffer.from(line));
  return ignored === undefined ? parseRow(line) : { ok: 'ignored', type: ignored };
}

/** Parse a row whose bytes `ignoredRowType` did not recognise. */
export function parseRow(line: string): ParseResult {
  const parsed = parseJsonObject(line);
  return parsed.ok ? classifyRow(parsed.value) : parsed;
}

export function classifyRow(row: unknown): ParseResult {
  if (!isJsonObject(row)) return { ok: false, reason: 'not_object' };
  const r = row;
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
    endsTurn: endsTurn(r) || undefined,
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

function endsTurn(r: Record<string, unknown>): boolean {
  if (r.type !== 'system') return false;
  if (r.subtype === 'turn_duration') return true;
  // Interactive sessions write turn_duration after it: the turn ends there, as it did at the next prompt.
  return r.subtype === 'stop_hook_summary' && r.entrypoint !== 'cli' && Array.isArray(r.hookErrors) && r.hookErrors.length === 0;
}

const HOOK_BLOCK_LITERAL = '"hook_blocking_error"';
/** Rows that carry no conversation but mark where a resumed run starts (read whole, not only counted). */
const RUN_MARK_TYPES = new Set(['queue-operation', 'summary']);
