// Correlate transcript entries into the DESIGN model: one trace per turn, `chat {model}` per API response
// (deduplicated across all files), `execute_tool {tool}` per tool call paired by id, subagents as
// `invoke_agent {type}` under the tool call that started them. Items are emitted once they are final, so a
// sink that keeps the first copy of an id keeps the right one; every id and timestamp comes from the input.
import { recordIdOf, spanIdOf, traceIdOf } from '../ids.js';
import type { Attributes, LogRecord, MetricPoint, SpanEvent, SpanRecord, TelemetryBatch } from '../model.js';
import { emptyBatch } from '../model.js';
import {
  isInterruptMarker,
  isCommandExpansion,
  isCommandOutput,
  realPromptText,
  resultText,
  toolVerdict,
  toolResults,
  toolUses,
  userInput,
  type BlockSource,
  type ToolOutcome,
  type TurnOutcome,
  type UserInput,
} from './classify.js';
import type { ContentBlock, TranscriptEntry, Usage } from './parse-transcript.js';
import { CACHE_WRITE_1H_ATTRIBUTE } from './price-chats.js';
import { ReportedCosts } from './reported-cost.js';
import { ResumeMarks, ROWS_BEFORE_OPENING } from './resume-marks.js';

export interface TranscriptFile {
  path: string;
  /** `main`: a session transcript; `subagent`: a subagent transcript (legacy or subagents/ layout). */
  kind: 'main' | 'subagent';
  agentId?: string;
  agentType?: string;
}

const AGENT_TOOLS = new Set(['Task', 'Agent']);
/**
 * 2.0.x print mode sends each built-in subagent type a "Warmup" prompt at start (a cache warm-up, no Task call),
 * written as an agent file of that prompt and its answer (2.0.42: the answer alone): the response is a chat of
 * its own, in no turn and under no subagent span.
 */
const WARMUP_PROMPT = 'Warmup';

interface Turn {
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
  events: SpanEvent[];
  attributes: Attributes;
  /** False for a turn opened by a response whose prompt is not in the input: no prompt record for it. */
  promptSeen?: false;
  /**
   * The session start this turn's prompt makes, told at its first response: a first response that is a copy of
   * one read before makes it a resume (1.0.x resume copies restamp times and renew uuids: only the responses match).
   */
  pendingStart?: { entry: TranscriptEntry; source: string };
}

interface Chat {
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

interface PendingTool {
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

/** Where a span hangs: the trace and parent it belongs to (traceId '' while a subagent is not linked yet). */
interface Scope {
  sessionId: string;
  agentId?: string;
  traceId: string;
  parentSpanId: string;
}

interface Agent {
  id: string;
  sessionId: string;
  type?: string;
  spanId: string;
  firstMs: number;
  lastMs: number;
  prompt?: string;
  link?: { traceId: string; toolSpanId: string; toolUseId: string; turn?: Turn };
  /** Items produced before the link was known; emitted with the trace id once it is. */
  waiting: TelemetryBatch;
  emitted: boolean;
  /** Where its first row was read: a re-read after a crash must start there while the agent is not emitted. */
  file: string;
  startOffset: number;
  /** Its own permission mode, when its rows state one (an agent may run in another mode than its session). */
  permissionMode?: string;
}

/** A slash command or bash-mode command typed between turns: a turn only once the model answers it. */
interface PendingInput {
  entry: TranscriptEntry;
  input: UserInput;
  /** As typed: `/review PR 12`, `! ls`. */
  text: string;
  file: TranscriptFile;
  offset: number;
  /** A slash command that expanded into a prompt, or a bash command (2.1.x may send its output to the model). */
  answerable: boolean;
}

interface TaskCall {
  toolUseId: string;
  spanId: string;
  traceId: string;
  sessionId: string;
  prompt: string;
  subagentType?: string;
  /** The turn that made the call: a re-read must start there while its subagent is not reported. */
  turn?: Turn;
}

interface Session {
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
  /** The chat of the thread (main or agent) whose rows are still arriving, keyed by thread. */
  openChats: Map<string, Chat>;
  lastRowMs: Map<string, number>;
  /** The last turn reported: rows that come after it was closed for idleness still hang under it. */
  lastTurn?: Turn;
  pendingInput?: PendingInput;
  /** The first command of a session not started by a prompt, and the start it makes if no prompt comes. */
  firstCommand?: { entry: TranscriptEntry; source?: string };
  permissionMode?: string;
  /** A permission mode read before any row with a time: it takes the time of the next row. */
  untimedMode?: string;
}

export class TranscriptCorrelator {
  private readonly sessions = new Map<string, Session>();
  /**
   * API responses already attributed to a span (open or emitted), message id → request id ('' when the row had
   * none): any other copy of one is a replay. 1.0.x resume copies drop the request id.
   */
  private readonly claimedChats = new Map<string, string>();
  private readonly seenToolUses = new Set<string>();
  private readonly pendingTools = new Map<string, PendingTool>();
  private readonly seenPrompts = new Set<string>();
  /** The session each prompt uuid was first read in: 1.0.x resume copies keep the uuids (and restamp the times). */
  private readonly promptSessions = new Map<string, string>();
  private readonly hookBlockedCalls = new Set<string>();
  /** Claude Code's own cost figures (cost-state rows). */
  private readonly reportedCosts = new ReportedCosts();
  private readonly agents = new Map<string, Agent>();
  private readonly agentLinks = new Map<string, TaskCall>();
  private readonly openTaskCalls = new Map<string, TaskCall>();
  /** Files whose first line was read: only there can a session's first prompt be recognised as such. */
  private readonly filesReadFromStart = new Set<string>();
  private readonly resumeMarks = new ResumeMarks<{ session: Session; entry: TranscriptEntry }>();
  private out: TelemetryBatch = emptyBatch();

