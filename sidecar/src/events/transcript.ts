// What the transcript correlator tells: turns, API responses, tool calls, subagents, session starts and the
// facts rows state (permission modes, bash-mode commands, API errors, Claude Code's own cost figures). Another
// agent's source (sources/codex) tells the same events, naming its agent.
import type { AgentName } from '../semconv.js';

/** Where a session's rows come from (DESIGN §11; processors/attribution.ts finds it). */
export interface Place {
  /** The rows' `cwd`. */
  cwd?: string;
  /** `vcs.repository.url.full`: the `origin` remote of the repository holding cwd, normalised, no credentials. */
  repository?: string;
  /** `vcs.ref.head.name`: the rows' `gitBranch`. */
  branch?: string;
  /** `ccotel.ticket`: what the ticket pattern found in the branch. */
  ticket?: string;
}

/** An event of a session, and where the session was at the row that told it (DESIGN §11): on all its records. */
export interface InSession {
  sessionId: string;
  place?: Place;
  /**
   * The agent whose session it is, where what told the event knows (an agent's source, a hook installed for it, a
   * process of its session); else the agent whose source holds the session, else Claude Code.
   */
  agent?: AgentName;
}

/** The trace context of the span an event is about. */
export interface SpanContext {
  traceId: string;
  spanId: string;
}

/** A tool call ended (its result came, or it was left unanswered): its `execute_tool` span, log and points. */
export interface ToolCallEnded extends SpanContext, InSession {
  kind: 'ToolCallEnded';
  /** The span it hangs under: the turn's root, or the subagent's span. */
  parentSpanId: string;
  /** The subagent that made the call (undefined: the main thread). */
  agentId?: string;
  toolUseId: string;
  toolName: string;
  /** The call's input as the model sent it (e.g. Bash: `{ command }`). */
  input: unknown;
  /** The shell command it ran, where a source's own tool runs one (Codex's exec_command); Claude Code's Bash: its input. */
  shellCommand?: string;
  outcome: string;
  /** The result text as the transcript holds it (undefined: no result). */
  output?: string;
  /** The permission mode in force when the call was made. */
  permissionMode?: string;
  /** Who blocked the call (hook, rule, user, classifier), when its result tells a permission block. */
  blockedBy?: string;
  /**
   * The source cannot tell a user's refusal from an interrupt (the outcome it gives is `interrupted`): the hooks
   * decide, a PermissionRequest with no PostToolUse telling a refusal.
   */
  refusalUnknown?: true;
  /**
   * The refusal (`denied` by the user) is inferred from the want of a sign that the command ran (Codex 0.171's item,
   * which a loaded Codex may never write): an approval in the agent's own telemetry overturns it.
   */
  refusalInferred?: true;
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
export interface TurnEnded extends SpanContext, InSession {
  kind: 'TurnEnded';
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
  /** The agent's release fires no SessionEnd hook: a session of it ends untold, its process exiting after a turn. */
  endsUntold?: true;
  /** The release that wrote the prompt (its row's field; its place is the event's). */
  version?: string;
  permissionMode?: string;
  /** Compactions during the turn, in order. */
  compactions?: Compaction[];
}

/** A compaction during a turn: a log record on the turn's root span. */
export interface CompactionOccurred extends SpanContext, Compaction, InSession {
  kind: 'CompactionOccurred';
  messageUuid: string;
}

/** An API response is complete: its `chat {model}` span and token points. */
export interface ChatCompleted extends SpanContext, InSession {
  kind: 'ChatCompleted';
  parentSpanId: string;
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
export interface SessionStarted extends InSession {
  kind: 'SessionStarted';
  source: string;
  messageUuid: string;
  promptId?: string;
  /** The session's permission mode at its start. */
  permissionMode?: string;
  timeMs: number;
}

/** A subagent is over: its `invoke_agent {type}` span under the tool call that started it (none: a trace of its own). */
export interface SubagentEnded extends SpanContext, InSession {
  kind: 'SubagentEnded';
  parentSpanId: string;
  agentId: string;
  agentType: string;
  /** The Task call that started it, when it was found. */
  toolUseId?: string;
  startMs: number;
  endMs: number;
}

/** A session's permission mode changed (or was first told, from the start of its file). */
export interface PermissionModeChanged extends InSession {
  kind: 'PermissionModeChanged';
  mode: string;
  previousMode?: string;
  timeMs: number;
}

/** A command the user ran in bash mode (`! ls`): it belongs to no turn and no tool call. */
export interface UserShellCommand extends InSession {
  kind: 'UserShellCommand';
  command: string;
  cwd?: string;
  messageUuid: string;
  timeMs: number;
}

/** An API error the transcript shows in a turn: a log record on the span it happened under. */
export interface ApiErrorOccurred extends SpanContext, InSession {
  kind: 'ApiErrorOccurred';
  messageUuid: string;
  text: string;
  timeMs: number;
}

/** Claude Code's own running totals for a session (a `cost-state` row), and the lines grown since the last one read. */
export interface CostReported extends InSession {
  kind: 'CostReported';
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
