// Correlate transcript entries into the DESIGN model: one trace per turn, `chat {model}` per API response
// (deduplicated across all files), `execute_tool {tool}` per tool call paired by id, subagents as
// `invoke_agent {type}` under the tool call that started them. Items are emitted once they are final, so a
// sink that keeps the first copy of an id keeps the right one; every id and timestamp comes from the input.
// This class routes each row to the part that owns its concern (files of this folder) and closes idle sessions.
import type { CorrelationEvent, Place } from '../../events.js';
import type { TranscriptEntry } from '../transcript-entry.js';
import { Places } from '../attribution.js';
import { ReportedCosts } from '../reported-cost.js';
import { Chats } from './chats.js';
import { Conversation } from './conversation.js';
import { MainThread } from './main-thread.js';
import { Output } from './output.js';
import { oldestOpenOffsets } from './resume-offsets.js';
import { opensWarmup, SessionStarts, startsResumedProcess } from './session-starts.js';
import { Sessions } from './sessions.js';
import { Subagents } from './subagents.js';
import { ToolCalls } from './tool-calls.js';
import { Turns } from './turns.js';
import type { Parts, TranscriptFile } from './types.js';
import { ClaimJournal } from './claim-journal.js';
import { UserInputs } from './user-inputs.js';

/**
 * A session closed for idleness and silent this much longer is forgotten: what comes for it later is a resume
 * (a started session goes on as started) or a copy of its history, which the claims, kept for the whole history,
 * still tell apart.
 */
const RETIRE_AFTER_MS = 24 * 3_600_000;

export class TranscriptCorrelator {
  private readonly parts: Parts;
  /** Claude Code's own cost figures (cost-state rows). */
  private readonly reportedCosts = new ReportedCosts();
  /** Sessions a Stop or SessionEnd hook said stopped, whose turn is not closed yet: the hook's time. */
  private readonly stopped = new Map<string, number>();

  constructor(places = new Places(), claims = new ClaimJournal()) {
    const parts = {} as Parts;
    Object.assign(parts, {
      claims,
      out: new Output((sessionId) => parts.sessions.find(sessionId)?.place),
      places,
      sessions: new Sessions(parts),
      starts: new SessionStarts(parts),
      main: new MainThread(parts),
      conversation: new Conversation(parts),
      inputs: new UserInputs(parts),
      turns: new Turns(parts),
      chats: new Chats(parts),
      tools: new ToolCalls(parts),
      agents: new Subagents(parts),
    } satisfies Parts);
    this.parts = parts;
  }

  readingFromStart(path: string): void {
    this.parts.starts.readingFromStart(path);
  }

  /** Where the session was at its last row read (undefined: none read, or forgotten). */
  placeOf(sessionId: string): Place | undefined {
    return this.parts.sessions.find(sessionId)?.place;
  }

  /** Take the events told so far. */
  drain(): CorrelationEvent[] {
    return this.parts.out.drain();
  }

  add(entry: TranscriptEntry, file: TranscriptFile, offset: number): void {
    const { sessions, starts, tools } = this.parts;
    if (entry.costState) {
      const session = sessions.find(entry.sessionId);
      const timeMs = session?.lastMs || (Number.isFinite(entry.timeMs) ? entry.timeMs : 0);
      this.parts.out.event(this.reportedCosts.reported(entry.sessionId, timeMs, entry.costState));
      // Written when a run's turn is over (print mode: as the process ends, hooks or not).
      if (session) this.parts.turns.closeIfOver(session);
      return;
    }
    if (entry.hookBlock) {
      // A PreToolUse hook that exits 2 stops the call: its result is the hook's message, not a tool error.
      if (entry.hookBlock.hookEvent === 'PreToolUse') tools.blockedByHook(entry.hookBlock.toolUseId);
      return;
    }
    if (entry.type === 'permission-mode') {
      sessions.addPermissionModeRow(entry, file);
      return;
    }
    if (entry.type === 'summary') {
      starts.summary(entry.leafUuid!, file.path);
      return;
    }
    const session = sessions.get(entry.sessionId);
    if (entry.type === 'queue-operation') {
      if (session.started) session.nextRunResumes = true;
      return;
    }
    starts.conversationIn(file.path);
    sessions.touch(session, entry.timeMs);
    sessions.locate(session, entry);
    sessions.timeUntimedMode(session, entry.timeMs, file);
    if (entry.forkedFromSessionId) {
      // A fork's copy of another session's rows (same uuids, same messages): the original file reports them,
      // whichever of the two is read first. The copy only tells that this session started as a fork.
      if (!session.started) starts.start(session, entry, 'fork');
      session.forked = true;
      return;
    }
    if (session.started && startsResumedProcess(entry)) session.nextRunResumes = true;
    if (opensWarmup(entry)) starts.warmup(entry);
    const row = { entry, file, offset };
    const agentId = file.kind === 'subagent' ? (file.agentId ?? entry.agentId) : entry.isSidechain ? (entry.agentId ?? this.parts.agents.inlineAgentId(session, entry)) : undefined;
    if (agentId !== undefined) this.parts.agents.add(row, session, agentId);
    else this.parts.main.add(row, session);
  }