  readingFromStart(path: string): void {
    this.filesReadFromStart.add(path);
  }

  /** Take everything emitted so far. */
  drain(): TelemetryBatch {
    const batch = this.out;
    this.out = emptyBatch();
    return batch;
  }

  add(entry: TranscriptEntry, file: TranscriptFile, offset: number): void {
    if (entry.costState) {
      const lastMs = this.sessions.get(entry.sessionId)?.lastMs ?? 0;
      const timeMs = lastMs || (Number.isFinite(entry.timeMs) ? entry.timeMs : 0);
      const { log, metrics } = this.reportedCosts.telemetry(entry.sessionId, timeMs, entry.costState);
      this.out.logs.push(log);
      this.out.metrics.push(...metrics);
      return;
    }
    if (entry.hookBlock) {
      // A PreToolUse hook that exits 2 stops the call: its result is the hook's message, not a tool error.
      if (entry.hookBlock.hookEvent === 'PreToolUse') this.hookBlockedCalls.add(entry.hookBlock.toolUseId);
      return;
    }
    if (entry.type === 'permission-mode') {
      this.addPermissionModeRow(entry, file);
      return;
    }
    if (entry.type === 'summary') {
      this.resumeMarks.summary(entry.leafUuid!, file.path);
      return;
    }
    const session = this.session(entry.sessionId);
    if (entry.type === 'queue-operation') {
      if (session.started) session.nextRunResumes = true;
      return;
    }
    this.resumeMarks.conversationIn(file.path);
    session.lastMs = Math.max(session.lastMs, entry.timeMs);
    if (session.untimedMode !== undefined) {
      this.changePermissionMode(session, session.untimedMode, entry.timeMs, file);
      session.untimedMode = undefined;
    }
    if (entry.forkedFromSessionId) {
      // A fork's copy of another session's rows (same uuids, same messages): the original file reports them,
      // whichever of the two is read first. The copy only tells that this session started as a fork.
      if (!session.started) this.startSession(session, entry, 'fork');
      session.forked = true;
      return;
    }
    const agentId = file.kind === 'subagent' ? (file.agentId ?? entry.agentId) : entry.isSidechain ? entry.agentId ?? `sidechain-${entry.sessionId}` : undefined;
    if (agentId !== undefined) {
      this.addAgentRow(entry, session, agentId, file, offset);
      return;
    }
    this.addMainRow(entry, session, file, offset);
  }

  /** Close turns and subagents of sessions with no row since `idleBeforeMs` (live mode), as the end of input would. */
  closeIdle(idleBeforeMs: number): void {
    const idle = new Set<string>();
    for (const { session, entry } of this.resumeMarks.takeResumed()) this.startSession(session, entry, 'resume');
    for (const session of this.sessions.values()) {
      if (session.lastMs >= idleBeforeMs) continue;
      this.closeTurn(session);
      this.finishChat(session, 'main'); // a response outside any turn ends with its session too
      const command = session.firstCommand;
      if (!session.started && command?.source) this.startSession(session, command.entry, command.source);
      idle.add(session.id);
    }
    // One pass over the calls still waiting, not one per idle session: this runs on every idle check.
    for (const tool of [...this.pendingTools.values()]) {
      if (idle.has(tool.scope.sessionId)) this.emitTool(tool, 'unanswered', tool.turn?.lastMs ?? tool.startMs, undefined);
    }
    for (const agent of this.agents.values()) {
      if (agent.emitted || (this.sessions.get(agent.sessionId)?.lastMs ?? 0) >= idleBeforeMs) continue;
      if (!agent.link) this.linkAgent(agent, undefined);
      this.emitAgentSpan(agent);
    }
  }

  /** End of input (backfill): close every open turn, tool call and subagent. */
  finish(): void {
    this.closeIdle(Number.POSITIVE_INFINITY);
  }

  /**
   * Per file, the offset of the oldest line a re-read must start from so everything still open is rebuilt
   * whole: open turns, turns with a call still waiting for its result, and subagents not reported yet (their
   * own rows, and the turn of the call that started them). One pass for all files: a commit asks for every file.
   */
  oldestOpenOffsets(): Map<string, number> {
    const oldest = new Map<string, number>();
    const note = (file: string | undefined, offset: number) => {
      if (file !== undefined && offset < (oldest.get(file) ?? Number.POSITIVE_INFINITY)) oldest.set(file, offset);
    };
    const noteTurn = (turn: Turn | undefined) => turn && note(turn.file, turn.startOffset);
    for (const session of this.sessions.values()) {
      noteTurn(session.turn);
      if (session.pendingInput) note(session.pendingInput.file.path, session.pendingInput.offset);
    }
    for (const tool of this.pendingTools.values()) noteTurn(tool.turn);
    for (const agent of this.agents.values()) {
      if (agent.emitted) continue;
      noteTurn(agent.link?.turn);
      note(agent.file, agent.startOffset);
    }
    return oldest;
  }

  private session(id: string): Session {
    let session = this.sessions.get(id);
    if (!session) {
      session = { id, started: false, forked: false, turns: 0, lastMs: 0, openChats: new Map(), lastRowMs: new Map(), rowsBeforeOpening: [] };
      this.sessions.set(id, session);
    }
    return session;
  }

  // ---- main thread ----------------------------------------------------------------------------------------

