// Hook events as the correlation reads them: the fields it needs pulled out of the payload, the span event /
// log attributes (no content) and the log body. A PermissionRequest carries no tool_use_id: it is paired with the
// PreToolUse just before it in the same session, same tool and input (or an input that holds that call's input and
// more: Codex's adds the escalation's `description`).
import type { Attributes, ContentLevel } from '../model.js';
import type { HookEvent } from '../records/hook-spool.js';
import { ATTRS } from '../semconv.js';

/** A hook event with the fields the correlation needs pulled out of its payload. */
export interface Hook {
  event: HookEvent;
  name: string;
  sessionId: string;
  timeMs: number;
  promptId?: string;
  toolUseId?: string;
  toolName?: string;
  /** Span event / log attributes (no content). */
  attributes: Attributes;
  /** Log body (content: masked and capped downstream; empty at content level `none`). */
  body: string;
}

/** Turns spool events into `Hook`s; remembers each session's PreToolUse calls to pair PermissionRequest. */
export class HookReader {
  /** Per session: PreToolUse calls by tool name + input, and the input itself. */
  private readonly lastPreToolUse = new Map<string, Map<string, { toolUseId: string; toolName?: string; input: unknown }>>();

  constructor(private readonly contentLevel: ContentLevel) {}

  normalize(event: HookEvent): Hook {
    const p = event.payload;
    const name = String(p.hook_event_name);
    const sessionId = String(p.session_id);
    const str = (key: string) => (typeof p[key] === 'string' ? (p[key] as string) : undefined);
    const toolName = str('tool_name');
    let toolUseId = str('tool_use_id');
    const inputKey = `${toolName}\u0000${JSON.stringify(p.tool_input ?? null)}`;
    if (name === 'PreToolUse' && toolUseId) {
      let calls = this.lastPreToolUse.get(sessionId);
      if (!calls) this.lastPreToolUse.set(sessionId, (calls = new Map()));
      calls.delete(inputKey); // the latest last
      calls.set(inputKey, { toolUseId, toolName, input: p.tool_input });
    }
    if (name === 'PermissionRequest' && !toolUseId) toolUseId = this.pairedCall(sessionId, inputKey, toolName, p.tool_input);
    const attributes: Attributes = { 'hook.event': name, 'ccotel.hook.fired_at_ns': event.firedAtNs };
    const copy = (from: string, to = from) => {
      const value = p[from];
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') attributes[to] = value;
    };
    copy('prompt_id', ATTRS.promptId);
    copy('agent_id', ATTRS.agentId);
    copy('agent_type', 'ccotel.agent.type');
    copy('permission_mode');
    copy('source');
    copy('reason');
    copy('trigger');
    copy('notification_type');
    copy('is_interrupt');
    copy('duration_ms');
    copy('stop_hook_active');
    copy('file_path'); // ConfigChange: the settings file; joined onto its change (correlate-settings.ts)
    if (toolName) attributes[ATTRS.toolName] = toolName;
    if (toolUseId) attributes[ATTRS.toolUseId] = toolUseId;
    if (typeof p.error === 'string') attributes.error = name === 'PostToolUseFailure' ? firstLine(p.error) : p.error;
    if (p.tool_response !== undefined) attributes[ATTRS.toolResponseLength] = responseLength(p.tool_response);
    if (Array.isArray(p.tool_calls)) attributes['ccotel.tool.calls'] = p.tool_calls.length;
    return {
      event,
      name,
      sessionId,
      timeMs: event.firedAtMs,
      promptId: str('prompt_id'),
      toolUseId,
      toolName,
      attributes,
      body: this.contentLevel === 'none' ? '' : bodyOf(name, p),
    };
  }

  /** The PreToolUse a PermissionRequest asks about: the same input, else the latest whose input this one holds. */
  private pairedCall(sessionId: string, inputKey: string, toolName: string | undefined, input: unknown): string | undefined {
    const calls = this.lastPreToolUse.get(sessionId);
    const exact = calls?.get(inputKey);
    if (exact) return exact.toolUseId;
    const held = [...(calls?.values() ?? [])].findLast((call) => call.toolName === toolName && holds(input, call.input));
    return held?.toolUseId;
  }
}

/** Every field of the object `part` is in the object `whole`, with the same value. */
function holds(whole: unknown, part: unknown): boolean {
  if (typeof whole !== 'object' || whole === null || typeof part !== 'object' || part === null) return false;
  const fields = Object.entries(part);
  return fields.length > 0 && fields.every(([key, value]) => JSON.stringify((whole as Record<string, unknown>)[key]) === JSON.stringify(value));
}

/**
 * PreToolUse → pre_tool_use. A name that is not capitalised words (a hostile or unknown event, e.g. one
 * ending in an access key) is kept as written: lower-cased, a secret would lose the shape masking knows it by.
 */
export function snakeCase(name: string): string {
  if (!/^(?:[A-Z][a-z]+)+$/.test(name)) return name;
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

function bodyOf(name: string, p: Record<string, unknown>): string {
  if (name === 'UserPromptSubmit' && typeof p.prompt === 'string') return p.prompt;
  if (name === 'Notification' && typeof p.message === 'string') return p.message;
  if (name === 'PostToolUseFailure' && typeof p.error === 'string') return p.error;
  if (name === 'StopFailure') return JSON.stringify(p.error_details ?? p.error ?? '');
  if (p.tool_input !== undefined) return JSON.stringify(p.tool_input);
  return '';
}

/** Characters of output a tool produced (Bash: stdout + stderr), as the hook saw it before any truncation. */
function responseLength(response: unknown): number {
  if (typeof response === 'string') return response.length;
  if (typeof response !== 'object' || response === null) return 0;
  const r = response as { stdout?: unknown; stderr?: unknown };
  if (typeof r.stdout === 'string' || typeof r.stderr === 'string') return String(r.stdout ?? '').length + String(r.stderr ?? '').length;
  return JSON.stringify(response).length;
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? '';
}
