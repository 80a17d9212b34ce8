// Tool calls paired by id: a `tool_use` block opens a call, its `tool_result` ends it (or the session's idleness
// or the end of input leaves it unanswered). An ended call is told as ToolCallEnded (encode/tool-calls.ts makes
// its span, log and points).
import { IdSet } from '../../id-set.js';
import { toolSpanId } from '../../semconv.js';
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
    const { claims } = this.parts;
    if (!this.seen.add(id)) return; // replayed into another file, or the same row read twice
    // Started in an earlier run of the sidecar by another row: a copy read after a restart.
    if (claims.claimedBefore(`call ${id}`) && !claims.claimedBy(`call ${id}`, entry.uuid)) return;
    claims.record(`call ${id}`, entry.uuid);
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
    const { scope } = tool;
    this.parts.out.event({
      kind: 'ToolCallEnded',
      traceId: scope.traceId,
      spanId: tool.spanId,
      parentSpanId: scope.parentSpanId,
      sessionId: scope.sessionId,
      agentId: scope.agentId,
      toolUseId: tool.id,
      toolName: tool.name,
      input: tool.input,
      outcome,
      output: result?.text,
      permissionMode: tool.permissionMode,
      blockedBy: result?.blockedBy,
      startMs: tool.startMs,
      endMs: Math.max(endMs, tool.startMs),
      endedAtMs: endMs,
    }, scope);
  }
}