  private addMainRow(entry: TranscriptEntry, session: Session, file: TranscriptFile, offset: number): void {
    const thread = 'main';
    if (entry.permissionMode) this.changePermissionMode(session, entry.permissionMode, entry.timeMs, file);
    this.noteRunStart(session, entry);
    const prompt = realPromptText(entry);
    if (prompt !== undefined) {
      session.pendingInput = undefined;
      this.closeTurn(session);
      this.startTurn(entry, session, prompt, file, offset);
      session.lastRowMs.set(thread, entry.timeMs);
      return;
    }
    if (this.addUserInput(entry, session, file, offset)) {
      session.lastRowMs.set(thread, entry.timeMs);
      return;
    }
    if (entry.type === 'assistant' && session.pendingInput?.answerable) this.startInputTurn(session);
    const turn = session.turn;
    if (turn) turn.lastMs = Math.max(turn.lastMs, entry.timeMs);
    if (isResumedCompaction(entry, session)) this.startSession(session, entry, 'resume');
    if (entry.type === 'system') {
      this.finishChat(session, thread);
      if (entry.subtype === 'compact_boundary') session.lastCompactTrigger = entry.compactMetadata?.trigger;
      if (entry.subtype === 'compact_boundary' && turn) {
        turn.events.push({
          name: 'compaction',
          timeMs: entry.timeMs,
          attributes: compactAttributes(entry),
        });
        // Keyed by time, not uuid: a copy of the history in another file repeats it with a fresh uuid.
        this.emitLog(turn.traceId, turn.rootSpanId, session.id, entry.timeMs, 'ccotel.compaction.occurred', 'INFO', '', {
          ...compactAttributes(entry),
          'message.uuid': entry.uuid,
        }, `${entry.timeMs}:${entry.compactMetadata?.preTokens ?? ''}`);
      }
      return;
    }
    if (!turn) {
      const last = session.lastTurn;
      // Rows after a turn closed for idleness are its late rows.
      if (last) this.handleConversationRow(entry, session, thread, { sessionId: session.id, traceId: last.traceId, parentSpanId: last.rootSpanId }, undefined);
      else if (entry.type === 'assistant') this.startPromptlessTurn(entry, session, file, offset);
      return;
    }
    const scope: Scope = { sessionId: session.id, traceId: turn.traceId, parentSpanId: turn.rootSpanId };
    if (isInterruptMarker(entry)) turn.interrupted = true;
    this.handleConversationRow(entry, session, thread, scope, turn);
  }

  /** Whether this input (by time and text, or by uuid) was read before in another session: history an old-style resume copied. */
  private seenBefore(entry: TranscriptEntry, text: string): boolean {
    const key = `${entry.timeMs}\u0000${text}`;
    const firstSession = this.promptSessions.get(entry.uuid);
    const seen = this.seenPrompts.has(key) || (firstSession !== undefined && firstSession !== entry.sessionId);
    this.seenPrompts.add(key);
    if (firstSession === undefined) this.promptSessions.set(entry.uuid, entry.sessionId);
    return seen;
  }

  /** Slash commands and bash-mode commands (`!`) with their outputs: rows between turns, never prompts. */
  private addUserInput(entry: TranscriptEntry, session: Session, file: TranscriptFile, offset: number): boolean {
    const input = userInput(entry);
    if (input) {
      const text = input.kind === 'bash' ? `! ${input.command}` : [input.name, input.args].filter(Boolean).join(' ');
      session.pendingInput = { entry, input, text, file, offset, answerable: input.kind === 'bash' };
      const readFromStart = this.filesReadFromStart.has(file.path);
      session.firstCommand ??= { entry, source: sessionStartSource(entry, session.started, this.seenBefore(entry, `input:${text}`), readFromStart) };
      if (input.kind === 'bash') this.emitUserShellCommand(session, entry, input.command);
      return true;
    }
    const pending = session.pendingInput;
    if (!pending) return false;
    if (isCommandExpansion(entry)) pending.answerable = true;
    else if (!isCommandOutput(entry)) return false;
    else if (pending.input.kind === 'command') session.pendingInput = undefined; // a local command (/model): no model call
    return true;
  }

  /** The model answers a command: the command is the turn's prompt (`/init`, `! ls`), the previous turn ends. */
  private startInputTurn(session: Session): void {
    const { entry, input, text, file, offset } = session.pendingInput!;
    session.pendingInput = undefined;
    this.closeTurn(session);
    this.startTurn(entry, session, text, file, offset);
    if (input.kind === 'command') session.turn!.attributes['ccotel.command.name'] = input.name;
  }

  /**
   * A command the user ran in bash mode: a log record like the shell log's, so the SIEM rules on shell commands
   * see it. No span: it belongs to no turn and no tool call. Keyed by time and command: a resume's copy repeats it.
   */
  private emitUserShellCommand(session: Session, entry: TranscriptEntry, command: string): void {
    this.emitLog('', '', session.id, entry.timeMs, 'ccotel.shell.command', 'INFO', command, {
      'process.command_line': command,
      cwd: entry.cwd ?? '',
      'ccotel.shell.origin': 'bash_mode',
      'message.uuid': entry.uuid,
    }, `bash-mode:${entry.timeMs}:${command}`);
  }

  private addPermissionModeRow(entry: TranscriptEntry, file: TranscriptFile): void {
    const session = this.session(entry.sessionId);
    const mode = entry.permissionMode!;
    if (!Number.isNaN(entry.timeMs)) this.changePermissionMode(session, mode, entry.timeMs, file);
    else if (session.lastMs > 0) this.changePermissionMode(session, mode, session.lastMs, file); // the row before it
    else session.untimedMode = mode;
  }

