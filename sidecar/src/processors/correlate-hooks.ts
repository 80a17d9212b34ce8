// Join Claude Code hook events (from the spool) onto the transcript traces. Each hook event becomes:
// - a span event on the span it belongs to: tool events on the `execute_tool` span of their tool_use_id
//   (PermissionRequest has none: it is paired with the PreToolUse just before it in the same session, same tool
//   and input), turn events on the turn root of their prompt_id (else the turn of the session at that time);
//   events wait until that span goes out; one arriving after it went out is a log record only (counted `late`);
// - a log record `ccotel.hook.<event in snake_case>` with that span's trace context;
// - the DESIGN records it implies: SessionStart gives the session's start (merged with the one the transcript
//   infers for the same prompt: same id, the hook's `source` wins, so starts never double); SessionEnd gives
//   `ccotel.session.ended` / `ccotel.session.ends{reason}`; a PermissionDenied, or a PermissionRequest with no
//   PostToolUse / PostToolUseFailure, gives a permission block when the transcript did not already call the
//   call denied (same id as the transcript's block: one block per tool_use_id).
// A spool file is acknowledged (deleted) once everything built from it is in the output.
import { recordIdOf, spanIdOf } from '../ids.js';
import type { Ack, Attributes, ContentLevel, Join, LogRecord, MetricPoint, SpanEvent, SpanRecord, TelemetryBatch } from '../model.js';
import { emptyBatch } from '../model.js';
import type { HookEvent } from '../records/hook-spool.js';

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

export type HookListener = (hook: Hook) => void;

export interface HookCorrelatorOptions {
  contentLevel: ContentLevel;
  /** Told about every hook as it is added (session state, detectors). */
  listeners?: HookListener[];
}

export interface HookCorrelatorStats {
  events: number;
  attached: number;
  /** Arrived after their span went out: log record only. */
  late: number;
  /** Their span never came (end of input, or given up waiting): log record only. */
  unmatched: number;
}

const TOOL_EVENTS = new Set(['PreToolUse', 'PermissionRequest', 'PostToolUse', 'PostToolUseFailure', 'PermissionDenied']);
const TURN_EVENTS = new Set([
  'UserPromptSubmit',
  'UserPromptExpansion',
  'Stop',
  'StopFailure',
  'Notification',
  'PreCompact',
  'PostCompact',
  'SubagentStart',
  'SubagentStop',
  'PostToolBatch',
  'TaskCreated',
  'TaskCompleted',
]);
const SEVERITY: Record<string, LogRecord['severity']> = { PostToolUseFailure: 'WARN', PermissionDenied: 'WARN', StopFailure: 'ERROR' };
/** A turn event without prompt_id (Claude Code < 2.1.196) belongs to the turn whose time span, widened by this, holds it. */
const TURN_SKEW_MS = 2_000;
/** Ids of spans already out, remembered for late events (bounded). */
const REMEMBER_SPANS = 100_000;

interface SpanContext {
  traceId: string;
  spanId: string;
}

interface ToolEvidence {
  sessionId: string;
  toolName: string;
  permissionRequested: boolean;
  permissionDenied: boolean;
  ran: boolean;
}

export class HookCorrelator implements Join {
  readonly stats: HookCorrelatorStats = { events: 0, attached: 0, late: 0, unmatched: 0 };
  private out: TelemetryBatch = emptyBatch();
  private acks: Ack[] = [];
  private readonly toolWaiting = new Map<string, Hook[]>();
  private turnWaiting: Hook[] = [];
  /** SessionStart hooks waiting for the first prompt after them, by session, in firing order. */
  private readonly startWaiting = new Map<string, Hook[]>();
  private readonly evidence = new Map<string, ToolEvidence>();
  /** Per session: PreToolUse calls by tool name + input, for pairing PermissionRequest. */
  private readonly lastPreToolUse = new Map<string, Map<string, string>>();
  private readonly toolsOut = new Map<string, SpanContext>();
  private readonly turnsOut = new Map<string, SpanContext>();
  /** Sessions the transcript already reported as started by a fork (its copy was read before the hook came). */
  private readonly forksFromTranscript = new Map<string, true>();

