// Entries of the rows that carry no conversation but matter to the correlation: a hook's blocking error, Claude
// Code's cost state, the marks of a resumed run (queue operations, summaries) and permission-mode switches.
import type { ParseResult, TranscriptEntry } from './transcript-entry.js';
import { parseCostState } from './reported-cost.js';

/** Of all attachments, only a hook's blocking error matters: it turns the call it names into a blocked one. */
export function hookBlockEntry(r: Record<string, unknown>): ParseResult {
  const attachment = r.attachment as { type?: unknown; toolUseID?: unknown; hookEvent?: unknown; hookName?: unknown } | undefined;
  const timeMs = typeof r.timestamp === 'string' ? Date.parse(r.timestamp) : NaN;
  if (attachment?.type !== 'hook_blocking_error' || typeof attachment.toolUseID !== 'string') return { ok: 'ignored', type: 'attachment' };
  if (typeof r.uuid !== 'string' || typeof r.sessionId !== 'string' || Number.isNaN(timeMs)) return { ok: false, reason: 'missing_fields', type: 'attachment' };
  return {
    ok: true,
    entry: {
      ...bareEntry('attachment', r),
      timeMs,
      hookBlock: { toolUseId: attachment.toolUseID, hookEvent: String(attachment.hookEvent ?? ''), hookName: String(attachment.hookName ?? '') },
    },
  };
}

/**
 * A `cost-state` row has no timestamp: it gets the end of the process it describes when it tells it, else NaN
 * (the correlator stamps it with the session's last row). One without a total cost says nothing to use.
 */
export function costStateEntry(r: Record<string, unknown>): ParseResult {
  const costState = parseCostState(r);
  if (!costState) return { ok: 'ignored', type: 'cost-state' };
  if (typeof r.sessionId !== 'string') return { ok: false, reason: 'missing_fields', type: 'cost-state' };
  const end = Number(r.startTime) + Number(r.totalDuration);
  return { ok: true, entry: { ...bareEntry('cost-state', r), uuid: '', timeMs: Number.isFinite(end) ? end : NaN, costState } };
}

/** `{"type":"queue-operation","operation":…,"timestamp":…,"sessionId":…}`: print mode queues each run's prompt. */
export function queueOperationEntry(r: Record<string, unknown>): ParseResult {
  const timeMs = typeof r.timestamp === 'string' ? Date.parse(r.timestamp) : NaN;
  if (typeof r.sessionId !== 'string' || Number.isNaN(timeMs)) return { ok: 'ignored', type: 'queue-operation' };
  return { ok: true, entry: { ...bareEntry('queue-operation', r), uuid: '', timeMs } };
}

/** `{"type":"summary","summary":…,"leafUuid":…}`: 1.0.x / 2.0.0 label the conversation that ends at the leaf. */
export function summaryEntry(r: Record<string, unknown>): ParseResult {
  const leafUuid = optionalString(r.leafUuid);
  if (leafUuid === undefined) return { ok: 'ignored', type: 'summary' };
  return { ok: true, entry: { ...bareEntry('summary', r), uuid: '', sessionId: '', leafUuid } };
}

/** `{"type":"permission-mode","permissionMode":…,"sessionId":…}`: a switch of permission mode (often no timestamp, no uuid). */
export function permissionModeEntry(r: Record<string, unknown>): ParseResult {
  const permissionMode = optionalString(r.permissionMode);
  if (permissionMode === undefined || typeof r.sessionId !== 'string') return { ok: false, reason: 'missing_fields', type: 'permission-mode' };
  return {
    ok: true,
    entry: {
      ...bareEntry('permission-mode', r),
      uuid: optionalString(r.uuid) ?? '',
      timeMs: typeof r.timestamp === 'string' ? Date.parse(r.timestamp) : NaN,
      permissionMode,
    },
  };
}

/** The envelope of a row that carries no message (attachments, permission-mode rows). */
function bareEntry(type: TranscriptEntry['type'], r: Record<string, unknown>): TranscriptEntry {
  return {
    type,
    uuid: String(r.uuid),
    parentUuid: typeof r.parentUuid === 'string' ? r.parentUuid : null,
    sessionId: String(r.sessionId),
    timeMs: NaN,
    isSidechain: r.isSidechain === true,
    isMeta: false,
    isCompactSummary: false,
    isApiErrorMessage: false,
    agentId: optionalString(r.agentId),
    message: { content: '' },
  };
}

export function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}