  /** A new permission mode of a session (Claude Code repeats the current one often: only a change is news). */
  private changePermissionMode(session: Session, mode: string, timeMs: number, file: TranscriptFile): void {
    const previous = session.permissionMode;
    if (mode === previous) return;
    session.permissionMode = mode;
    // The first mode of a session is told only from the file's start: a re-read from a checkpoint would repeat it.
    if (previous === undefined && !this.filesReadFromStart.has(file.path)) return;
    const attributes: Attributes = { 'ccotel.permission.mode': mode };
    if (previous !== undefined) attributes['ccotel.permission.previous_mode'] = previous;
    const severity = mode === 'bypassPermissions' ? 'WARN' : 'INFO';
    this.emitLog('', '', session.id, timeMs, 'ccotel.permission_mode.changed', severity, '', attributes, `${session.id}:${timeMs}:${mode}`);
  }

  private startTurn(entry: TranscriptEntry, session: Session, prompt: string, file: TranscriptFile, offset: number): void {
    const replayed = this.seenBefore(entry, prompt);
    const source = sessionStartSource(entry, session.started, replayed, this.filesReadFromStart.has(file.path));
    const forkContinues = session.forked && session.turns === 0;
    if (source && !forkContinues) session.started = true;
    session.turns++;
    const traceId = traceIdOf(session.id, entry.uuid);
    const rootSpanId = spanIdOf('turn', session.id, entry.uuid);
    const turn: Turn = {
      traceId,
      rootSpanId,
      sessionId: session.id,
      promptUuid: entry.uuid,
      promptId: entry.promptId,
      promptText: prompt,
      startMs: entry.timeMs,
      lastMs: entry.timeMs,
      file: file.path,
      startOffset: offset,
      interrupted: false,
      lastAssistantWasApiError: false,
      answered: false,
      newChats: 0,
      // A replayed prompt makes the turn a replay unless new answers arrive.
      replayedChats: replayed ? 1 : 0,
      toolIds: [],
      pendingStart: source && !forkContinues ? { entry, source } : undefined,
      events: [],
      attributes: {
        'ccotel.cwd': entry.cwd ?? '',
        'ccotel.git.branch': entry.gitBranch ?? '',
        'ccotel.claude_code.version': entry.version ?? '',
        ...(session.permissionMode ? { 'ccotel.permission.mode': session.permissionMode } : {}),
      },
    };
    session.turn = turn;
  }

  private closeTurn(session: Session): void {
    const turn = session.turn;
    if (!turn) return;
    this.tellSessionStart(session, turn, false);
    this.finishChat(session, 'main');
    session.turn = undefined;
    if (turn.newChats === 0 && turn.toolIds.length === 0 && turn.replayedChats > 0) return; // a replay of a turn already reported
    session.lastTurn = turn;
    const pending = turn.toolIds.some((id) => this.pendingTools.has(id));
    const outcome: TurnOutcome = turn.interrupted
      ? 'interrupted'
      : turn.lastAssistantWasApiError
        ? 'error'
        : pending || !turn.answered
          ? 'abandoned'
          : 'completed';
    const attributes: Attributes = {
      ...this.common(session.id, 'invoke_agent'),
      'gen_ai.agent.name': 'claude-code',
      'message.uuid': turn.promptUuid,
      'ccotel.turn.outcome': outcome,
      'ccotel.prompt.length': turn.promptText.length,
      ...turn.attributes,
    };
    if (turn.promptId) attributes['prompt.id'] = turn.promptId;
    attributes['ccotel.prompt'] = turn.promptText;
    this.out.spans.push({
      traceId: turn.traceId,
      spanId: turn.rootSpanId,
      parentSpanId: '',
      name: 'invoke_agent claude-code',
      kind: 'internal',
      startMs: turn.startMs,
      endMs: turn.lastMs,
      status: outcome === 'error' ? 'error' : 'unset',
      statusMessage: outcome === 'error' ? 'API error' : '',
      attributes,
      events: turn.events,
    });
    const promptAttributes: Attributes = { 'message.uuid': turn.promptUuid, 'ccotel.prompt.length': turn.promptText.length };
    if (turn.promptId) promptAttributes['prompt.id'] = turn.promptId;
    if (turn.promptSeen !== false) this.emitLog(
      turn.traceId,
      turn.rootSpanId,
      session.id,
      turn.startMs,
      'ccotel.prompt.submitted',
      'INFO',
      turn.promptText,
      promptAttributes,
      turn.rootSpanId,
    );
    this.emitLog(turn.traceId, turn.rootSpanId, session.id, turn.lastMs, 'ccotel.turn.ended', outcome === 'error' ? 'WARN' : 'INFO', '', {
      outcome,
      'message.uuid': turn.promptUuid,
    }, turn.rootSpanId);
    this.emitMetric('ccotel.turns', '{turn}', 'Turns by outcome', 'sum', turn.lastMs, 1, { outcome }, turn.traceId, turn.rootSpanId, turn.rootSpanId);
  }

  private tellSessionStart(session: Session, turn: Turn, replayedResponse: boolean): void {
    const start = turn.pendingStart;
    if (!start) return;
    turn.pendingStart = undefined;
    this.startSession(session, start.entry, replayedResponse && start.source === 'startup' ? 'resume' : start.source);
  }

