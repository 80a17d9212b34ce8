// Rows of a session's main thread: prompts and commands open turns, compactions mark them, everything else is a
// conversation row under the open turn (or, after a turn closed for idleness, under the last one).
import { isInterruptMarker, realPromptText } from '../classify.js';
import type { TranscriptEntry } from '../transcript-entry.js';
import { isResumedCompaction } from './session-starts.js';
import type { Parts, Row, Session } from './types.js';

const THREAD = 'main';

export class MainThread {
  constructor(private readonly parts: Parts) {}

  add(row: Row, session: Session): void {
    const { entry, file } = row;
    const { sessions, starts, inputs, turns } = this.parts;
    if (entry.permissionMode) sessions.changePermissionMode(session, entry.permissionMode, entry.timeMs, file);
    starts.noteRunStart(session, entry);
    const prompt = realPromptText(entry);
    if (prompt !== undefined) {
      session.pendingInput = undefined;
      turns.close(session);
      turns.start(row, session, prompt);
      session.lastRowMs.set(THREAD, entry.timeMs);
      return;
    }
    if (inputs.add(row, session)) {
      session.lastRowMs.set(THREAD, entry.timeMs);
      return;
    }
    if (entry.type === 'assistant' && session.pendingInput?.answerable) turns.startFromInput(session);
    const turn = session.turn;
    if (turn) turn.lastMs = Math.max(turn.lastMs, entry.timeMs);
    if (isResumedCompaction(entry, session)) starts.start(session, entry, 'resume');
    if (entry.type === 'system') {
      this.addSystemRow(entry, session);
      return;
    }
    if (!turn) {
      const last = session.lastTurn;
      // Rows after a turn closed for idleness are its late rows.
      const scope = last && { sessionId: session.id, traceId: last.traceId, parentSpanId: last.rootSpanId, place: session.place };
      if (scope) this.parts.conversation.add({ entry, session, thread: THREAD, scope, turn: undefined });
      else if (entry.type === 'assistant') {
        turns.startPromptless(row, session);
        this.add(row, session);
      }
      return;
    }
    if (isInterruptMarker(entry)) turn.interrupted = true;
    const scope = { sessionId: session.id, traceId: turn.traceId, parentSpanId: turn.rootSpanId, place: session.place };
    this.parts.conversation.add({ entry, session, thread: THREAD, scope, turn });
  }

  /**
   * A system row ends the open response; one that says the turn is over closes it (live, its root span and last
   * answer go out at once, not after the idle time, and a backfill closes it at the same row); a compaction is an
   * event of its turn and a log record.
   */
  private addSystemRow(entry: TranscriptEntry, session: Session): void {
    const turn = session.turn;
    this.parts.chats.finish(session, THREAD);
    if (entry.endsTurn) this.parts.turns.closeIfOver(session);
    if (entry.subtype !== 'compact_boundary') return;
    session.lastCompactTrigger = entry.compactMetadata?.trigger;
    // Between turns (the last one told already): a record in that turn's context, no event on its root span.
    const context = turn ? { traceId: turn.traceId, spanId: turn.rootSpanId } : session.lastTurn && { traceId: session.lastTurn.traceId, spanId: session.lastTurn.rootSpanId };
    if (!context) return;
    const { trigger, preTokens } = entry.compactMetadata ?? {};
    turn?.compactions.push({ timeMs: entry.timeMs, trigger, preTokens });
    this.parts.out.event({ kind: 'CompactionOccurred', ...context, sessionId: session.id, messageUuid: entry.uuid, timeMs: entry.timeMs, trigger, preTokens });
  }
}