  /** Close turns and subagents of sessions with no row since `idleBeforeMs` (live mode), as the end of input would. */
  closeIdle(idleBeforeMs: number): void {
    const { sessions, starts, turns, chats, tools, agents } = this.parts;
    starts.startResumed();
    for (const [sessionId, timeMs] of this.stopped) if (timeMs < idleBeforeMs) this.stopped.delete(sessionId);
    const idle = new Set<string>();
    for (const session of sessions.takeIdle(idleBeforeMs)) {
      turns.close(session);
      chats.finish(session, 'main'); // a response outside any turn ends with its session too
      const command = session.firstCommand;
      if (!session.started && command?.source) starts.start(session, command.entry, command.source);
      idle.add(session.id);
    }
    tools.closeIdle(idle);
    agents.closeIdle(idleBeforeMs);
    // Closing everything (the end of input) forgets nothing: rows may still come for the last sessions.
    if (idleBeforeMs === Number.POSITIVE_INFINITY) return;
    sessions.retire(idleBeforeMs - RETIRE_AFTER_MS, (session) => chats.hasOpen(session.id));
    agents.retire(idleBeforeMs - RETIRE_AFTER_MS);
  }

  /**
   * A Stop or SessionEnd hook of the session was read (following): its turn closes as soon as its rows say it is
   * over (releases before 2.1.3xx write no row after a run's last answer), not after the idle time. The hook may be
   * read before those rows: the session is looked at again after each read until then, or until it goes idle.
   */
  agentStopped(sessionId: string, timeMs: number): void {
    this.stopped.set(sessionId, Math.max(timeMs, this.stopped.get(sessionId) ?? timeMs));
    this.closeStopped();
  }

  /** Close the turns of the sessions a hook said stopped, once their rows say they are over. */
  closeStopped(): void {
    const { sessions, turns } = this.parts;
    for (const sessionId of this.stopped.keys()) {
      const session = sessions.find(sessionId);
      if (!session || !turns.isComplete(session)) continue;
      turns.close(session);
      this.stopped.delete(sessionId);
    }
  }

  /**
   * A clean stop of a following run: close the turns whose rows say they are over (releases before 2.1.3xx write no
   * row after a run's last answer, so only the idle time would), so their last answer is delivered now; a turn
   * still waiting for a call or a response stays open, re-read from its start by the next run.
   */
  closeComplete(): void {
    const { sessions, turns } = this.parts;
    for (const session of sessions.all()) if (turns.isComplete(session)) turns.close(session);
  }

  /**
   * What memory holds of the history: sessions with a row since they were last closed, sessions held (open or
   * closed and not yet forgotten), and sessions that had a row after they were forgotten.
   */
  sessionCounts(): { open: number; held: number; revived: number } {
    const { sessions } = this.parts;
    return { open: sessions.activeCount(), held: sessions.heldCount(), revived: sessions.revived };
  }

  /** End of input (backfill): close every open turn, tool call and subagent. */
  finish(): void {
    this.closeIdle(Number.POSITIVE_INFINITY);
  }

  /**
   * Per file, the offset of the oldest line a re-read must start from so everything still open is rebuilt
   * whole (`resume-offsets.ts`).
   */
  oldestOpenOffsets(): Map<string, number> {
    return oldestOpenOffsets(this.parts);
  }
}
