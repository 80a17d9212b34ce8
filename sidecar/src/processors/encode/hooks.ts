// Hook events joined onto a span (HookAttached): span events in time order, and a failure as the span's error.
import type { HookAttached } from '../../events.js';
import type { SpanRecord } from '../../model.js';

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
