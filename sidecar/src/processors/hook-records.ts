// The records the hook correlator emits: a `ccotel.hook.*` log per hook event, and the DESIGN records hooks
// imply (session starts and ends, permission blocks), with the ids the transcript correlator gives the same facts.
import type { SpanContext } from '../events.js';
import type { Attributes, LogRecord, MetricPoint } from '../model.js';
import { recordIdOf } from '../ids.js';
import { ATTRS, EVENTS, HOOK_EVENT_PREFIX, hookSessionEndSeed, logIdOf, METRICS, metricPoint, permissionBlockSeed, pointIdOf, toolSpanId } from '../semconv.js';
import { snakeCase, type Hook } from './hook-input.js';

/** What the hooks told about one tool call, gathered until its span goes out. */
export interface ToolEvidence {
  sessionId: string;
  toolName: string;
  permissionRequested: boolean;
  permissionDenied: boolean;
  ran: boolean;
}

export interface LogAndPoint {
  log: LogRecord;
  point: MetricPoint;
}

export const NO_SPAN: SpanContext = { traceId: '', spanId: '' };
const SEVERITY: Record<string, LogRecord['severity']> = { PostToolUseFailure: 'WARN', PermissionDenied: 'WARN', StopFailure: 'ERROR' };

interface SessionLogFields {
  eventName: string;
  id: string;
  timeMs: number;
  sessionId: string;
  severity: LogRecord['severity'];
  body?: string;
  attributes: Attributes;
  context?: SpanContext;
}

function sessionLog(fields: SessionLogFields): LogRecord {
  const { traceId, spanId } = fields.context ?? NO_SPAN;
  return {
    id: fields.id,
    timeMs: fields.timeMs,
    eventName: fields.eventName,
    severity: fields.severity,
    traceId,
    spanId,
    body: fields.body ?? '',
    attributes: { [ATTRS.sessionId]: fields.sessionId, ...fields.attributes },
  };
}

/** The `ccotel.hook.<event in snake_case>` record of a hook, in the trace context of the span it belongs to. */
export function hookLog(hook: Hook, context: SpanContext = NO_SPAN): LogRecord {
  return sessionLog({
    eventName: `${HOOK_EVENT_PREFIX}${snakeCase(hook.name)}`,
    id: recordIdOf('hook', hook.event.file),
    timeMs: hook.timeMs,
    sessionId: hook.sessionId,
    severity: SEVERITY[hook.name] ?? 'INFO',
    body: hook.body,
    attributes: hook.attributes,
    context,
  });
}

/** A session start the hook told, under `seed` (semconv: the transcript's seed for the same start). */
export function sessionStartRecords(hook: Hook, timeMs: number, seed: string): LogAndPoint {
  const source = String(hook.attributes.source ?? 'unknown');
  const attributes = { source, [ATTRS.startOrigin]: 'hook' };
  return {
    log: sessionLog({ eventName: EVENTS.sessionStarted, id: logIdOf(EVENTS.sessionStarted, seed), timeMs, sessionId: hook.sessionId, severity: 'INFO', attributes }),
    point: metricPoint(METRICS.sessionStarts, { id: pointIdOf(METRICS.sessionStarts, seed), timeMs, attributes: { source } }),
  };
}

export function sessionEndRecords(hook: Hook): LogAndPoint {
  const reason = String(hook.attributes.reason ?? 'unknown');
  const seed = hookSessionEndSeed(hook.sessionId, hook.event.file);
  return {
    log: sessionLog({ eventName: EVENTS.sessionEnded, id: logIdOf(EVENTS.sessionEnded, seed), timeMs: hook.timeMs, sessionId: hook.sessionId, severity: 'INFO', attributes: { reason } }),
    point: metricPoint(METRICS.sessionEnds, { id: pointIdOf(METRICS.sessionEnds, seed), timeMs: hook.timeMs, attributes: { reason } }),
  };
}

export interface HookBlock {
  toolUseId: string;
  evidence: ToolEvidence;
  context: SpanContext;
  timeMs: number;
}

/** The permission block the hooks tell of a call, if they tell one: same ids as the transcript correlator's. */
export function permissionBlockRecords({ toolUseId, evidence, context, timeMs }: HookBlock): LogAndPoint | undefined {
  const denied = evidence.permissionDenied || (evidence.permissionRequested && !evidence.ran);
  if (!denied) return undefined;
  // PermissionDenied fires for auto mode's refusals (rules and hooks refuse without it, 2.1.332).
  const source = evidence.permissionDenied ? 'classifier' : 'user';
  const seed = permissionBlockSeed(toolSpanId(toolUseId));
  const attributes = { [ATTRS.toolName]: evidence.toolName, [ATTRS.toolUseId]: toolUseId, outcome: 'denied', source, [ATTRS.blockOrigin]: 'hook' };
  return {
    log: sessionLog({ eventName: EVENTS.permissionBlocked, id: logIdOf(EVENTS.permissionBlocked, seed), timeMs, sessionId: evidence.sessionId, severity: 'WARN', attributes, context }),
    point: metricPoint(METRICS.permissionBlocks, { id: pointIdOf(METRICS.permissionBlocks, seed), timeMs, attributes: { [ATTRS.toolName]: evidence.toolName, source }, ...context }),
  };
}
