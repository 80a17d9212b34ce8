// Subagents as `invoke_agent {type}` under the Task (or Agent) call that started them. The link is found by the
// agent id a call's result names, or by the prompt both share; rows and call may arrive in either order, so an
// agent's records are held until it is linked (or, with no call found, given a trace of its own).
import { spanIdOf, traceIdOf } from '../../ids.js';
import type { TranscriptEntry } from '../transcript-entry.js';
import type { Agent, Chat, Parts, PendingTool, Row, Session, TaskCall } from './types.js';

const AGENT_TOOLS = new Set(['Task', 'Agent']);
/**
 * 2.0.x print mode sends each built-in subagent type a "Warmup" prompt at start (a cache warm-up, no Task call),
 * written as an agent file of that prompt and its answer (2.0.42: the answer alone): the response is a chat of
 * its own, in no turn and under no subagent span.
 */
export const WARMUP_PROMPT = 'Warmup';

export class Subagents {
  private readonly agents = new Map<string, Agent>();
  /** The agents not reported yet: an idle check looks only at these. */
  private readonly unreportedAgents = new Set<Agent>();
  /** Agent id → the call whose result named it, before the agent's rows were read. */
  private readonly linksByAgentId = new Map<string, TaskCall>();
  private readonly openTaskCalls = new Map<string, TaskCall>();

  constructor(private readonly parts: Parts) {}

  permissionModeOf(agentId: string): string | undefined {
    return this.agents.get(agentId)?.permissionMode;
  }

  /** Agents not reported yet. */
  unreported(): IterableIterator<Agent> {
    return this.unreportedAgents.values();
  }

  /**
   * The agent of an inline sidechain row, which names none: each chain (from a row with no parent) is one agent,
   * so a session's warmups and each subagent its Task calls started are told apart. A row whose chain start was
   * not read (a re-read from a checkpoint) goes with the session's other unplaced rows.
   */
  inlineAgentId(session: Session, entry: TranscriptEntry): string {
    const chains = (session.sidechainAgents ??= new Map());
    const id = entry.parentUuid === null ? `sidechain-${entry.uuid}` : (chains.get(entry.parentUuid) ?? `sidechain-${session.id}`);
    chains.set(entry.uuid, id);
    return id;
  }

  add(row: Row, session: Session, agentId: string): void {
    const { entry, file, offset } = row;
    const agentType = file.agentType;
    let agent = this.agents.get(agentId);
    if (!agent) {
      agent = {
        id: agentId,
        sessionId: session.id,
        type: agentType,
        spanId: spanIdOf('agent', session.id, agentId),
        firstMs: entry.timeMs,
        lastMs: entry.timeMs,
        emitted: false,
        file: file.path,
        startOffset: offset,
      };
      this.agents.set(agentId, agent);
      this.unreportedAgents.add(agent);
      this.parts.out.hold(agentId);
      const known = this.linksByAgentId.get(agentId);
      this.linksByAgentId.delete(agentId);
      if (known) this.link(agent, known);
    }
    agent.type ??= agentType;
    if (entry.permissionMode) agent.permissionMode = entry.permissionMode;
    agent.firstMs = Math.min(agent.firstMs, entry.timeMs);
    agent.lastMs = Math.max(agent.lastMs, entry.timeMs);
    if (agent.prompt === undefined && entry.type === 'user') {
      const text = typeof entry.message.content === 'string' ? entry.message.content : entry.message.content.find((b) => b?.type === 'text')?.text;
      if (text !== undefined) {
        agent.prompt = text;
        if (!agent.link) {
          const call = [...this.openTaskCalls.values()].find((c) => !c.linked && c.sessionId === agent!.sessionId && c.prompt === text);
          if (call) this.link(agent, call);
        }
      }
    }
    // The agent's open response is kept with the session of its first row, where its end looks for it: a 2.0.77
    // resumed process writes its own new id on a warmup's prompt and the resumed session's on the answer.
    const owner = this.parts.sessions.get(agent.sessionId);
    const scope = { sessionId: session.id, agentId, traceId: agent.link?.traceId ?? '', parentSpanId: agent.spanId, place: session.place };
    this.parts.conversation.add({ entry, session: owner, thread: `agent:${agentId}`, scope, turn: undefined });
  }

