// Each session's state over time, from its hook events (HookFired) and the abandoned-session detections:
//   idle (started, or a turn finished) · running (a prompt or a tool call in progress) · waiting_for_input (a
//   permission prompt, or Claude Code's "waiting for your input" notification) · resumed · ended (with the
//   SessionEnd reason) · abandoned (with the likely cause).
// Every change is told as SessionStateChanged (encode/failures.ts: a `ccotel.session.state_changed` log record);
// its id comes from the event that caused it, so a re-read reports each change once.
import { recordIdOf } from '../ids.js';
import type { CorrelationEvent, HookFired, Join, Joined } from '../events.js';

export type SessionState = 'idle' | 'running' | 'waiting_for_input' | 'resumed' | 'ended' | 'abandoned';

const RUNNING_EVENTS = new Set(['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'SubagentStart', 'PreCompact']);
const WAITING_NOTIFICATIONS = new Set(['permission_prompt', 'idle_prompt', 'elicitation_dialog']);

export class SessionStateTracker implements Join {
  readonly consumes = ['HookFired', 'FailureDetected'] as const;
  readonly produces = ['SessionStateChanged'] as const;
  private readonly states = new Map<string, SessionState>();
  private out: CorrelationEvent[] = [];

  observe(events: readonly CorrelationEvent[]): void {
    for (const event of events) {
      if (event.kind === 'HookFired') this.onHook(event);
      else if (event.kind === 'FailureDetected' && event.mode === 'abandoned_session') {
        this.change(event.sessionId, 'abandoned', event.timeMs, recordIdOf('session-state', event.id), event.cause ?? '');
      }
    }
  }

  drain(): Joined {
    const events = this.out;
    this.out = [];
    return { events, acks: [] };
  }

  finish(): void {}

  private onHook(hook: HookFired): void {
    const next = stateAfter(hook);
    if (!next) return;
    const reason = hook.name === 'SessionEnd' ? String(hook.attributes.reason ?? 'unknown') : hook.name === 'Notification' ? String(hook.attributes.notification_type ?? '') : hook.name;
    this.change(hook.sessionId, next.state, hook.timeMs, recordIdOf('session-state', hook.file), reason);
  }

  private change(sessionId: string, state: SessionState, timeMs: number, id: string, reason: string): void {
    const previous = this.states.get(sessionId);
    if (previous === state) return;
    // A finished session is forgotten (memory stays bounded); a resume brings it back.
    if (state === 'ended' || state === 'abandoned') this.states.delete(sessionId);
    else this.states.set(sessionId, state);
    this.out.push({ kind: 'SessionStateChanged', id, sessionId, state, previousState: previous, reason, timeMs });
  }
}

function stateAfter(hook: HookFired): { state: SessionState } | undefined {
  switch (hook.name) {
    case 'SessionStart':
      return { state: hook.attributes.source === 'resume' ? 'resumed' : 'idle' };
    case 'SessionEnd':
      return { state: 'ended' };
    case 'Stop':
    case 'StopFailure':
      return { state: 'idle' };
    case 'PermissionRequest':
      return { state: 'waiting_for_input' };
    case 'Notification':
      return WAITING_NOTIFICATIONS.has(String(hook.attributes.notification_type ?? '')) ? { state: 'waiting_for_input' } : undefined;
    default:
      return RUNNING_EVENTS.has(hook.name) ? { state: 'running' } : undefined;
  }
}