  /**
   * A resumed run appends to the same file; without `turnPosition` (before 2.1.3xx) only a mark before it tells its
   * first row from a next prompt: print mode (2.0.42 on) queues each run's prompt; 1.0.x / 2.0.0 write a summary
   * naming the last row before it (`ResumeMarks`). In interactive use a queue means a prompt typed while Claude
   * worked: no resume.
   */
  private noteRunStart(session: Session, entry: TranscriptEntry): void {
    if (opensRun(entry)) {
      const unnumbered = entry.turnPosition === undefined;
      if (session.nextRunResumes && unnumbered && entry.entrypoint !== 'cli') this.startSession(session, entry, 'resume');
      else if (session.started && unnumbered) this.resumeMarks.opening(session.rowsBeforeOpening, { session, entry });
      session.nextRunResumes = false;
      session.rowsBeforeOpening = [];
    }
    if (session.started && this.resumeMarks.isLeaf(entry.uuid)) session.nextRunResumes = true;
    session.rowsBeforeOpening.push(entry.uuid);
    if (session.rowsBeforeOpening.length > ROWS_BEFORE_OPENING) session.rowsBeforeOpening.shift();
  }

  private startSession(session: Session, entry: TranscriptEntry, source: string): void {
    session.started = true;
    const id = recordIdOf('session-start', session.id, entry.uuid);
    // message.uuid names the prompt: the hook correlator merges a SessionStart hook into this start by it.
    const attributes: Attributes = { source, 'message.uuid': entry.uuid };
    if (entry.promptId) attributes['prompt.id'] = entry.promptId;
    if (session.permissionMode) attributes['ccotel.permission.mode'] = session.permissionMode;
    this.emitLog('', '', session.id, entry.timeMs, 'ccotel.session.started', 'INFO', '', attributes, id);
    this.emitMetric('ccotel.session.starts', '{session}', 'Session starts by source', 'sum', entry.timeMs, 1, { source }, '', '', id);
  }

  /**
   * A response with no prompt before it in its file (the prompt was compacted away, or the file holding it was
   * cleaned up): a turn of its own, so its chat and tool spans have a parent; it claims no prompt.
   */
  private startPromptlessTurn(entry: TranscriptEntry, session: Session, file: TranscriptFile, offset: number): void {
    this.startTurn(entry, session, '', file, offset);
    const turn = session.turn!;
    turn.promptSeen = false;
    turn.attributes['ccotel.turn.prompt_seen'] = false;
    this.addMainRow(entry, session, file, offset);
  }

  // ---- rows shared by the main thread and subagents ----------------------------------------------------

  private handleConversationRow(entry: TranscriptEntry, session: Session, thread: string, scope: Scope, turn: Turn | undefined): void {
    const previousRowMs = session.lastRowMs.get(thread) ?? entry.timeMs;
    session.lastRowMs.set(thread, entry.timeMs);
    if (entry.type === 'assistant') {
      this.addAssistantRow(entry, session, thread, scope, turn, previousRowMs);
      return;
    }
    // The open response stays open: its last rows (final usage, stop reason) may follow a result (parallel calls).
    for (const block of toolResults(entry)) this.addToolResult(block, entry, turn);
  }

  private addAssistantRow(entry: TranscriptEntry, session: Session, thread: string, scope: Scope, turn: Turn | undefined, previousRowMs: number): void {
    if (entry.isApiErrorMessage || entry.message.model === '<synthetic>') {
      this.finishChat(session, thread);
      if (turn && entry.isApiErrorMessage) {
        turn.lastAssistantWasApiError = true;
        this.emitLog(scope.traceId, scope.parentSpanId, session.id, entry.timeMs, 'ccotel.api.error', 'ERROR', textOf(entry), { 'message.uuid': entry.uuid }, entry.uuid);
      }
      return;
    }
    const messageId = entry.message.id;
    if (turn) {
      turn.answered = true;
      turn.lastAssistantWasApiError = false;
    }
    if (messageId) {
      const key = `${messageId}|${entry.requestId ?? ''}`;
      const open = session.openChats.get(thread);
      if (open && open.key !== key) this.finishChat(session, thread);
      const current = session.openChats.get(thread);
      if (current) {
        current.endMs = entry.timeMs;
        if (entry.message.usage) current.usage = entry.message.usage;
        current.reportedCostUsd = entry.costUSD ?? current.reportedCostUsd;
        current.stopReason = entry.message.stop_reason ?? current.stopReason;
      } else if (this.isClaimed(messageId, entry.requestId ?? '')) {
        if (turn) {
          turn.replayedChats++;
          this.tellSessionStart(session, turn, true);
        }
      } else {
        if (turn) this.tellSessionStart(session, turn, false);
        this.claimedChats.set(messageId, entry.requestId ?? '');
        session.openChats.set(thread, {
          key,
          spanId: spanIdOf('chat', key),
          messageId,
          requestId: entry.requestId,
          model: entry.message.model ?? 'unknown',
          startMs: Math.min(previousRowMs, entry.timeMs),
          endMs: entry.timeMs,
          usage: entry.message.usage ?? {},
          stopReason: entry.message.stop_reason,
          reportedCostUsd: entry.costUSD,
          scope,
        });
        if (turn) turn.newChats++;
      }
    }
    for (const block of toolUses(entry)) this.addToolUse(block.id!, block.name ?? 'unknown', block.input, entry, scope, turn);
  }

  /** The same response, unless both copies name different requests (a copy without request id matches any). */
  private isClaimed(messageId: string, requestId: string): boolean {
    const claimed = this.claimedChats.get(messageId);
    return claimed !== undefined && (claimed === requestId || claimed === '' || requestId === '');
  }