  /** A call opened: a Task call may start an agent whose rows were read already (matched by prompt). */
  toolCallStarted(tool: PendingTool): void {
    const { scope, input } = tool;
    if (!AGENT_TOOLS.has(tool.name) || !scope.traceId) return;
    const args = (typeof input === 'object' && input !== null ? input : {}) as { prompt?: unknown; subagent_type?: unknown };
    const call: TaskCall = {
      toolUseId: tool.id,
      spanId: tool.spanId,
      traceId: scope.traceId,
      sessionId: scope.sessionId,
      prompt: typeof args.prompt === 'string' ? args.prompt : '',
      subagentType: typeof args.subagent_type === 'string' ? args.subagent_type : undefined,
      turn: tool.turn,
    };
    this.openTaskCalls.set(tool.id, call);
    for (const agent of this.unreportedAgents) {
      if (!call.linked && !agent.link && agent.sessionId === call.sessionId && agent.prompt === call.prompt) this.link(agent, call);
    }
  }

  /** A call's result: a Task call's result names the agent it ran. */
  toolCallAnswered(toolUseId: string, toolUseResult: unknown): void {
    const task = this.openTaskCalls.get(toolUseId);
    const agentId = agentIdOf(toolUseResult);
    if (!task || !agentId) return;
    const agent = this.agents.get(agentId);
    if (!agent) this.linksByAgentId.set(agentId, task);
    else if (!agent.link) this.link(agent, task);
  }

  toolCallEnded(toolUseId: string): void {
    this.openTaskCalls.delete(toolUseId);
  }

  /** Report the agents of sessions idle since `idleBeforeMs` (unlinked ones get a trace of their own). */
  closeIdle(idleBeforeMs: number): void {
    for (const agent of [...this.unreportedAgents]) {
      if ((this.parts.sessions.find(agent.sessionId)?.lastMs ?? 0) >= idleBeforeMs) continue;
      if (!agent.link) this.link(agent, undefined);
      this.emit(agent);
    }
  }

  /** Forget the reported agents with no row since `beforeMs`, oldest first (the order they were met in). */
  retire(beforeMs: number): void {
    for (const [id, agent] of this.agents) {
      if (!agent.emitted || agent.lastMs >= beforeMs) return;
      this.agents.delete(id);
    }
  }

  /** Attach a subagent to the tool call that started it (or, with none found, give it a trace of its own). */
  private link(agent: Agent, call: TaskCall | undefined): void {
    if (call) call.linked = true;
    agent.link = call
      ? { traceId: call.traceId, toolSpanId: call.spanId, toolUseId: call.toolUseId, turn: call.turn }
      : { traceId: traceIdOf(agent.sessionId, 'agent', agent.id), toolSpanId: '', toolUseId: '' };
    agent.type ??= call?.subagentType;
    const traceId = agent.link.traceId;
    this.parts.out.release(agent.id, traceId);
    // Scopes captured before the link still carry an empty trace id: fix the open ones.
    for (const tool of this.parts.tools.waiting()) if (tool.scope.agentId === agent.id) tool.scope.traceId = traceId;
    const chat = this.openChatOf(agent);
    if (chat) chat.scope.traceId = traceId;
  }

  private openChatOf(agent: Agent): Chat | undefined {
    const session = this.parts.sessions.find(agent.sessionId);
    return session && this.parts.chats.openOf(session, `agent:${agent.id}`);
  }

  private emit(agent: Agent): void {
    if (agent.emitted || !agent.link) return;
    agent.emitted = true;
    this.unreportedAgents.delete(agent);
    agent.link.turn = undefined; // only a re-read of an unreported agent needs it: let the turn go
    const session = this.parts.sessions.find(agent.sessionId);
    const warmup = !agent.link.toolSpanId && (agent.prompt === undefined || agent.prompt === WARMUP_PROMPT);
    const chat = this.openChatOf(agent);
    if (warmup && chat) {
      // No subagent span to hang under. It stays in the session its rows name, also a fresh id a resumed 2.0.x run
      // warms up under, which never holds a conversation, or one whose main file is empty or gone: its cost is there.
      chat.scope.parentSpanId = '';
    }
    if (session) this.parts.chats.finish(session, `agent:${agent.id}`);
    if (warmup) return;
    this.parts.out.event({
      kind: 'SubagentEnded',
      traceId: agent.link.traceId,
      spanId: agent.spanId,
      parentSpanId: agent.link.toolSpanId,
      sessionId: agent.sessionId,
      agentId: agent.id,
      agentType: agent.type ?? 'subagent',
      toolUseId: agent.link.toolUseId || undefined,
      startMs: agent.firstMs,
      endMs: agent.lastMs,
    });
  }
}

function agentIdOf(toolUseResult: unknown): string | undefined {
  if (typeof toolUseResult !== 'object' || toolUseResult === null) return undefined;
  const id = (toolUseResult as { agentId?: unknown }).agentId;
  return typeof id === 'string' ? id : undefined;
}
