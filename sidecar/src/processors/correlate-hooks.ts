// Join Claude Code hook events (from the spool) onto the transcript traces. Each hook event becomes:
// - a span event on the span it belongs to (a HookAttached event, which the pipeline adds to that span before it
//   leaves): tool events on the `execute_tool` span of their tool_use_id (ToolCallEnded; PermissionRequest has
//   none: it is paired with the PreToolUse just before it in the same session, same tool and input), turn events
//   on the turn root of their prompt_id (TurnEnded; else the turn of the session at that time); events wait until
//   that span goes out; one arriving after it went out is a log record only (counted `late`);
// - a log record `ccotel.hook.<event in snake_case>` with that span's trace context;
// - the DESIGN records it implies: SessionStart gives the session's start (merged with the one the transcript
//   infers for the same prompt, SessionStarted: a SessionStartConfirmed gives it the hook's `source`, so starts
//   never double); SessionEnd gives `ccotel.session.ended` / `ccotel.session.ends{reason}`; a PermissionDenied,
//   or a PermissionRequest with no PostToolUse / PostToolUseFailure (and no approval of the call in the agent's own
//   telemetry: one approved and then interrupted while it ran never gets its PostToolUse either), gives a permission
//   block when the transcript did not already call the call denied (same id as the transcript's block: one block
//   per tool_use_id).
// A spool file is acknowledged (deleted) once everything built from it is in the output.
import { type CorrelationEvent, type Join, type Joined, type PermissionBlocked, type SessionStarted, type SpanContext, type ToolCallEnded, type TurnEnded } from '../events.js';
import type { Ack, ContentLevel, TelemetryBatch } from '../model.js';
import { readNative, type NativeDialect } from '../records/native-telemetry.js';
import type { HookEvent } from '../records/hook-spool.js';
import { toolSpanId } from '../semconv.js';
import { HookReader, type Hook } from './hook-input.js';
import { hookPermissionBlock, hookRecorded, hookSessionEnd, hookSessionStart, NO_SPAN, type ToolEvidence } from './hook-records.js';

export type HookListener = (hook: Hook) => void;

export interface HookCorrelatorOptions {
  contentLevel: ContentLevel;
  /** Told about every hook as it is added, before any collect (the detectors: a process scan may come first). */
  listeners?: HookListener[];
  /**
   * Whether hooks may still come after the span they belong to went out (following, the default): then the
   * spans out are remembered. Reading once, every hook is read before the transcripts.
   */
  lateHooks?: boolean;
  /** Each agent's own telemetry, read for its tool decisions: a call it says was approved is no refusal. */
  dialects?: readonly NativeDialect[];
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
/** A turn event without prompt_id (Claude Code < 2.1.196) belongs to the turn whose time span, widened by this, holds it. */
const TURN_SKEW_MS = 2_000;
/** Ids of spans already out, remembered for late events (bounded: the most recent; a late event is seconds late). */
const REMEMBER_SPANS = 20_000;

export class HookCorrelator implements Join {
  readonly consumes = ['SessionStarted', 'ToolCallEnded', 'TurnEnded'] as const;
  readonly produces = ['HookFired', 'HookRecorded', 'HookAttached', 'SessionStartConfirmed', 'HookSessionStarted', 'SessionEnded', 'PermissionBlocked', 'ToolCallApproved'] as const;
  readonly stats: HookCorrelatorStats = { events: 0, attached: 0, late: 0, unmatched: 0 };
  private events: CorrelationEvent[] = [];
  private acks: Ack[] = [];
  private readonly toolWaiting = new Map<string, Hook[]>();
  private turnWaiting: Hook[] = [];
  /** SessionStart hooks waiting for the first prompt after them, by session, in firing order. */
  private readonly startWaiting = new Map<string, Hook[]>();
  private readonly evidence = new Map<string, ToolEvidence>();
  private readonly toolsOut = new Map<string, SpanContext>();
  private readonly turnsOut = new Map<string, SpanContext>();
  /** Sessions the transcript already reported as started by a fork (its copy was read before the hook came). */
  private readonly forksFromTranscript = new Map<string, true>();
  /** Calls the agent's own telemetry says were approved (its decision came before the call's end, in practice). */
  private readonly approvedCalls = new Map<string, true>();

