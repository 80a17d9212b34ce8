// Hook events: joined onto a span (HookAttached), span events in time order and a failure as the span's error;
// and each hook's own `ccotel.hook.<event in snake_case>` record (HookRecorded).
import type { HookAttached, HookRecorded } from '../../events.js';
import type { LogRecord, SpanRecord, TelemetryBatch } from '../../model.js';
import { ATTRS, HOOK_EVENT_PREFIX, hookRecordId } from '../../semconv.js';
import { snakeCase } from '../hook-input.js';

const SEVERITY: Record<string, LogRecord['severity']> = { PostToolUseFailure: 'WARN', PermissionDenied: 'WARN', StopFailure: 'ERROR' };

export function attachHooks(span: SpanRecord, attached: readonly HookAttached[] | undefined): void {
  if (!attached) return;
  for (const hook of attached) {
    span.events.push(hook.event);
    if (hook.failure === undefined) continue;
    span.status = 'error';
    span.statusMessage = hook.failure;
  }
  span.events.sort((a, b) => a.timeMs - b.timeMs);
}

export function encodeHookRecord(hook: HookRecorded, out: TelemetryBatch): void {
  out.logs.push({
    id: hookRecordId(hook.file),
    timeMs: hook.timeMs,
    eventName: `${HOOK_EVENT_PREFIX}${snakeCase(hook.name)}`,
    severity: SEVERITY[hook.name] ?? 'INFO',
    traceId: hook.traceId,
    spanId: hook.spanId,
    body: hook.body,
    attributes: { [ATTRS.sessionId]: hook.sessionId, ...hook.attributes },
  });
}
