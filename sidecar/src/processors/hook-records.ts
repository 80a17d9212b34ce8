// What the hook correlator tells of the hooks: a hook event's record in the trace context of its span, and the
// DESIGN facts hooks imply (session starts and ends, permission blocks), as events the encoder turns into records
// with the ids the transcript correlator's events of the same facts get (encode/sessions.ts, permission-blocks.ts).
import type { HookRecorded, HookSessionStarted, PermissionBlocked, SessionEnded, SpanContext } from '../events.js';
import type { AgentName } from '../semconv.js';
import type { Hook } from './hook-input.js';

/** What the hooks told about one tool call, gathered until its span goes out. */
export interface ToolEvidence {
  sessionId: string;
  /** The agent its hooks were installed for (HookEvent.agent). */
  agent?: AgentName;
  toolName: string;
  permissionRequested: boolean;
  permissionDenied: boolean;
  ran: boolean;
  /** The agent's own telemetry said the call was approved: one asked for and never run was cut short, not refused. */
  approved: boolean;
}

export const NO_SPAN: SpanContext = { traceId: '', spanId: '' };

/** The record of a hook, in the trace context of the span it belongs to. */
export function hookRecorded(hook: Hook, context: SpanContext = NO_SPAN): HookRecorded {
  const { name, sessionId, timeMs, attributes, body } = hook;
  return { kind: 'HookRecorded', name, sessionId, agent: hook.event.agent, timeMs, attributes, body, file: hook.event.file, traceId: context.traceId, spanId: context.spanId };
}

/** A session start the hook told: at the prompt `messageUuid` it preceded, or (none) one of its own. */
export function hookSessionStart(hook: Hook, timeMs: number, messageUuid?: string): HookSessionStarted {
  return { kind: 'HookSessionStarted', sessionId: hook.sessionId, agent: hook.event.agent, source: String(hook.attributes.source ?? 'unknown'), timeMs, messageUuid, firedAtNs: hook.event.firedAtNs };
}

export function hookSessionEnd(hook: Hook): SessionEnded {
  return { kind: 'SessionEnded', sessionId: hook.sessionId, agent: hook.event.agent, reason: String(hook.attributes.reason ?? 'unknown'), timeMs: hook.timeMs, hookFile: hook.event.file };
}

export interface HookBlock {
  toolUseId: string;
  evidence: ToolEvidence;
  context: SpanContext;
  timeMs: number;
}

/** The permission block the hooks tell of a call, if they tell one. */
export function hookPermissionBlock({ toolUseId, evidence, context, timeMs }: HookBlock): PermissionBlocked | undefined {
  const denied = evidence.permissionDenied || (evidence.permissionRequested && !evidence.ran && !evidence.approved);
  if (!denied) return undefined;
  // PermissionDenied fires for auto mode's refusals (rules and hooks refuse without it, 2.1.332).
  const source = evidence.permissionDenied ? 'classifier' : 'user';
  return { kind: 'PermissionBlocked', ...context, sessionId: evidence.sessionId, agent: evidence.agent, toolUseId, toolName: evidence.toolName, source, timeMs };
}