  constructor(private readonly options: HookCorrelatorOptions) {}

  add(event: HookEvent): void {
    const hook = this.normalize(event);
    this.stats.events++;
    for (const listener of this.options.listeners ?? []) listener(hook);
    if (hook.name === 'SessionStart') {
      this.push(this.startWaiting, hook.sessionId, hook);
      return;
    }
    if (hook.name === 'SessionEnd') this.emitEnd(hook);
    if (hook.toolUseId !== undefined && TOOL_EVENTS.has(hook.name)) {
      const out = this.toolsOut.get(hook.toolUseId);
      // The call's outcome (and block) was decided when its span went out: nothing to gather for it any more.
      if (out) return this.emitLate(hook, out);
      this.recordEvidence(hook);
      this.push(this.toolWaiting, hook.toolUseId, hook);
      return;
    }
    if (TURN_EVENTS.has(hook.name)) {
      const out = hook.promptId !== undefined ? this.turnsOut.get(hook.promptId) : undefined;
      if (out) return this.emitLate(hook, out);
      this.turnWaiting.push(hook);
      return;
    }
    this.emitLog(hook, { traceId: '', spanId: '' });
    this.acks.push(hook.event.ack);
  }

  observe(batch: TelemetryBatch): void {
    for (const log of batch.logs) if (log.eventName === 'ccotel.session.started') this.mergeTranscriptStart(log, batch.metrics);
    for (const span of batch.spans) {
      if (span.name.startsWith('execute_tool ')) this.attachToTool(span);
      else if (span.name === 'invoke_agent claude-code') this.attachToTurn(span);
    }
  }

  drain(): { batch: TelemetryBatch; acks: Ack[] } {
    const result = { batch: this.out, acks: this.acks };
    this.out = emptyBatch();
    this.acks = [];
    return result;
  }

  /** Stop waiting for spans of hooks fired before `beforeMs` (live mode: the idle time): log records only. */
  expire(beforeMs: number): void {
    for (const [toolUseId, hooks] of this.toolWaiting) {
      if (hooks.some((hook) => hook.timeMs >= beforeMs)) continue;
      this.toolWaiting.delete(toolUseId);
      this.giveUpTool(toolUseId, hooks);
    }
    const [old, recent] = partition(this.turnWaiting, (hook) => hook.timeMs < beforeMs);
    this.turnWaiting = recent;
    for (const hook of old) this.giveUp(hook, { traceId: '', spanId: '' });
    for (const [sessionId, starts] of this.startWaiting) {
      const [old, recentStarts] = partition(starts, (start) => start.timeMs < beforeMs);
      for (const start of old) this.emitStandaloneStart(start);
      if (recentStarts.length === 0) this.startWaiting.delete(sessionId);
      else this.startWaiting.set(sessionId, recentStarts);
    }
  }

  finish(): void {
    this.expire(Number.POSITIVE_INFINITY);
  }

  // ---- input -------------------------------------------------------------------------------------------

