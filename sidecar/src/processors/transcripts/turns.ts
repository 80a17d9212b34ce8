// The turn state machine: a prompt (or an answered command) opens a turn, the next one or the end of input closes
// it; a closed turn becomes the `invoke_agent claude-code` root span, its prompt and end logs and a turn count.
import { spanIdOf, traceIdOf } from '../../ids.js';
import type { Attributes } from '../../model.js';
import { commonAttributes, EVENTS, METRICS, SPANS } from '../../semconv.js';
import type { TurnOutcome } from '../classify.js';
import { sessionStartSource } from './session-starts.js';
import type { Parts, Row, Session, Turn } from './types.js';


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
      events: [],
      attributes: {
        'ccotel.cwd': entry.cwd ?? '',
        'ccotel.git.branch': entry.gitBranch ?? '',
        'ccotel.claude_code.version': entry.version ?? '',
        ...(session.permissionMode ? { 'ccotel.permission.mode': session.permissionMode } : {}),
      },
    };
  }

  /** The model answers a command: the command is the turn's prompt (`/init`, `! ls`), the previous turn ends. */
  startFromInput(session: Session): void {
    const { entry, input, text, file, offset } = session.pendingInput!;
    session.pendingInput = undefined;
    this.close(session);
    this.start({ entry, file, offset }, session, text);
    if (input.kind === 'command') session.turn!.attributes['ccotel.command.name'] = input.name;
  }

  /**
   * A response with no prompt before it in its file (the prompt was compacted away, or the file holding it was
   * cleaned up): a turn of its own, so its chat and tool spans have a parent; it claims no prompt.
   */
  startPromptless(row: Row, session: Session): void {
    this.start(row, session, '');
    const turn = session.turn!;
    turn.promptSeen = false;
    turn.attributes['ccotel.turn.prompt_seen'] = false;
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
    const { out } = this.parts;
    const { traceId, rootSpanId, sessionId } = turn;
    const attributes: Attributes = {
      ...commonAttributes(sessionId, 'invoke_agent'),
      'gen_ai.agent.name': 'claude-code',
      'message.uuid': turn.promptUuid,
      'ccotel.turn.outcome': outcome,
      'ccotel.prompt.length': turn.promptText.length,
      ...turn.attributes,
    };
    if (turn.promptId) attributes['prompt.id'] = turn.promptId;
    attributes['ccotel.prompt'] = turn.promptText;
    out.event({
      kind: 'TurnEnded',
      traceId,
      spanId: rootSpanId,
      sessionId,
      promptId: turn.promptId || undefined,
      messageUuid: turn.promptUuid,
      promptText: turn.promptText,
      outcome,
      startMs: turn.startMs,
      endMs: turn.lastMs,
    });
    out.span({
      traceId,
      spanId: rootSpanId,
      parentSpanId: '',
      name: SPANS.turn,
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
    if (turn.promptSeen !== false) {
      out.log({
        eventName: EVENTS.promptSubmitted,
        severity: 'INFO',
        timeMs: turn.startMs,
        sessionId,
        traceId,
        spanId: rootSpanId,
        body: turn.promptText,
        attributes: promptAttributes,
        idSeed: rootSpanId,
      });
    }
    out.log({
      sessionId,
      traceId,
      spanId: rootSpanId,
      idSeed: rootSpanId,
      eventName: EVENTS.turnEnded,
      severity: outcome === 'error' ? 'WARN' : 'INFO',
      timeMs: turn.lastMs,
      attributes: { outcome, 'message.uuid': turn.promptUuid },
    });
    out.metric(METRICS.turns, { timeMs: turn.lastMs, value: 1, attributes: { outcome }, traceId, spanId: rootSpanId, idSeed: rootSpanId });
  }
}
