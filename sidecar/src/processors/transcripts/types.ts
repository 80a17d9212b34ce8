// The shapes the transcript correlator's parts pass each other. Each part keeps its own maps of these; the
// objects themselves are shared (a tool call remembers its turn, a subagent the call that started it).
import type { Compaction, Place } from '../../events.js';
import type { UserInput } from '../classify.js';
import type { TranscriptEntry, Usage } from '../transcript-entry.js';
import type { Chats } from './chats.js';
import type { ClaimJournal } from './claim-journal.js';
import type { Conversation } from './conversation.js';
import type { MainThread } from './main-thread.js';
import type { Places } from '../attribution.js';
import type { Output } from './output.js';
import type { SessionStarts, StartingRow } from './session-starts.js';
import type { Sessions } from './sessions.js';
import type { Subagents } from './subagents.js';
import type { ToolCalls } from './tool-calls.js';
import type { Turns } from './turns.js';
import type { UserInputs } from './user-inputs.js';
import type { TranscriptFile } from '../../records/transcript.js';

export type { TranscriptFile };

/** A transcript row and where it was read. */
export interface Row {
  entry: TranscriptEntry;
  file: TranscriptFile;
  offset: number;
}

/** Where a span hangs: the trace and parent it belongs to (traceId '' while a subagent is not linked yet). */
export interface Scope {
  sessionId: string;
  agentId?: string;
  traceId: string;
  parentSpanId: string;
  /** Where the session was at the row that opened the span (its records carry it). */
  place?: Place;
}

/** A conversation row of one thread (the main thread, or `agent:{id}`) and where its spans go. */
export interface ThreadRow {
  entry: TranscriptEntry;
  /** The session that keeps the thread's open response. */
  session: Session;
  thread: string;
  scope: Scope;
  turn: Turn | undefined;
}

export interface Turn {
  traceId: string;
  rootSpanId: string;
  sessionId: string;
  promptUuid: string;
  promptId?: string;
  promptText: string;
  startMs: number;
  lastMs: number;
  file: string;
  startOffset: number;
  interrupted: boolean;
  lastAssistantWasApiError: boolean;
  answered: boolean;
  newChats: number;
  replayedChats: number;
  toolIds: string[];
  compactions: Compaction[];
  /** Where the session was at the prompt row, and the release that wrote it. */
  place?: Place;
  version?: string;
  permissionMode?: string;
  /** The slash command that is the turn's prompt. */
  commandName?: string;
  /** False for a turn opened by a response whose prompt is not in the input: no prompt record for it. */
  promptSeen?: false;
  /**
   * The session start this turn's prompt makes, told at its first response: a first response that is a copy of
   * one read before makes it a resume (1.0.x resume copies restamp times and renew uuids: only the responses match).
   */
  pendingStart?: { entry: TranscriptEntry; source: string };
}

export interface Chat {
  key: string;
  spanId: string;
  messageId: string;
  requestId?: string;
  model: string;
  startMs: number;
  endMs: number;
  usage: Usage;
  stopReason?: string | null;
  /** Older releases: Claude Code's own cost of this response. */
  reportedCostUsd?: number;
  scope: Scope;
}

export interface PendingTool {
  id: string;
  spanId: string;
  name: string;
  input: unknown;
  startMs: number;
  scope: Scope;
  turn?: Turn;
  /** The permission mode in force when the call was made. */
  permissionMode?: string;
}

/** A Task (or Agent) tool call: the subagent it starts hangs under its span. */
export interface TaskCall {
  toolUseId: string;
  spanId: string;
  traceId: string;
  sessionId: string;
  prompt: string;
  subagentType?: string;
  /** The turn that made the call: a re-read must start there while its subagent is not reported. */
  turn?: Turn;
  /** A subagent was linked to it: two calls with the same prompt get one agent each, in order. */
  linked?: boolean;
}

export interface Agent {
  id: string;
  sessionId: string;
  type?: string;
  spanId: string;
  firstMs: number;
  lastMs: number;
  prompt?: string;
  link?: { traceId: string; toolSpanId: string; toolUseId: string; turn?: Turn };
  emitted: boolean;
  /** Where its first row was read: a re-read after a crash must start there while the agent is not emitted. */
  file: string;
  startOffset: number;
  /** Its own permission mode, when its rows state one (an agent may run in another mode than its session). */
  permissionMode?: string;
}

/** A slash command or bash-mode command typed between turns: a turn only once the model answers it. */
export interface PendingInput {
  entry: TranscriptEntry;
  input: UserInput;
  /** As typed: `/review PR 12`, `! ls`. */
  text: string;
  file: TranscriptFile;
  offset: number;
  /** A slash command that expanded into a prompt, or a bash command (2.1.x may send its output to the model). */
  answerable: boolean;
}

export interface Session {
  id: string;
  turn?: Turn;
  started: boolean;
  lastMs: number;
  /** Started as a fork: its first new prompt continues the copied turns without being a resume. */
  forked: boolean;
  turns: number;
  lastCompactTrigger?: string;
  /** The next prompt or command opens a resumed run: a prompt was queued, or a summary named the row before. */
  nextRunResumes?: boolean;
  /** The last rows of the main thread, one of which a summary may name as the leaf a resumed run continues. */
  rowsBeforeOpening: string[];
  /** The time of each thread's (main or agent) last row: a response starts where the row before it ended. */
  lastRowMs: Map<string, number>;
  /** Where the last turn reported hangs: rows that come after it was closed for idleness still hang under it. */
  lastTurn?: Pick<Turn, 'traceId' | 'rootSpanId'>;
  pendingInput?: PendingInput;
  /** The first command of a session not started by a prompt, and the start it makes if no prompt comes. */
  firstCommand?: { entry: StartingRow; source?: string };
  permissionMode?: string;
  /** A permission mode read before any row with a time: it takes the time of the next row. */
  untimedMode?: string;
  /** Where its last row said it was (directory, branch): what it tells from now on carries it. */
  place?: Place;
  /** Inline sidechain rows (1.0.x, 2.0.0, 2.0.25: no `agentId`), by uuid: the subagent (or warmup) whose chain holds each. */
  sidechainAgents?: Map<string, string>;
}

/** The correlator's parts, each reaching the others through this once all exist. */
export interface Parts {
  out: Output;
  /** Claims of earlier runs (forks' and resumes' copies read after a restart are still copies). */
  claims: ClaimJournal;
  places: Places;
  sessions: Sessions;
  starts: SessionStarts;
  main: MainThread;
  conversation: Conversation;
  inputs: UserInputs;
  turns: Turns;
  chats: Chats;
  tools: ToolCalls;
  agents: Subagents;
}