  private normalize(event: HookEvent): Hook {
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
      calls.set(inputKey, toolUseId);
    }
    if (name === 'PermissionRequest' && !toolUseId) toolUseId = this.lastPreToolUse.get(sessionId)?.get(inputKey);
    const attributes: Attributes = { 'hook.event': name, 'ccotel.hook.fired_at_ns': event.firedAtNs };
    const copy = (from: string, to = from) => {
      const value = p[from];
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') attributes[to] = value;
    };
    copy('prompt_id', 'prompt.id');
    copy('agent_id', 'ccotel.agent.id');
    copy('agent_type', 'ccotel.agent.type');
    copy('permission_mode');
    copy('source');
    copy('reason');
    copy('trigger');
    copy('notification_type');
    copy('is_interrupt');
    copy('duration_ms');
    copy('stop_hook_active');
    if (toolName) attributes['gen_ai.tool.name'] = toolName;
    if (toolUseId) attributes.tool_use_id = toolUseId;
    if (typeof p.error === 'string') attributes.error = name === 'PostToolUseFailure' ? firstLine(p.error) : p.error;
    if (p.tool_response !== undefined) attributes['ccotel.tool.response.length'] = responseLength(p.tool_response);
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
      body: this.options.contentLevel === 'none' ? '' : bodyOf(name, p),
    };
  }

  private recordEvidence(hook: Hook): void {
    let evidence = this.evidence.get(hook.toolUseId!);
    if (!evidence) {
      evidence = { sessionId: hook.sessionId, toolName: hook.toolName ?? 'unknown', permissionRequested: false, permissionDenied: false, ran: false };
      this.evidence.set(hook.toolUseId!, evidence);
    }
    if (hook.name === 'PermissionRequest') evidence.permissionRequested = true;
    if (hook.name === 'PermissionDenied') evidence.permissionDenied = true;
    if (hook.name === 'PostToolUse' || hook.name === 'PostToolUseFailure') evidence.ran = true;
  }

  // ---- joining -----------------------------------------------------------------------------------------

  private attachToTool(span: SpanRecord): void {
    const toolUseId = String(span.attributes.tool_use_id ?? '');
    if (!toolUseId) return;
    const context = { traceId: span.traceId, spanId: span.spanId };
    remember(this.toolsOut, toolUseId, context);
    const hooks = this.toolWaiting.get(toolUseId) ?? [];
    this.toolWaiting.delete(toolUseId);
    for (const hook of hooks) this.attach(span, hook);
    const outcome = span.attributes['ccotel.tool.outcome'];
    const evidence = this.evidence.get(toolUseId);
    this.evidence.delete(toolUseId);
    // The transcript's own verdict wins: a refusal it saw, a call cut short while running (a PermissionRequest
    // with no PostToolUse then is an allowed call the user interrupted), or a call never decided.
    if (evidence && outcome !== 'denied' && outcome !== 'interrupted' && outcome !== 'unanswered') this.blockFromHooks(toolUseId, evidence, context, span.endMs);
  }

  private attachToTurn(span: SpanRecord): void {
    const sessionId = String(span.attributes['session.id'] ?? '');
    const promptId = span.attributes['prompt.id'] === undefined ? undefined : String(span.attributes['prompt.id']);
    const context = { traceId: span.traceId, spanId: span.spanId };
    if (promptId) remember(this.turnsOut, promptId, context);
    const belongs = (hook: Hook) =>
      hook.sessionId === sessionId &&
      (hook.promptId !== undefined
        ? hook.promptId === promptId
        : hook.timeMs >= span.startMs - TURN_SKEW_MS && hook.timeMs <= span.endMs + TURN_SKEW_MS);
    const [mine, others] = partition(this.turnWaiting, belongs);
    this.turnWaiting = others;
    for (const hook of mine) {
      this.attach(span, hook);
      if (hook.name === 'StopFailure') {
        span.status = 'error';
        span.statusMessage = String(hook.attributes.error ?? 'StopFailure');
      }
    }
    // A SessionStart fired before this turn's prompt is this prompt's session start.
    const start = this.takeStartBefore(sessionId, span.startMs);
    if (start) this.emitStart(start, span.startMs, recordIdOf('session-start', sessionId, String(span.attributes['message.uuid'] ?? '')));
  }

  /**
   * The SessionStart a prompt at `timeMs` follows: the last one fired before it. Anchors (prompts) of a session
   * are observed in time order, so any earlier waiting start had no prompt after it: a start of its own.
   */
  private takeStartBefore(sessionId: string, timeMs: number): Hook | undefined {
    const [before, after] = partition(this.startWaiting.get(sessionId) ?? [], (start) => start.timeMs <= timeMs);
    if (after.length === 0) this.startWaiting.delete(sessionId);
    else this.startWaiting.set(sessionId, after);
    const latest = before.pop();
    for (const start of before) this.emitStandaloneStart(start);
    return latest;
  }

  private attach(span: SpanRecord, hook: Hook): void {
    const event: SpanEvent = { name: hook.name, timeMs: hook.timeMs, attributes: hook.attributes };
    span.events.push(event);
    span.events.sort((a, b) => a.timeMs - b.timeMs);
    this.stats.attached++;
    this.emitLog(hook, { traceId: span.traceId, spanId: span.spanId });
    this.acks.push(hook.event.ack);
  }

  private emitLate(hook: Hook, context: SpanContext): void {
    this.stats.late++;
    this.emitLog(hook, context);
    this.acks.push(hook.event.ack);
  }

  private giveUp(hook: Hook, context: SpanContext): void {
    this.stats.unmatched++;
    this.emitLog(hook, context);
    this.acks.push(hook.event.ack);
  }

  private giveUpTool(toolUseId: string, hooks: Hook[]): void {
    const context = { traceId: '', spanId: spanIdOf('tool', toolUseId) };
    for (const hook of hooks) this.giveUp(hook, context);
    const evidence = this.evidence.get(toolUseId);
    this.evidence.delete(toolUseId);
    if (evidence) this.blockFromHooks(toolUseId, evidence, context, Math.max(...hooks.map((hook) => hook.timeMs)));
  }

  private takeFirstStart(sessionId: string): Hook | undefined {
    const starts = this.startWaiting.get(sessionId) ?? [];
    const first = starts.shift();
    if (starts.length === 0) this.startWaiting.delete(sessionId);
    return first;
  }

  /**
   * A transcript start (`ccotel.session.started`) for a prompt that a SessionStart hook preceded: the same
   * start. The hook knows its source for sure (clear, compact, fork, resume): it replaces the inferred one.
   */
  private mergeTranscriptStart(log: LogRecord, metrics: MetricPoint[]): void {
    const sessionId = String(log.attributes['session.id'] ?? '');
    // A fork's start bears the time of its first copied row (the original's), long before the fork's own
    // SessionStart fired: it is the session's first start, whenever that fired.
    const fork = log.attributes.source === 'fork';
    if (fork) remember(this.forksFromTranscript, sessionId, true);
    const start = fork ? this.takeFirstStart(sessionId) : this.takeStartBefore(sessionId, log.timeMs);
    if (!start) return;
    const source = String(start.attributes.source ?? log.attributes.source);
    log.attributes.source = source;
    log.attributes['ccotel.start.origin'] = 'hook';
    const seed = recordIdOf('session-start', sessionId, String(log.attributes['message.uuid'] ?? ''));
    const pointId = recordIdOf('ccotel.session.starts', seed);
    for (const point of metrics) if (point.id === pointId) point.attributes.source = source;
    this.emitLog(start, { traceId: '', spanId: '' });
    this.acks.push(start.event.ack);
  }

  // ---- output ------------------------------------------------------------------------------------------

  /** A start with no prompt after it (the session ended, or was compacted/cleared again, before one). */
  private emitStandaloneStart(start: Hook): void {
    this.emitStart(start, start.timeMs, recordIdOf('session-start', start.sessionId, 'hook', start.event.firedAtNs));
  }

  /** A session start seen only by the hook, with the id the transcript would give the same start. */
  private emitStart(hook: Hook, timeMs: number, seed: string): void {
    const source = String(hook.attributes.source ?? 'unknown');
    if (source === 'fork' && this.forksFromTranscript.has(hook.sessionId)) {
      // Came after the transcript's copy told the same start: only its hook record.
      this.emitLog(hook, { traceId: '', spanId: '' });
      this.acks.push(hook.event.ack);
      return;
    }
    this.out.logs.push(this.log('ccotel.session.started', recordIdOf('ccotel.session.started', seed), timeMs, hook.sessionId, 'INFO', '', {
      source,
      'ccotel.start.origin': 'hook',
    }));
    this.metric('ccotel.session.starts', '{session}', 'Session starts by source', recordIdOf('ccotel.session.starts', seed), timeMs, { source });
    this.emitLog(hook, { traceId: '', spanId: '' });
    this.acks.push(hook.event.ack);
  }

  private emitEnd(hook: Hook): void {
    const reason = String(hook.attributes.reason ?? 'unknown');
    const seed = recordIdOf('session-end', hook.sessionId, hook.event.file);
    this.out.logs.push(this.log('ccotel.session.ended', recordIdOf('ccotel.session.ended', seed), hook.timeMs, hook.sessionId, 'INFO', '', { reason }));
    this.metric('ccotel.session.ends', '{session}', 'Session ends by reason', recordIdOf('ccotel.session.ends', seed), hook.timeMs, { reason });
  }

  /** Same ids as the transcript correlator's block for this call, so a call is blocked at most once. */
  private blockFromHooks(toolUseId: string, evidence: ToolEvidence, context: SpanContext, timeMs: number): void {
    const denied = evidence.permissionDenied || (evidence.permissionRequested && !evidence.ran);
    if (!denied) return;
    // PermissionDenied fires for auto mode's refusals (rules and hooks refuse without it, 2.1.332).
    const source = evidence.permissionDenied ? 'classifier' : 'user';
    const seed = `${spanIdOf('tool', toolUseId)}:blocked`;
    const attributes = { 'gen_ai.tool.name': evidence.toolName, tool_use_id: toolUseId, outcome: 'denied', source, 'ccotel.block.origin': 'hook' };
    this.out.logs.push({ ...this.log('ccotel.permission.blocked', recordIdOf('ccotel.permission.blocked', seed), timeMs, evidence.sessionId, 'WARN', '', attributes), ...context });
    this.metric('ccotel.permission.blocks', '{block}', 'Permission blocks by tool and source', recordIdOf('ccotel.permission.blocks', seed), timeMs, {
      'gen_ai.tool.name': evidence.toolName,
      source,
    }, context);
  }

  private emitLog(hook: Hook, context: SpanContext): void {
    const eventName = `ccotel.hook.${snakeCase(hook.name)}`;
    this.out.logs.push({
      ...this.log(eventName, recordIdOf('hook', hook.event.file), hook.timeMs, hook.sessionId, SEVERITY[hook.name] ?? 'INFO', hook.body, hook.attributes),
      ...context,
    });
  }

  private log(eventName: string, id: string, timeMs: number, sessionId: string, severity: LogRecord['severity'], body: string, attributes: Attributes): LogRecord {
    return { id, timeMs, eventName, severity, traceId: '', spanId: '', body, attributes: { 'session.id': sessionId, ...attributes } };
  }

  private metric(name: string, unit: string, description: string, id: string, timeMs: number, attributes: Attributes, context: SpanContext = { traceId: '', spanId: '' }): void {
    this.out.metrics.push({ id, name, unit, description, kind: 'sum', timeMs, value: 1, attributes, ...context });
  }

  private push(map: Map<string, Hook[]>, key: string, hook: Hook): void {
    const list = map.get(key);
    if (list) list.push(hook);
    else map.set(key, [hook]);
  }
}

export function snakeCase(name: string): string {
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
export function responseLength(response: unknown): number {
  if (typeof response === 'string') return response.length;
  if (typeof response !== 'object' || response === null) return 0;
  const r = response as { stdout?: unknown; stderr?: unknown };
  if (typeof r.stdout === 'string' || typeof r.stderr === 'string') return String(r.stdout ?? '').length + String(r.stderr ?? '').length;
  return JSON.stringify(response).length;
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? '';
}

function partition<T>(items: T[], test: (item: T) => boolean): [T[], T[]] {
  const yes: T[] = [];
  const no: T[] = [];
  for (const item of items) (test(item) ? yes : no).push(item);
  return [yes, no];
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.set(key, value);
  if (map.size > REMEMBER_SPANS) map.delete(map.keys().next().value!);
}
