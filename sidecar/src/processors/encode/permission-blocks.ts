// A permission block, told by the transcript (ToolCallEnded with a block source) or by the hooks
// (PermissionBlocked): one log and one point, whose ids come from the call, so the two tell one block.
import type { PermissionBlocked } from '../../events.js';
import type { Attributes, TelemetryBatch } from '../../model.js';
import { ATTRS, EVENTS, METRICS, permissionBlockSeed, toolSpanId } from '../../semconv.js';
import { logRecord, point } from './records.js';

export interface Block {
  sessionId: string;
  traceId: string;
  spanId: string;
  toolUseId: string;
  toolName: string;
  source: string;
  timeMs: number;
  /** The log record's attributes. */
  attributes: Attributes;
}

export function encodeBlock(block: Block, out: TelemetryBatch): void {
  const { sessionId, traceId, spanId, timeMs, attributes } = block;
  const idSeed = permissionBlockSeed(toolSpanId(block.toolUseId));
  out.logs.push(logRecord({ eventName: EVENTS.permissionBlocked, severity: 'WARN', timeMs, sessionId, traceId, spanId, attributes, idSeed }));
  out.metrics.push(point(METRICS.permissionBlocks, { timeMs, value: 1, attributes: { [ATTRS.toolName]: block.toolName, source: block.source }, traceId, spanId, idSeed }));
}

export function encodeHookBlock(blocked: PermissionBlocked, out: TelemetryBatch): void {
  const { toolName, toolUseId, source } = blocked;
  const attributes = { [ATTRS.toolName]: toolName, [ATTRS.toolUseId]: toolUseId, outcome: 'denied', source, [ATTRS.blockOrigin]: 'hook' };
  encodeBlock({ ...blocked, attributes }, out);
}
