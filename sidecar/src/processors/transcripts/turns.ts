// The turn state machine: a prompt (or an answered command) opens a turn, the next one or the end of input closes
// it; a closed turn is told as TurnEnded (encode/turns.ts makes its root span, prompt and end logs, turn count).
import { spanIdOf, traceIdOf } from '../../ids.js';
import type { TurnOutcome } from '../classify.js';
import { sessionStartSource } from './session-starts.js';
import type { Parts, Row, Session, Turn } from './types.js';

/** Stop reasons of a response the model goes on from (a call to run, a paused server tool). */
const CONTINUING_STOP_REASONS = new Set(['tool_use', 'pause_turn']);


export class Turns {
  constructor(private readonly parts: Parts) {}

  start({ entry, file, offset }: Row, session: Session, prompt: string): void {
    const { starts } = this.parts;
    const replayed = starts.seenBefore(entry, prompt);
    const source = sessionStartSource(entry, session.started, replayed, starts.isReadFromStart(file.path));
    const forkContinues = session.forked && session.turns === 0;
    if (source && !forkContinues) session.started = true;
    session.turns++;
    session.turn = {
      traceId: traceIdOf(session.id, entry.uuid),
      rootSpanId: spanIdOf('turn', session.id, entry.uuid),
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
      compactions: [],
      place: session.place,
      version: entry.version,
      permissionMode: session.permissionMode,
    };
  }

  /** The model answers a command: the command is the turn's prompt (`/init`, `! ls`), the previous turn ends. */
  startFromInput(session: Session): void {
    const { entry, input, text, file, offset } = session.pendingInput!;
    session.pendingInput = undefined;
    this.close(session);
    this.start({ entry, file, offset }, session, text);
    if (input.kind === 'command') session.turn!.commandName = input.name;
  }

  /**
   * A response with no prompt before it in its file (the prompt was compacted away, or the file holding it was
   * cleaned up): a turn of its own, so its chat and tool spans have a parent; it claims no prompt.
   */
  startPromptless(row: Row, session: Session): void {
    this.start(row, session, '');
    session.turn!.promptSeen = false;
  }

  /** A row says the turn is over: it closes, unless a call of it still waits for its result (then the next prompt or the idle time does). */
  closeIfOver(session: Session): void {
    if (session.turn && !session.turn.toolIds.some((id) => this.parts.tools.isPending(id))) this.close(session);
  }

  /**
   * Whether the open turn is over by its rows alone: answered, no call waiting for its result, and its last response
   * ended with a final stop reason (2.1.17 writes none: its turns stay open).
   */
  isComplete(session: Session): boolean {
    const turn = session.turn;
    if (!turn?.answered || turn.toolIds.some((id) => this.parts.tools.isPending(id))) return false;
    const open = this.parts.chats.openOf(session, 'main');
    return open === undefined || (typeof open.stopReason === 'string' && !CONTINUING_STOP_REASONS.has(open.stopReason));
  }

  close(session: Session): void {
    const turn = session.turn;
    if (!turn) return;
    this.parts.starts.tell(session, turn, false);
    this.parts.chats.finish(session, 'main');
    session.turn = undefined;
    if (turn.newChats === 0 && turn.toolIds.length === 0 && turn.replayedChats > 0) return; // a replay of a turn already reported
    session.lastTurn = { traceId: turn.traceId, rootSpanId: turn.rootSpanId }; // not the turn: its text may be large
    this.emit(turn, this.outcomeOf(turn));
  }

  private outcomeOf(turn: Turn): TurnOutcome {
    if (turn.interrupted) return 'interrupted';
    if (turn.lastAssistantWasApiError) return 'error';
    const pending = turn.toolIds.some((id) => this.parts.tools.isPending(id));
    return pending || !turn.answered ? 'abandoned' : 'completed';
  }

  private emit(turn: Turn, outcome: TurnOutcome): void {
    this.parts.out.event({
      kind: 'TurnEnded',
      traceId: turn.traceId,
      spanId: turn.rootSpanId,
      sessionId: turn.sessionId,
      promptId: turn.promptId || undefined,
      messageUuid: turn.promptUuid,
      promptText: turn.promptText,
      promptSeen: turn.promptSeen,
      commandName: turn.commandName,
      outcome,
      startMs: turn.startMs,
      endMs: turn.lastMs,
      place: turn.place,
      version: turn.version,
      permissionMode: turn.permissionMode,
      compactions: turn.compactions,
    });
  }
}
