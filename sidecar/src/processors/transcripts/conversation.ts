// Conversation rows of any thread (main or subagent): responses become chats and tool calls, results end calls.
import { toolResults, toolUses } from '../classify.js';
import type { TranscriptEntry } from '../transcript-entry.js';
import type { Parts, ThreadRow } from './types.js';

export class Conversation {
  constructor(private readonly parts: Parts) {}

  add(row: ThreadRow): void {
    const { entry, session, thread, turn } = row;
    const previousRowMs = session.lastRowMs.get(thread) ?? entry.timeMs;
    session.lastRowMs.set(thread, entry.timeMs);
    if (entry.type === 'assistant') {
      this.addAssistantRow(row, previousRowMs);
      return;
    }
    // The open response stays open: its last rows (final usage, stop reason) may follow a result (parallel calls).
    for (const block of toolResults(entry)) this.parts.tools.end(block, entry, turn);
  }

  private addAssistantRow(row: ThreadRow, previousRowMs: number): void {
    const { entry, session, thread, scope, turn } = row;
    const { chats, tools } = this.parts;
    if (entry.isApiErrorMessage || entry.message.model === '<synthetic>') {
      chats.finish(session, thread);
      if (turn && entry.isApiErrorMessage) {
        turn.lastAssistantWasApiError = true;
        const { traceId, parentSpanId } = scope;
        this.parts.out.event({ kind: 'ApiErrorOccurred', traceId, spanId: parentSpanId, sessionId: session.id, messageUuid: entry.uuid, text: textOf(entry), timeMs: entry.timeMs });
      }
      return;
    }
    if (turn) {
      turn.answered = true;
      turn.lastAssistantWasApiError = false;
    }
    if (entry.message.id) chats.addResponse(row, entry.message.id, previousRowMs);
    for (const block of toolUses(entry)) tools.start(block, row);
  }
}

function textOf(entry: TranscriptEntry): string {
  const content = entry.message.content;
  if (typeof content === 'string') return content;
  return content.map((block) => (block?.type === 'text' ? block.text ?? '' : '')).join('\n');
}