  private readonly reader: HookReader;

  /** Spans out are remembered only where a hook may still come for one (`lateHooks`). */
  private readonly rememberSpansOut: boolean;

  constructor(private readonly options: HookCorrelatorOptions) {
    this.reader = new HookReader(options.contentLevel);
    this.rememberSpansOut = options.lateHooks !== false;
  }

  add(event: HookEvent): void {
    const hook = this.reader.normalize(event);
    this.stats.events++;
    for (const listener of this.options.listeners ?? []) listener(hook);
    this.events.push({ kind: 'HookFired', name: hook.name, sessionId: hook.sessionId, agent: hook.event.agent, timeMs: hook.timeMs, attributes: hook.attributes, file: hook.event.file });
    if (hook.name === 'SessionStart') {
      this.push(this.startWaiting, hook.sessionId, hook);
      return;
    }
    if (hook.name === 'SessionEnd') this.events.push(hookSessionEnd(hook));
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
    this.emitLog(hook, NO_SPAN);
    this.acks.push(hook.event.ack);
  }

  observe(events: readonly CorrelationEvent[]): void {
    // Starts first: a turn's span may take a waiting SessionStart as its own (takeStartBefore).
    for (const event of events) if (event.kind === 'SessionStarted') this.mergeTranscriptStart(event);
    for (const event of events) {
      if (event.kind === 'ToolCallEnded') this.attachToTool(event);
      else if (event.kind === 'TurnEnded') this.attachToTurn(event);
    }
  }

  receive(batch: TelemetryBatch): void {
    for (const log of batch.logs) {
      const fact = log.origin && this.options.dialects ? readNative(this.options.dialects, log) : undefined;
      if (fact?.kind === 'tool' && fact.approved) remember(this.approvedCalls, fact.key, true);
    }
  }

