// Session starts and ends: a log record and a point each. A start the transcript and a SessionStart hook both
// tell is one start (same id): the hook's source replaces the inferred one (SessionStartConfirmed).
import type { HookSessionStarted, SessionEnded, SessionStarted, SessionStartConfirmed } from '../../events.js';
import type { Attributes, TelemetryBatch } from '../../model.js';
import { abandonedSessionEndSeed, ATTRS, EVENTS, hookSessionEndSeed, hookSessionStartSeed, METRICS, sessionStartSeed } from '../../semconv.js';
import { logRecord, point } from './records.js';

/** The confirmations of a round, by the start they confirm. */
export function confirmationsOf(confirmed: readonly SessionStartConfirmed[]): Map<string, string> {
  return new Map(confirmed.map((start) => [sessionStartSeed(start.sessionId, start.messageUuid), start.source]));
}

/** `confirmedSource`: the source a SessionStart hook gave the same start. */
export function encodeSessionStart(start: SessionStarted, out: TelemetryBatch, confirmedSource: string | undefined): void {
  const attributes: Attributes = { source: start.source, 'message.uuid': start.messageUuid };
  if (start.promptId) attributes['prompt.id'] = start.promptId;
  if (start.permissionMode) attributes[ATTRS.permissionMode] = start.permissionMode;
  if (confirmedSource !== undefined) Object.assign(attributes, { source: confirmedSource, [ATTRS.startOrigin]: 'hook' });
  startRecords({ sessionId: start.sessionId, timeMs: start.timeMs, attributes, seed: sessionStartSeed(start.sessionId, start.messageUuid) }, out);
}

export function encodeHookSessionStart(start: HookSessionStarted, out: TelemetryBatch): void {
  const { sessionId, messageUuid } = start;
  const seed = messageUuid !== undefined ? sessionStartSeed(sessionId, messageUuid) : hookSessionStartSeed(sessionId, start.firedAtNs);
  startRecords({ sessionId, timeMs: start.timeMs, attributes: { source: start.source, [ATTRS.startOrigin]: 'hook' }, seed }, out);
}

function startRecords({ sessionId, timeMs, attributes, seed }: { sessionId: string; timeMs: number; attributes: Attributes; seed: string }, out: TelemetryBatch): void {
  out.logs.push(logRecord({ eventName: EVENTS.sessionStarted, severity: 'INFO', timeMs, sessionId, attributes, idSeed: seed }));
  out.metrics.push(point(METRICS.sessionStarts, { timeMs, value: 1, attributes: { source: attributes.source }, idSeed: seed }));
}

export function encodeSessionEnd(end: SessionEnded, out: TelemetryBatch): void {
  const { sessionId, timeMs, reason } = end;
  const abandoned = end.detectionId !== undefined;
  const seed = abandoned ? abandonedSessionEndSeed(sessionId, end.detectionId!) : hookSessionEndSeed(sessionId, end.hookFile ?? '');
  const attributes: Attributes = abandoned ? { reason, cause: end.cause ?? '' } : { reason };
  out.logs.push(logRecord({ eventName: EVENTS.sessionEnded, severity: abandoned ? 'WARN' : 'INFO', timeMs, sessionId, attributes, idSeed: seed }));
  out.metrics.push(point(METRICS.sessionEnds, { timeMs, value: 1, attributes: { reason }, idSeed: seed }));
}
