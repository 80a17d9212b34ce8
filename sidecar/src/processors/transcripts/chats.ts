// One `chat {model}` span per API response across all files: a response's rows (one per content block) extend the
// open chat of their thread; a copy of a response already claimed (a resume's or fork's history) is a replay.
// A finished chat is told as ChatCompleted (encode/chats.ts makes its span and token points).
import { IdSet } from '../../id-set.js';
import { spanIdOf } from '../../ids.js';
import type { Chat, Parts, Session, ThreadRow } from './types.js';


export class Chats {
  /**
   * API responses already attributed to a span (open or emitted), packed (one per response of the whole history):
   * message ids, those claimed without a request id, and `message id|request id` pairs. Any other copy of one is a
   * replay; 1.0.x resume copies drop the request id.
   */
  private readonly claimedMessages = new IdSet();
  private readonly claimedWithoutRequest = new IdSet();
  private readonly claimedRequests = new IdSet();
  /** The chat of each thread whose rows are still arriving, by session id and thread (no entry without one). */
  private readonly open = new Map<string, Map<string, Chat>>();

  constructor(private readonly parts: Parts) {}

  /** The open chat of a thread, kept with the session given. */
  openOf(session: Session, thread: string): Chat | undefined {
    return this.open.get(session.id)?.get(thread);
  }

  /** Whether any thread of the session has a response still open. */
  hasOpen(sessionId: string): boolean {
    return this.open.has(sessionId);
  }

  /** A row of the response `messageId`: it extends the thread's open chat, is a replay, or opens a chat. */
  addResponse(row: ThreadRow, messageId: string, previousRowMs: number): void {
    const { entry, session, thread, scope, turn } = row;
    const key = `${messageId}|${entry.requestId ?? ''}`;
    const open = this.openOf(session, thread);
    if (open && open.key !== key) this.finish(session, thread);
    const current = this.openOf(session, thread);
    if (current) {
      current.endMs = entry.timeMs;
      if (entry.message.usage) current.usage = entry.message.usage;
      current.reportedCostUsd = entry.costUSD ?? current.reportedCostUsd;
      current.stopReason = entry.message.stop_reason ?? current.stopReason;
    } else if (this.isClaimed(messageId, entry.requestId ?? '') || this.claimedEarlier(messageId, entry.requestId ?? '', entry.uuid)) {
      if (turn) {
        turn.replayedChats++;
        this.parts.starts.tell(session, turn, true);
      }
    } else {
      if (turn) this.parts.starts.tell(session, turn, false);
      this.claim(messageId, entry.requestId ?? '', entry.uuid);
      let threads = this.open.get(session.id);
      if (!threads) this.open.set(session.id, (threads = new Map()));
      threads.set(thread, {
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

  /** The same response, unless both copies name different requests (a copy without request id matches any). */
  private isClaimed(messageId: string, requestId: string): boolean {
    if (requestId === '') return this.claimedMessages.has(messageId);
    return this.claimedWithoutRequest.has(messageId) || this.claimedRequests.has(`${messageId}|${requestId}`);
  }

  /** isClaimed, by an earlier run of the sidecar, and by a row other than `row` (which a re-read reads again). */
  private claimedEarlier(messageId: string, requestId: string, row: string): boolean {
    const { claims } = this.parts;
    const claimed = requestId === '' ? claims.claimedBefore(`message ${messageId}`) : claims.claimedBefore(`without-request ${messageId}`) || claims.claimedBefore(`request ${messageId}|${requestId}`);
    return claimed && !claims.claimedBy(`message ${messageId}`, row);
  }

  private claim(messageId: string, requestId: string, row: string): void {
    const { claims } = this.parts;
    this.claimedMessages.add(messageId);
    claims.record(`message ${messageId}`, row);
    if (requestId === '') {
      this.claimedWithoutRequest.add(messageId);
      claims.record(`without-request ${messageId}`, row);
    } else {
      this.claimedRequests.add(`${messageId}|${requestId}`);
      claims.record(`request ${messageId}|${requestId}`, row);
    }
  }

  /** End the thread's open chat. */
  finish(session: Session, thread: string): void {
    const threads = this.open.get(session.id);
    const chat = threads?.get(thread);
    if (!chat) return;
    threads!.delete(thread);
    if (threads!.size === 0) this.open.delete(session.id);
    const { usage, scope } = chat;
    this.parts.out.event({
      kind: 'ChatCompleted',
      traceId: scope.traceId,
      spanId: chat.spanId,
      parentSpanId: scope.parentSpanId,
      sessionId: scope.sessionId,
      agentId: scope.agentId,
      model: chat.model,
      messageId: chat.messageId,
      requestId: chat.requestId,
      stopReason: chat.stopReason ?? undefined,
      startMs: chat.startMs,
      endMs: chat.endMs,
      tokens: {
        input: usage.input_tokens ?? 0,
        output: usage.output_tokens ?? 0,
        cache_read: usage.cache_read_input_tokens ?? 0,
        cache_creation: usage.cache_creation_input_tokens ?? 0,
      },
      cacheWrites1h: usage.cache_creation?.ephemeral_1h_input_tokens ?? 0,
      reportedCostUsd: chat.reportedCostUsd,
    }, scope);
  }
}