  drain(): Joined {
    const result = { events: this.events, acks: this.acks };
    this.events = [];
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
    for (const hook of old) this.giveUp(hook, NO_SPAN);
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

  private recordEvidence(hook: Hook): void {
    let evidence = this.evidence.get(hook.toolUseId!);
    if (!evidence) {
      evidence = { sessionId: hook.sessionId, agent: hook.event.agent, toolName: hook.toolName ?? 'unknown', permissionRequested: false, permissionDenied: false, ran: false, approved: false };
      this.evidence.set(hook.toolUseId!, evidence);
    }
    if (hook.name === 'PermissionRequest') evidence.permissionRequested = true;
    if (hook.name === 'PermissionDenied') evidence.permissionDenied = true;
    if (hook.name === 'PostToolUse' || hook.name === 'PostToolUseFailure') evidence.ran = true;
  }

  /** What the hooks told of a call, with whether the agent's own telemetry said it was approved; forgotten here. */
  private takeEvidence(toolUseId: string): ToolEvidence | undefined {
    const evidence = this.evidence.get(toolUseId);
    this.evidence.delete(toolUseId);
    if (evidence && this.approvedCalls.has(toolUseId)) evidence.approved = true;
    return evidence;
  }

  // ---- joining -----------------------------------------------------------------------------------------

  private attachToTool(call: ToolCallEnded): void {
    const { toolUseId, outcome } = call;
    if (!toolUseId) return;
    // Its hooks may have been given up on already (the source held the call until its thread went on): the approval stays till now.
    if (call.refusalInferred && this.approvedCalls.has(toolUseId)) this.events.push({ kind: 'ToolCallApproved', sessionId: call.sessionId, toolUseId });
    const context = { traceId: call.traceId, spanId: call.spanId };
    if (this.rememberSpansOut) remember(this.toolsOut, toolUseId, context);
    const hooks = this.toolWaiting.get(toolUseId) ?? [];
    this.toolWaiting.delete(toolUseId);
    for (const hook of hooks) this.attach(context, hook);
    const evidence = this.takeEvidence(toolUseId);
    // The transcript's own verdict wins: a refusal it saw, a call cut short while running (a PermissionRequest
    // with no PostToolUse then is an allowed call the user interrupted), or a call never decided. Where the source
    // cannot tell an interrupt from a refusal (refusalUnknown), the hooks do.
    const decided = outcome === 'denied' || (outcome === 'interrupted' && !call.refusalUnknown) || outcome === 'unanswered';
    if (evidence && !decided) this.emitBlock(hookPermissionBlock({ toolUseId, evidence, context, timeMs: call.endMs }));
    this.approvedCalls.delete(toolUseId);
  }

  private attachToTurn(turn: TurnEnded): void {
    const { sessionId, promptId } = turn;
    const context = { traceId: turn.traceId, spanId: turn.spanId };
    if (promptId && this.rememberSpansOut) remember(this.turnsOut, promptId, context);
    const belongs = (hook: Hook) =>
      hook.sessionId === sessionId &&
      (hook.promptId !== undefined
        ? hook.promptId === promptId
        : hook.timeMs >= turn.startMs - TURN_SKEW_MS && hook.timeMs <= turn.endMs + TURN_SKEW_MS);
    const [mine, others] = partition(this.turnWaiting, belongs);
    this.turnWaiting = others;
    for (const hook of mine) this.attach(context, hook, hook.name === 'StopFailure' ? String(hook.attributes.error ?? 'StopFailure') : undefined);
    // A SessionStart fired before this turn's prompt is this prompt's session start.
    const start = this.takeStartBefore(sessionId, turn.startMs);
    if (start) this.emitStart(start, turn.startMs, turn.messageUuid);
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

  /** `failure`: the span's error message (StopFailure). */
  private attach(context: SpanContext, hook: Hook, failure?: string): void {
    const event = { name: hook.name, timeMs: hook.timeMs, attributes: hook.attributes };
    this.events.push({ kind: 'HookAttached', spanId: context.spanId, event, failure });
    this.stats.attached++;
    this.emitLog(hook, context);
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
    const context = { traceId: '', spanId: toolSpanId(toolUseId) };
    for (const hook of hooks) this.giveUp(hook, context);
    const evidence = this.takeEvidence(toolUseId);
    if (evidence) this.emitBlock(hookPermissionBlock({ toolUseId, evidence, context, timeMs: Math.max(...hooks.map((hook) => hook.timeMs)) }));
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
  private mergeTranscriptStart(transcriptStart: SessionStarted): void {
    const { sessionId, messageUuid } = transcriptStart;
    // A fork's start bears the time of its first copied row (the original's), long before the fork's own
    // SessionStart fired: it is the session's first start, whenever that fired.
    const fork = transcriptStart.source === 'fork';
    if (fork) remember(this.forksFromTranscript, sessionId, true);
    const start = fork ? this.takeFirstStart(sessionId) : this.takeStartBefore(sessionId, transcriptStart.timeMs);
    if (!start) return;
    const source = String(start.attributes.source ?? transcriptStart.source);
    this.events.push({ kind: 'SessionStartConfirmed', sessionId, messageUuid, source });
    this.emitLog(start, NO_SPAN);
    this.acks.push(start.event.ack);
  }

  // ---- output ------------------------------------------------------------------------------------------

  /** A start with no prompt after it (the session ended, or was compacted/cleared again, before one). */
  private emitStandaloneStart(start: Hook): void {
    this.emitStart(start, start.timeMs);
  }

  /** A session start seen only by the hook: at the prompt `messageUuid` (the transcript's id for it), or its own. */
  private emitStart(hook: Hook, timeMs: number, messageUuid?: string): void {
    // A fork's start that came after the transcript's copy told the same start: only its hook record.
    if (hook.attributes.source !== 'fork' || !this.forksFromTranscript.has(hook.sessionId)) this.events.push(hookSessionStart(hook, timeMs, messageUuid));
    this.emitLog(hook, NO_SPAN);
    this.acks.push(hook.event.ack);
  }

  private emitBlock(blocked: PermissionBlocked | undefined): void {
    if (blocked) this.events.push(blocked);
  }

  private emitLog(hook: Hook, context: SpanContext): void {
    this.events.push(hookRecorded(hook, context));
  }

  private push(map: Map<string, Hook[]>, key: string, hook: Hook): void {
    const list = map.get(key);
    if (list) list.push(hook);
    else map.set(key, [hook]);
  }
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