  private finishChat(session: Session, thread: string): void {
    const chat = session.openChats.get(thread);
    if (!chat) return;
    session.openChats.delete(thread);
    const usage = chat.usage;
    const tokens = {
      input: usage.input_tokens ?? 0,
      output: usage.output_tokens ?? 0,
      cache_read: usage.cache_read_input_tokens ?? 0,
      cache_creation: usage.cache_creation_input_tokens ?? 0,
    };
    const attributes: Attributes = {
      ...this.common(chat.scope.sessionId, 'chat'),
      'gen_ai.request.model': chat.model,
      'gen_ai.response.model': chat.model,
      'gen_ai.response.id': chat.messageId,
      'gen_ai.usage.input_tokens': tokens.input,
      'gen_ai.usage.output_tokens': tokens.output,
      'gen_ai.usage.cache_read.input_tokens': tokens.cache_read,
      'gen_ai.usage.cache_creation.input_tokens': tokens.cache_creation,
    };
    const writes1h = usage.cache_creation?.ephemeral_1h_input_tokens ?? 0;
    if (writes1h > 0) attributes[CACHE_WRITE_1H_ATTRIBUTE] = writes1h;
    if (chat.reportedCostUsd !== undefined) attributes['ccotel.cost.reported_usd'] = chat.reportedCostUsd;
    if (chat.requestId) attributes.request_id = chat.requestId;
    if (chat.stopReason) attributes['gen_ai.response.finish_reasons'] = chat.stopReason;
    if (chat.scope.agentId) attributes['ccotel.agent.id'] = chat.scope.agentId;
    this.emit(chat.scope, {
      traceId: chat.scope.traceId,
      spanId: chat.spanId,
      parentSpanId: chat.scope.parentSpanId,
      name: `chat ${chat.model}`,
      kind: 'client',
      startMs: chat.startMs,
      endMs: chat.endMs,
      status: 'unset',
      statusMessage: '',
      attributes,
      events: [],
    });
    for (const [type, value] of Object.entries(tokens)) {
      if (value === 0) continue;
      this.emitMetric('ccotel.tokens', '{token}', 'Tokens by type and model', 'sum', chat.endMs, value, {
        'gen_ai.token.type': type,
        'gen_ai.request.model': chat.model,
      }, chat.scope.traceId, chat.spanId, `${chat.spanId}:${type}`, chat.scope);
    }
  }

  private addToolUse(id: string, name: string, input: unknown, entry: TranscriptEntry, scope: Scope, turn: Turn | undefined): void {
    if (this.seenToolUses.has(id)) return; // replayed into another file, or the same row read twice
    this.seenToolUses.add(id);
    const permissionMode = (scope.agentId ? this.agents.get(scope.agentId)?.permissionMode : undefined) ?? this.sessions.get(scope.sessionId)?.permissionMode;
    const tool: PendingTool = { id, spanId: spanIdOf('tool', id), name, input, startMs: entry.timeMs, scope, turn, permissionMode };
    this.pendingTools.set(id, tool);
    turn?.toolIds.push(id);
    if (AGENT_TOOLS.has(name) && scope.traceId) {
      const args = (typeof input === 'object' && input !== null ? input : {}) as { prompt?: unknown; subagent_type?: unknown };
      const call: TaskCall = {
        toolUseId: id,
        spanId: tool.spanId,
        traceId: scope.traceId,
        sessionId: scope.sessionId,
        prompt: typeof args.prompt === 'string' ? args.prompt : '',
        subagentType: typeof args.subagent_type === 'string' ? args.subagent_type : undefined,
        turn,
      };
      this.openTaskCalls.set(id, call);
      for (const agent of this.agents.values()) {
        if (!agent.link && agent.sessionId === call.sessionId && agent.prompt === call.prompt) this.linkAgent(agent, call);
      }
    }
  }

  private addToolResult(block: ContentBlock, entry: TranscriptEntry, turn: Turn | undefined): void {
    const tool = this.pendingTools.get(block.tool_use_id!);
    if (!tool) return; // result of a call already reported (replay) or of one never seen
    const blockedByHook = this.hookBlockedCalls.delete(tool.id);
    const { outcome, blockedBy } = blockedByHook ? { outcome: 'denied' as const, blockedBy: 'hook' as const } : toolVerdict(block, entry);
    if (turn && outcome === 'interrupted') turn.interrupted = true;
    const task = this.openTaskCalls.get(tool.id);
    const agentId = agentIdOf(entry.toolUseResult);
    if (task && agentId) {
      this.agentLinks.set(agentId, task);
      const agent = this.agents.get(agentId);
      if (agent && !agent.link) this.linkAgent(agent, task);
    }
    this.emitTool(tool, outcome, entry.timeMs, { text: resultText(block), blockedBy });
  }

