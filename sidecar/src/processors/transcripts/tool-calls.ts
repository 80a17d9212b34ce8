// Tool calls paired by id: a `tool_use` block opens a call, its `tool_result` ends it (or the session's idleness
// or the end of input leaves it unanswered). An ended call is an `execute_tool {tool}` span, a completion log,
// call and duration metrics, and for a blocked call a permission block.
import { IdSet } from '../../id-set.js';
import type { Attributes } from '../../model.js';
import { commonAttributes, EVENTS, METRICS, permissionBlockSeed, toolSpanId } from '../../semconv.js';
import { resultText, toolVerdict, type BlockSource, type ToolOutcome } from '../classify.js';
import type { ContentBlock, TranscriptEntry } from '../transcript-entry.js';
import type { Parts, PendingTool, ThreadRow, Turn } from './types.js';


export class ToolCalls {
  /** Every call id started (packed: one per call of the whole history). */
  private readonly seen = new IdSet();
  private readonly pending = new Map<string, PendingTool>();
  /** Calls a PreToolUse hook stopped (exit 2): their result is the hook's message, not a tool error. */
  private readonly hookBlocked = new Set<string>();

  constructor(private readonly parts: Parts) {}

  blockedByHook(toolUseId: string): void {
    this.hookBlocked.add(toolUseId);
  }

  isPending(id: string): boolean {
    return this.pending.has(id);
  }

  /** Calls still waiting for their result. */
  waiting(): IterableIterator<PendingTool> {
    return this.pending.values();
  }

  start(block: ContentBlock, { entry, scope, turn }: ThreadRow): void {
    const id = block.id!;
    if (!this.seen.add(id)) return; // replayed into another file, or the same row read twice
    const { agents, sessions } = this.parts;
    const permissionMode = (scope.agentId ? agents.permissionModeOf(scope.agentId) : undefined) ?? sessions.find(scope.sessionId)?.permissionMode;
    const tool: PendingTool = { id, spanId: toolSpanId(id), name: block.name ?? 'unknown', input: block.input, startMs: entry.timeMs, scope, turn, permissionMode };
    this.pending.set(id, tool);
    turn?.toolIds.push(id);
    agents.toolCallStarted(tool);
  }

  end(block: ContentBlock, entry: TranscriptEntry, turn: Turn | undefined): void {
    const tool = this.pending.get(block.tool_use_id!);
    if (!tool) return; // result of a call already reported (replay) or of one never seen
    const blockedByHook = this.hookBlocked.delete(tool.id);
    const { outcome, blockedBy } = blockedByHook ? { outcome: 'denied' as const, blockedBy: 'hook' as const } : toolVerdict(block, entry);
    if (turn && outcome === 'interrupted') turn.interrupted = true;
    this.parts.agents.toolCallAnswered(tool.id, entry.toolUseResult);
    this.emit(tool, outcome, entry.timeMs, { text: resultText(block), blockedBy });
  }

  /** Calls of idle sessions end unanswered, at the last row of their turn. */
  closeIdle(idleSessions: Set<string>): void {
    // One pass over the calls still waiting, not one per idle session: this runs on every idle check.
    for (const tool of [...this.pending.values()]) {
      if (idleSessions.has(tool.scope.sessionId)) this.emit(tool, 'unanswered', tool.turn?.lastMs ?? tool.startMs, undefined);
    }
  }

  private emit(tool: PendingTool, outcome: ToolOutcome, endMs: number, result: { text: string; blockedBy?: BlockSource } | undefined): void {
    this.pending.delete(tool.id);
    this.parts.agents.toolCallEnded(tool.id);
    const { scope, spanId } = tool;
    const attributes: Attributes = {
      ...commonAttributes(scope.sessionId, 'execute_tool'),
      'gen_ai.tool.name': tool.name,
      'gen_ai.tool.call.id': tool.id,
      tool_use_id: tool.id,
      'ccotel.tool.outcome': outcome,
    };
    if (scope.agentId) attributes['ccotel.agent.id'] = scope.agentId;
    if (tool.permissionMode) attributes['ccotel.permission.mode'] = tool.permissionMode;
    const inputText = JSON.stringify(tool.input ?? {});
    attributes['ccotel.tool.input.length'] = inputText.length;
    if (result) attributes['ccotel.tool.output.length'] = result.text.length;
    // Text goes out as it is here; the processors mask it, cap it, or (content level none) drop it.
    attributes['ccotel.tool.input'] = inputText;
    if (result) attributes['ccotel.tool.output'] = result.text;
    const { out } = this.parts;
    const spanEndMs = Math.max(endMs, tool.startMs);
    out.event({
      kind: 'ToolCallEnded',
      traceId: scope.traceId,
      spanId,
      sessionId: scope.sessionId,
      toolUseId: tool.id,
      toolName: tool.name,
      input: tool.input,
      outcome,
      output: result?.text,
      startMs: tool.startMs,
      endMs: spanEndMs,
    }, scope);
    out.span({
      traceId: scope.traceId,
      spanId,
      parentSpanId: scope.parentSpanId,
      name: `execute_tool ${tool.name}`,
      kind: 'internal',
      startMs: tool.startMs,
      endMs: spanEndMs,
      status: outcome === 'error' ? 'error' : 'unset',
      statusMessage: outcome === 'error' && result ? firstLine(result.text) : '',
      attributes,
      events: [],
    }, scope);
    const { traceId, sessionId } = scope;
    const metricAttrs = { 'gen_ai.tool.name': tool.name, outcome };
    const seconds = Math.max(0, endMs - tool.startMs) / 1000;
    out.metric(METRICS.toolCalls, { timeMs: endMs, value: 1, attributes: metricAttrs, traceId, spanId, idSeed: `${spanId}:calls` }, scope);
    out.metric(METRICS.toolDuration, { timeMs: endMs, value: seconds, attributes: metricAttrs, traceId, spanId, idSeed: `${spanId}:duration` }, scope);
    const logAttrs: Attributes = { 'gen_ai.tool.name': tool.name, tool_use_id: tool.id, outcome };
    out.log({
      timeMs: endMs,
      sessionId,
      traceId,
      spanId,
      eventName: EVENTS.toolCompleted,
      severity: outcome === 'error' ? 'WARN' : 'INFO',
      body: inputText,
      attributes: logAttrs,
      idSeed: `${spanId}:completed`,
    }, scope);
    const block = result?.blockedBy;
    if (!block) return;
    const blockAttrs: Attributes = { ...logAttrs, source: block };
    if (tool.permissionMode) blockAttrs['ccotel.permission.mode'] = tool.permissionMode;
    const blocked = permissionBlockSeed(spanId);
    out.log({ eventName: EVENTS.permissionBlocked, severity: 'WARN', timeMs: endMs, sessionId, traceId, spanId, attributes: blockAttrs, idSeed: blocked }, scope);
    out.metric(METRICS.permissionBlocks, { timeMs: endMs, value: 1, attributes: { 'gen_ai.tool.name': tool.name, source: block }, traceId, spanId, idSeed: blocked }, scope);
  }
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
