// What the transcript correlator tells: turns, API responses, tool calls, subagents, session starts and the
// facts rows state (permission modes, bash-mode commands, API errors, Claude Code's own cost figures). Another
// agent's source (sources/codex) tells the same events, naming its agent.
import type { AgentName } from '../semconv.js';

/** The trace context of the span an event is about. */
export interface SpanContext {
  traceId: string;
  spanId: string;
}

/** A tool call ended (its result came, or it was left unanswered): its `execute_tool` span, log and points. */
export interface ToolCallEnded extends SpanContext {
  kind: 'ToolCallEnded';
  /** The span it hangs under: the turn's root, or the subagent's span. */
  parentSpanId: string;
  sessionId: string;
  /** The subagent that made the call (undefined: the main thread). */
  agentId?: string;
  toolUseId: string;
  toolName: string;
  /** The call's input as the model sent it (e.g. Bash: `{ command }`). */
  input: unknown;
  outcome: string;
  /** The result text as the transcript holds it (undefined: no result). */
  output?: string;
  /** The permission mode in force when the call was made. */
  permissionMode?: string;
  /** Who blocked the call (hook, rule, user, classifier), when its result tells a permission block. */
  blockedBy?: string;
  startMs: number;
  /** The span's end: never before its start. */
  endMs: number;
  /** When the call ended as read (its result's row, or the last row of its turn): its records' time. */
  endedAtMs: number;
}

/** A compaction of the context, as its transcript row tells it. */
export interface Compaction {
  timeMs: number;
  trigger?: string;
  preTokens?: number;
}

/** A turn closed: its `invoke_agent` root span, prompt and end logs, and a turn count. */
export interface TurnEnded extends SpanContext {
  kind: 'TurnEnded';
  /** The agent whose turn it is (undefined: Claude Code). */
  agent?: AgentName;
  sessionId: string;
  promptId?: string;
  /** The uuid of the turn's prompt row. */
  messageUuid: string;
  promptText: string;
  /** False for a turn opened by a response whose prompt is not in the input: no prompt record for it. */
  promptSeen?: false;
  /** The slash command the turn answers (`/init`), when its prompt is one. */
  commandName?: string;
  outcome: string;
  startMs: number;
  endMs: number;
  /** Where and with what the prompt was written (its row's fields). */
  cwd?: string;
  gitBranch?: string;
  version?: string;
  permissionMode?: string;
  /** Compactions during the turn, in order. */
  compactions?: Compaction[];
}

/** A compaction during a turn: a log record on the turn's root span. */
export interface CompactionOccurred extends SpanContext, Compaction {
  kind: 'CompactionOccurred';
  sessionId: string;
  messageUuid: string;
}

/** An API response is complete: its `chat {model}` span and token points. */
export interface ChatCompleted extends SpanContext {
  kind: 'ChatCompleted';
  /** The agent that made the request (undefined: Claude Code): its provider prices the model. */
  agent?: AgentName;
  parentSpanId: string;
  sessionId: string;
  /** The session the rows name when sessionId is '' (Scope.transcriptSessionId). */
  transcriptSessionId?: string;
  agentId?: string;
  model: string;
  messageId: string;
  requestId?: string;
  stopReason?: string;
  startMs: number;
  endMs: number;
  tokens: { input: number; output: number; cache_read: number; cache_creation: number };
  /** Cache writes that live one hour (priced apart). */
  cacheWrites1h: number;
  /** Older releases: Claude Code's own cost of this response. */
  reportedCostUsd?: number;
}

/** The transcript told a session start, at the prompt (or command) row `messageUuid`: a log record and a point. */
export interface SessionStarted {
  kind: 'SessionStarted';
  sessionId: string;
  source: string;
  messageUuid: string;
  promptId?: string;
  /** The session's permission mode at its start. */
  permissionMode?: string;
  timeMs: number;
}

/** A subagent is over: its `invoke_agent {type}` span under the tool call that started it (none: a trace of its own). */
export interface SubagentEnded extends SpanContext {
  kind: 'SubagentEnded';
  /** The agent whose subagent it is (undefined: Claude Code). */
  agent?: AgentName;
  parentSpanId: string;
  sessionId: string;
  agentId: string;
  agentType: string;
  /** The Task call that started it, when it was found. */
  toolUseId?: string;
  startMs: number;
  endMs: number;
}

/** A session's permission mode changed (or was first told, from the start of its file). */
export interface PermissionModeChanged {
  kind: 'PermissionModeChanged';
  sessionId: string;
  mode: string;
  previousMode?: string;
  timeMs: number;
}

/** A command the user ran in bash mode (`! ls`): it belongs to no turn and no tool call. */
export interface UserShellCommand {
  kind: 'UserShellCommand';
  sessionId: string;
  command: string;
  cwd?: string;
  messageUuid: string;
  timeMs: number;
}

/** An API error the transcript shows in a turn: a log record on the span it happened under. */
export interface ApiErrorOccurred extends SpanContext {
  kind: 'ApiErrorOccurred';
  sessionId: string;
  messageUuid: string;
  text: string;
  timeMs: number;
}

/** Claude Code's own running totals for a session (a `cost-state` row), and the lines grown since the last one read. */
export interface CostReported {
  kind: 'CostReported';
  sessionId: string;
  timeMs: number;
  totalCostUsd: number;
  /** costUSD by model, as Claude Code priced it. */
  costByModel: Record<string, number>;
  hasUnknownModelCost: boolean;
  linesAdded: number;
  linesRemoved: number;
  /** Lines added and removed since the previous row of the session read by this process. */
  newLines: { added: number; removed: number };
}