  private emitTool(tool: PendingTool, outcome: ToolOutcome, endMs: number, result: { text: string; blockedBy?: BlockSource } | undefined): void {
    this.pendingTools.delete(tool.id);
    this.openTaskCalls.delete(tool.id);
    const session = tool.scope.sessionId;
    const attributes: Attributes = {
      ...this.common(session, 'execute_tool'),
      'gen_ai.tool.name': tool.name,
      'gen_ai.tool.call.id': tool.id,
      tool_use_id: tool.id,
      'ccotel.tool.outcome': outcome,
    };
    if (tool.scope.agentId) attributes['ccotel.agent.id'] = tool.scope.agentId;
    if (tool.permissionMode) attributes['ccotel.permission.mode'] = tool.permissionMode;
    const inputText = JSON.stringify(tool.input ?? {});
    attributes['ccotel.tool.input.length'] = inputText.length;
    if (result) attributes['ccotel.tool.output.length'] = result.text.length;
    // Text goes out as it is here; the processors mask it, cap it, or (content level none) drop it.
    attributes['ccotel.tool.input'] = inputText;
    if (result) attributes['ccotel.tool.output'] = result.text;
    const block = result?.blockedBy;
    this.emit(tool.scope, {
      traceId: tool.scope.traceId,
      spanId: tool.spanId,
      parentSpanId: tool.scope.parentSpanId,
      name: `execute_tool ${tool.name}`,
      kind: 'internal',
      startMs: tool.startMs,
      endMs: Math.max(endMs, tool.startMs),
      status: outcome === 'error' ? 'error' : 'unset',
      statusMessage: outcome === 'error' && result ? firstLine(result.text) : '',
      attributes,
      events: [],
    });
    const metricAttrs = { 'gen_ai.tool.name': tool.name, outcome };
    const seconds = Math.max(0, endMs - tool.startMs) / 1000;
    this.emitMetric('ccotel.tool.calls', '{call}', 'Tool calls by tool and outcome', 'sum', endMs, 1, metricAttrs, tool.scope.traceId, tool.spanId, `${tool.spanId}:calls`, tool.scope);
    this.emitMetric('ccotel.tool.duration', 's', 'Tool call duration', 'histogram', endMs, seconds, metricAttrs, tool.scope.traceId, tool.spanId, `${tool.spanId}:duration`, tool.scope);
    const logAttrs: Attributes = { 'gen_ai.tool.name': tool.name, tool_use_id: tool.id, outcome };
    this.emitLogIn(tool.scope, tool.spanId, endMs, 'ccotel.tool.completed', outcome === 'error' ? 'WARN' : 'INFO', inputText, logAttrs, `${tool.spanId}:completed`);
    if (block) {
      const blockAttrs: Attributes = { ...logAttrs, source: block };
      if (tool.permissionMode) blockAttrs['ccotel.permission.mode'] = tool.permissionMode;
      this.emitLogIn(tool.scope, tool.spanId, endMs, 'ccotel.permission.blocked', 'WARN', '', blockAttrs, `${tool.spanId}:blocked`);
      this.emitMetric('ccotel.permission.blocks', '{block}', 'Permission blocks by tool and source', 'sum', endMs, 1, {
        'gen_ai.tool.name': tool.name,
        source: block,
      }, tool.scope.traceId, tool.spanId, `${tool.spanId}:blocked`, tool.scope);
    }
  }

  // ---- subagents --------------------------------------------------------------------------------------

  private addAgentRow(entry: TranscriptEntry, session: Session, agentId: string, file: TranscriptFile, offset: number): void {
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
        waiting: emptyBatch(),
        emitted: false,
        file: file.path,
        startOffset: offset,
      };
      this.agents.set(agentId, agent);
      const known = this.agentLinks.get(agentId);
      if (known) this.linkAgent(agent, known);
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
          const call = [...this.openTaskCalls.values()].find((c) => c.sessionId === agent!.sessionId && c.prompt === text);
          if (call) this.linkAgent(agent, call);
        }
      }
    }
    // The agent's open response is kept with the session of its first row, where its end looks for it: a 2.0.77
    // resumed process writes its own new id on a warmup's prompt and the resumed session's on the answer.
    const owner = this.session(agent.sessionId);
    const scope: Scope = { sessionId: session.id, agentId, traceId: agent.link?.traceId ?? '', parentSpanId: agent.spanId };
    this.handleConversationRow(entry, owner, `agent:${agentId}`, scope, undefined);
  }

  /** Attach a subagent to the tool call that started it (or, with none found, give it a trace of its own). */
  private linkAgent(agent: Agent, call: TaskCall | undefined): void {
    agent.link = call
      ? { traceId: call.traceId, toolSpanId: call.spanId, toolUseId: call.toolUseId, turn: call.turn }
      : { traceId: traceIdOf(agent.sessionId, 'agent', agent.id), toolSpanId: '', toolUseId: '' };
    agent.type ??= call?.subagentType;
    const traceId = agent.link.traceId;
    for (const span of agent.waiting.spans) span.traceId = traceId;
    for (const log of agent.waiting.logs) log.traceId = traceId;
    for (const point of agent.waiting.metrics) point.traceId = traceId;
    this.out.spans.push(...agent.waiting.spans);
    this.out.logs.push(...agent.waiting.logs);
    this.out.metrics.push(...agent.waiting.metrics);
    agent.waiting = emptyBatch();
    // Scopes captured before the link still carry an empty trace id: fix the open ones.
    for (const tool of this.pendingTools.values()) if (tool.scope.agentId === agent.id) tool.scope.traceId = traceId;
    const session = this.sessions.get(agent.sessionId);
    const chat = session?.openChats.get(`agent:${agent.id}`);
    if (chat) chat.scope.traceId = traceId;
  }

  private emitAgentSpan(agent: Agent): void {
    if (agent.emitted || !agent.link) return;
    agent.emitted = true;
    const session = this.sessions.get(agent.sessionId);
    const warmup = !agent.link.toolSpanId && (agent.prompt === undefined || agent.prompt === WARMUP_PROMPT);
    const chat = session?.openChats.get(`agent:${agent.id}`);
    if (warmup && chat) {
      chat.scope.parentSpanId = ''; // no subagent span to hang under
      // A resumed 2.0.x run warms up under a fresh id that never holds a conversation: no session, but its cost.
      const answeredIn = this.sessions.get(chat.scope.sessionId);
      if (answeredIn?.turns === 0 && !answeredIn.started) chat.scope.sessionId = '';
    }
    if (session) this.finishChat(session, `agent:${agent.id}`);
    if (warmup) return;
    const type = agent.type ?? 'subagent';
    this.out.spans.push({
      traceId: agent.link.traceId,
      spanId: agent.spanId,
      parentSpanId: agent.link.toolSpanId,
      name: `invoke_agent ${type}`,
      kind: 'internal',
      startMs: agent.firstMs,
      endMs: agent.lastMs,
      status: 'unset',
      statusMessage: '',
      attributes: {
        ...this.common(agent.sessionId, 'invoke_agent'),
        'gen_ai.agent.name': type,
        'ccotel.agent.id': agent.id,
        ...(agent.link.toolUseId ? { tool_use_id: agent.link.toolUseId } : {}),
      },
      events: [],
    });
  }

  // ---- output helpers ---------------------------------------------------------------------------------

  private common(sessionId: string, operation: string): Attributes {
    return { 'session.id': sessionId, 'gen_ai.conversation.id': sessionId, 'gen_ai.operation.name': operation };
  }

  /** Route an item to the output, or hold it while its subagent's trace is not known yet. */
  private emit(scope: Scope, span: SpanRecord): void {
    this.target(scope).spans.push(span);
  }

  private target(scope: Scope): TelemetryBatch {
    if (scope.traceId !== '' || scope.agentId === undefined) return this.out;
    return this.agents.get(scope.agentId)?.waiting ?? this.out;
  }

  private emitLogIn(scope: Scope, spanId: string, timeMs: number, eventName: string, severity: LogRecord['severity'], body: string, attributes: Attributes, idSeed: string): void {
    this.target(scope).logs.push(this.logRecord(scope.traceId, spanId, scope.sessionId, timeMs, eventName, severity, body, attributes, idSeed));
  }

  private emitLog(traceId: string, spanId: string, sessionId: string, timeMs: number, eventName: string, severity: LogRecord['severity'], body: string, attributes: Attributes, idSeed: string): void {
    this.out.logs.push(this.logRecord(traceId, spanId, sessionId, timeMs, eventName, severity, body, attributes, idSeed));
  }

  private logRecord(traceId: string, spanId: string, sessionId: string, timeMs: number, eventName: string, severity: LogRecord['severity'], body: string, attributes: Attributes, idSeed: string): LogRecord {
    return {
      id: recordIdOf(eventName, idSeed),
      timeMs,
      eventName,
      severity,
      traceId,
      spanId,
      body,
      attributes: { 'session.id': sessionId, ...attributes },
    };
  }

  private emitMetric(name: string, unit: string, description: string, kind: MetricPoint['kind'], timeMs: number, value: number, attributes: Attributes, traceId: string, spanId: string, idSeed: string, scope?: Scope): void {
    const point: MetricPoint = { id: recordIdOf(name, idSeed), name, unit, description, kind, timeMs, value, attributes, traceId, spanId };
    (scope ? this.target(scope) : this.out).metrics.push(point);
  }
}

function compactAttributes(entry: TranscriptEntry): Attributes {
  return {
    trigger: entry.compactMetadata?.trigger ?? 'unknown',
    'ccotel.compaction.pre_tokens': entry.compactMetadata?.preTokens ?? 0,
  };
}

function agentIdOf(toolUseResult: unknown): string | undefined {
  if (typeof toolUseResult !== 'object' || toolUseResult === null) return undefined;
  const id = (toolUseResult as { agentId?: unknown }).agentId;
  return typeof id === 'string' ? id : undefined;
}

function textOf(entry: TranscriptEntry): string {
  const content = entry.message.content;
  if (typeof content === 'string') return content;
  return content.map((block) => (block?.type === 'text' ? block.text ?? '' : '')).join('\n');
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/**
 * Whether a prompt starts a session, and how. Newer Claude Code numbers prompts (`turnPosition`): turn 1 is the
 * startup, and a process's first prompt in a later turn is a resume (it appends to the same file). Older
 * versions resumed or forked by copying the history into a new file: a session whose first prompt repeats one
 * seen elsewhere is a resume, or a fork when its rows say `forkedFrom`. Without numbering, the first prompt is
 * known only in a file read from its start (a re-read from a checkpoint must not report the start again).
 */
function sessionStartSource(entry: TranscriptEntry, sessionStarted: boolean, replayed: boolean, fileReadFromStart: boolean): string | undefined {
  const position = entry.turnPosition;
  if (position?.promptIndex === 0 && ((position.turnIndex ?? 1) > 1 || sessionStarted)) return 'resume';
  if (sessionStarted) return undefined;
  if (entry.forkedFromSessionId) return 'fork';
  if (replayed) return 'resume';
  if (position?.turnIndex === 1) return 'startup';
  return position === undefined && fileReadFromStart ? 'startup' : undefined;
}

/** The first row of a run: a prompt, a command, or the summary of a `/compact` run. */
function opensRun(entry: TranscriptEntry): boolean {
  return realPromptText(entry) !== undefined || userInput(entry) !== undefined || entry.isCompactSummary;
}

/**
 * `claude --resume <id>` running only `/compact` writes no prompt: its compaction summary is the new process's
 * first row (prompt index 0) after a manual compaction. An automatic compaction inside a running process is no
 * resume.
 */
function isResumedCompaction(entry: TranscriptEntry, session: { started: boolean; lastCompactTrigger?: string }): boolean {
  return entry.isCompactSummary && session.started && entry.turnPosition?.promptIndex === 0 && session.lastCompactTrigger === 'manual';
}
