// Codex rollouts into the correlation events every agent's source tells (DESIGN §12): one thread is one session
// (its id is `session.id`), a task_started … task_complete is a turn (`invoke_agent codex`), each model response
// that reported usage is a `chat {model}` with that response's own figures, each function call paired with its
// output by call id is an `execute_tool` with the outcome its exit code tells, and a subagent's first turn an
// `invoke_agent {role}` span under the spawn_agent call that started it (a later turn of it: under the send_input
// call that did). Ids come from the thread, turn and call ids, so reading a file again tells the same items. A
// subagent turn's chats and calls go under its span, in the parent's trace; a turn after `thread_settings_applied`
// outside a turn is a resumed run's (0.171).
import type { ChatCompleted, CorrelationEvent, ToolCallEnded } from '../../events.js';
import { spanIdOf, traceIdOf } from '../../ids.js';
import type { AgentRows, RowRead } from '../../records/agent-rows.js';
import type { TranscriptFile } from '../../records/transcript.js';
import { toolSpanId } from '../../semconv.js';
import { codexResponseKey } from './native-telemetry.js';
import { firesSessionEnd } from './processes.js';
import { contentText, objectField, outputText, parseRolloutLine, stringField, usageOf, type CodexUsage, type RolloutRow } from './rollout-row.js';

const AGENT = 'codex';
/** The tools whose call runs a shell command (`{"cmd": …}`): the shell log's commands go under their spans. */
const SHELL_TOOLS = new Set(['exec_command']);
/** A thread silent this much longer than the idle time is forgotten (a later resume reads as a thread read anew). */
const RETIRE_AFTER_MS = 24 * 3_600_000;

/** The call that started a subagent's turn: spawn_agent (its output names the thread) or send_input (its target). */
interface Spawn {
  traceId: string;
  toolSpanId: string;
  callId: string;
  sessionId: string;
}

/** A subagent thread's turn: the span of the subagent under the call that started it. */
interface SubagentRun {
  agentType: string;
  startMs: number;
  endMs: number;
}

/** What a subagent's turn tells inside its span: held until the span is told (its starting call read). */
type NestedItem = ChatCompleted | ToolCallEnded;

interface OpenCall {
  name: string;
  input: unknown;
  startMs: number;
  /** An item of its run was written (0.171's CommandExecution, whose id is the call's): the command ran. */
  ran: boolean;
}

/** An "aborted by user" call waiting for its item (AbortedCall). */
interface AbortedRun {
  turn: Turn;
  call: OpenCall;
  output: string;
  timeMs: number;
}

interface Turn {
  id: string;
  traceId: string;
  spanId: string;
  startMs: number;
  lastMs: number;
  prompt?: string;
  model?: string;
  cwd?: string;
  /** When the request being answered was sent: the turn's start, or the last input the model was given. */
  requestMs: number;
  calls: Map<string, OpenCall>;
  compactions: { timeMs: number; trigger?: string }[];
  error: boolean;
  /** A subagent's turn (its n-th): its chats and calls belong under the subagent's span, held until it is told. */
  subagentTurn?: number;
  /** The session start this turn is (its source), told at its prompt: a SessionStart hook fires before that. */
  startSource?: string;
  /**
   * Its `turn_context` says `approval_policy: never` (`codex exec` as scripts run it): no call can be declined, so one
   * "aborted by user" was interrupted, whether or not its item came (on a loaded machine Codex may exit first).
   */
  asksNothing?: boolean;
}

interface Thread {
  id: string;
  path: string;
  version?: string;
  cwd?: string;
  model?: string;
  forked: boolean;
  /** The client that started the thread (`session_meta.originator`: `codex_exec`, `codex-tui`). */
  originator?: string;
  /** Its rows include items (`item_completed`, 0.171 on): a command that ran has one, so one without never ran. */
  writesItems: boolean;
  /**
   * Calls "aborted by user" whose item may still come: an interrupted command's is written after its turn's
   * `turn_aborted`. Told when it comes (interrupted), or at the thread's next turn or its end without it (declined).
   */
  aborted: Map<string, AbortedRun>;
  /** A subagent's thread (spawned by another: `source.subagent` in 0.130, `parent_thread_id` in 0.171). */
  subagent: boolean;
  /** A subagent's role (`agent_role`; none: `default`, as Codex calls it). */
  agentType?: string;
  /** Turns opened since its first row: a subagent's n-th turn is started by the n-th call aimed at it. */
  turnsOpened: number;
  /** Its session_meta was read and no turn since: the next turn is the session's start. */
  starting: boolean;
  /**
   * A `thread_settings_applied` came outside a turn of a thread already started: a process took the thread up
   * again (0.171 writes it as `codex exec resume` starts), so the next turn is a resumed session's start.
   */
  resuming: boolean;
  lastMs: number;
  /** Active since it was last closed for idleness. */
  active: boolean;
  turn?: Turn;
  /** The cumulative usage of the last token_count read: a count that repeats it is no new response. */
  lastTotal?: string;
  /** A model output came since the last response counted (tells a response when the total before it is unknown). */
  outputSinceCount: boolean;
  /** Response ids of 0.171's token_usage_record rows, waiting for their token_count. */
  responseIds: string[];
  /**
   * The half of a compaction read last and not yet paired: 0.130 writes a `compacted` row and a `context_compacted`
   * event for one compaction, 0.171 the row only; a half pairs with the other kind, never with its own.
   */
  compactionHalf?: 'row' | 'event';
}

/** `rollout-<time>-<thread id>.jsonl`: the thread id, for rows read before (or without) the session_meta. */
/** A subagent's n-th turn (0: the one spawn_agent started). */
const runKey = (threadId: string, n: number): string => `${threadId} ${n}`;
const isRunOf = (key: string, threadId: string): boolean => key.startsWith(`${threadId} `);

function threadIdFromPath(path: string): string {
  const match = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i.exec(path);
  return match ? match[1] : path;
}

/** The TUI writes a `thread_settings_applied` before each of its turns: there it tells no resume. */
const TUI_ORIGINATOR = 'codex-tui';

/** Whether the "aborted by user" call ran: known where the thread writes items (a run leaves one), else unknown. */
export type AbortedCall = 'ran' | 'never_ran' | 'unknown';

/**
 * A call's outcome from its output: the exec tools end their output with the exit code ("Process exited with code
 * N"; older shell tools give `metadata.exit_code` in JSON). "aborted by user" is written both for a call stopped by an
 * interrupt (Ctrl-C while it runs) and for an escalation the user declines (Esc at the approval prompt, recorded in
 * the TUI): a call that never ran was declined (`refusalInferred`: Codex's telemetry may say it was approved); where
 * that is not known (0.130 writes no items), it reads as interrupted and the hooks decide (`refusalUnknown`).
 */
export function toolOutcome(output: string | undefined, aborted: AbortedCall = 'unknown'): Pick<ToolCallEnded, 'outcome' | 'blockedBy' | 'refusalUnknown' | 'refusalInferred'> {
  if (output === undefined) return { outcome: 'success' };
  if (/^aborted by user/m.test(output)) {
    if (aborted === 'never_ran') return { outcome: 'denied', blockedBy: 'user', refusalInferred: true };
    return aborted === 'unknown' ? { outcome: 'interrupted', refusalUnknown: true } : { outcome: 'interrupted' };
  }
  const stated = /Process exited with code (-?\d+)/.exec(output)?.[1] ?? exitCodeInJson(output);
  if (stated === undefined) return { outcome: 'success' };
  const code = Number(stated);
  if (code === 0) return { outcome: 'success' };
  return { outcome: code === -1 ? 'interrupted' : 'error' };
}

function exitCodeInJson(output: string): string | undefined {
  if (!output.startsWith('{')) return undefined;
  try {
    const code = (JSON.parse(output) as { metadata?: { exit_code?: unknown } }).metadata?.exit_code;
    return typeof code === 'number' ? String(code) : undefined;
  } catch {
    return undefined;
  }
}

function parseArguments(text: unknown): unknown {
  if (typeof text !== 'string') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function tokensOf(usage: CodexUsage) {
  // OpenAI's input includes the cached part; the events carry the uncached input apart (as Anthropic's do).
  return { input: Math.max(0, usage.input_tokens - usage.cached_input_tokens), output: usage.output_tokens, cache_read: usage.cached_input_tokens, cache_creation: 0 };
}

export class CodexRollouts implements AgentRows {
  private out: CorrelationEvent[] = [];
  private readonly threads = new Map<string, Thread>();
  /** Thread of each file (a rollout is one thread; a resume appends to it). */
  private readonly threadOfFile = new Map<string, string>();
  /**
   * A subagent turn's span needs the call that started it (in the parent's file) and the turn (in its own), read in
   * either order: what is known of each, by run key (runKey), until the span is told (once).
   */
  private readonly spawns = new Map<string, Spawn>();
  private readonly subagentRuns = new Map<string, SubagentRun>();
  private readonly subagentsTold = new Set<string>();
  /** A subagent turn's chats and calls, by run key, until its span is told. */
  private readonly nestedHeld = new Map<string, NestedItem[]>();
  /** send_input calls read per subagent thread: the n-th starts its turn n. */
  private readonly inputsSent = new Map<string, number>();

  readingFromStart(path: string): void {
    const id = this.threadOfFile.get(path);
    const thread = id === undefined ? undefined : this.threads.get(id);
    if (!thread) return;
    // Told again from the start, with the same ids (the sinks drop the repeats): nothing of the earlier read is kept.
    thread.starting = false;
    thread.resuming = false;
    thread.turn = undefined;
    thread.aborted.clear();
    thread.lastTotal = undefined;
    thread.outputSinceCount = false;
    thread.responseIds = [];
    thread.compactionHalf = undefined;
    thread.turnsOpened = 0;
    this.forgetSubagents(thread.id);
  }

  drain(): CorrelationEvent[] {
    const taken = this.out;
    this.out = [];
    return taken;
  }

  add(text: string, file: TranscriptFile): RowRead {
    const parsed = parseRolloutLine(text);
    if (!parsed.ok) return parsed;
    const { row } = parsed;
    const thread = this.threadFor(file.path, row);
    thread.lastMs = Math.max(thread.lastMs, row.timeMs);
    thread.active = true;
    if (thread.turn) thread.turn.lastMs = Math.max(thread.turn.lastMs, row.timeMs);
    switch (row.type) {
      case 'session_meta':
        return this.sessionMeta(thread, row);
      case 'turn_context':
        return this.turnContext(thread, row);
      case 'event_msg':
        return this.eventMsg(thread, row);
      case 'response_item':
        return this.responseItem(thread, row);
      case 'token_usage_record': {
        const responseId = stringField(row.payload, 'response_id');
        if (responseId) thread.responseIds.push(responseId);
        return { ok: true, timeMs: row.timeMs };
      }
      case 'compacted':
        this.compactionHalfRead(thread, 'row', row.timeMs);
        return { ok: true, timeMs: row.timeMs };
      default:
        return { ok: 'ignored' };
    }
  }

  closeIdle(idleBeforeMs: number): void {
    for (const thread of this.threads.values()) {
      if (thread.lastMs >= idleBeforeMs) continue;
      this.closeTurn(thread, 'abandoned', thread.turn?.lastMs ?? thread.lastMs);
      this.tellNeverRan(thread);
      thread.active = false;
    }
    if (idleBeforeMs === Number.POSITIVE_INFINITY) return;
    for (const [id, thread] of this.threads) {
      if (thread.lastMs >= idleBeforeMs - RETIRE_AFTER_MS) continue;
      this.threads.delete(id);
      this.threadOfFile.delete(thread.path);
      this.releaseNested(id);
      this.forgetSubagents(id);
      // The parent's calls that started it (read anew, a thread keeps them: its parent's facts).
      for (const key of this.spawns.keys()) if (isRunOf(key, id)) this.spawns.delete(key);
      this.inputsSent.delete(id);
    }
  }

  finish(): void {
    this.closeIdle(Number.POSITIVE_INFINITY);
    // Subagents whose spawn call was never read (its parent's file is gone): their items in their own traces.
    for (const key of [...this.nestedHeld.keys()]) this.releaseNested(key.slice(0, key.indexOf(' ')));
  }

  holdsSession(sessionId: string): boolean {
    return this.threads.has(sessionId);
  }

  sessionCounts(): { open: number; held: number; revived: number } {
    let open = 0;
    for (const thread of this.threads.values()) if (thread.active) open++;
    return { open, held: this.threads.size, revived: 0 };
  }

  /**
   * A thread's facts are on its first row only (session_meta: the release, a fork's parent), and a resume appends
   * to its file: a file is read again from its start while its thread is held, so a restart knows them.
   */
  oldestOpenOffsets(): Map<string, number> {
    const offsets = new Map<string, number>();
    for (const thread of this.threads.values()) offsets.set(thread.path, 0);
    return offsets;
  }

  private threadFor(path: string, row: RolloutRow): Thread {
    let id = this.threadOfFile.get(path);
    if (id === undefined) {
      id = (row.type === 'session_meta' ? stringField(row.payload, 'id') : undefined) ?? threadIdFromPath(path);
      this.threadOfFile.set(path, id);
    }
    let thread = this.threads.get(id);
    if (!thread) {
      thread = { id, path, forked: false, writesItems: false, aborted: new Map(), subagent: false, turnsOpened: 0, starting: false, resuming: false, lastMs: row.timeMs, active: true, outputSinceCount: false, responseIds: [] };
      this.threads.set(id, thread);
    }
    return thread;
  }

  private sessionMeta(thread: Thread, row: RolloutRow): RowRead {
    const { payload } = row;
    thread.version = stringField(payload, 'cli_version') ?? thread.version;
    thread.cwd = stringField(payload, 'cwd') ?? thread.cwd;
    if (stringField(payload, 'forked_from_id')) thread.forked = true;
    thread.originator = stringField(payload, 'originator') ?? thread.originator;
    const spawn = objectField(objectField(objectField(payload, 'source') ?? {}, 'subagent') ?? {}, 'thread_spawn');
    if (stringField(payload, 'parent_thread_id') || spawn) {
      thread.subagent = true;
      thread.agentType = (spawn && stringField(spawn, 'agent_role')) ?? 'default';
    }
    thread.starting = true;
    return { ok: true, timeMs: row.timeMs };
  }

  private turnContext(thread: Thread, row: RolloutRow): RowRead {
    const model = stringField(row.payload, 'model');
    const cwd = stringField(row.payload, 'cwd');
    if (model) thread.model = model;
    if (thread.turn) {
      if (model) thread.turn.model = model;
      if (cwd) thread.turn.cwd = cwd;
      thread.turn.asksNothing = stringField(row.payload, 'approval_policy') === 'never';
    }
    return { ok: true, timeMs: row.timeMs };
  }

  private eventMsg(thread: Thread, row: RolloutRow): RowRead {
    const { payload, timeMs } = row;
    const turn = thread.turn;
    switch (stringField(payload, 'type')) {
      case 'task_started':
        this.openTurn(thread, stringField(payload, 'turn_id') ?? `${timeMs}`, timeMs);
        break;
      case 'task_complete':
        this.closeTurn(thread, turn?.error ? 'error' : 'completed', timeMs);
        break;
      case 'turn_aborted':
        this.closeTurn(thread, 'interrupted', timeMs);
        break;
      case 'thread_settings_applied':
        // A new thread's comes with its session_meta (starting) or inside its first turn: neither is a resume; nor is
        // the TUI's before each of its turns (its resume is told by the SessionStart hook).
        if (!thread.turn && !thread.starting && thread.originator !== TUI_ORIGINATOR) thread.resuming = true;
        break;
      case 'error':
        if (turn) turn.error = true;
        break;
      case 'user_message':
        this.prompt(thread, turn, stringField(payload, 'message'), timeMs);
        break;
      case 'item_started':
      case 'item_completed': {
        thread.writesItems = true;
        const item = objectField(payload, 'item');
        const itemId = stringField(item ?? {}, 'id') ?? '';
        const call = turn?.calls.get(itemId);
        if (call) call.ran = true;
        const aborted = thread.aborted.get(itemId);
        if (aborted) this.tellAborted(thread, itemId, aborted, 'ran');
        if (item && stringField(item, 'type') === 'UserMessage') this.prompt(thread, turn, contentText(item.content), timeMs);
        break;
      }
      case 'token_count':
        this.tokenCount(thread, objectField(payload, 'info'), timeMs);
        break;
      case 'context_compacted':
        this.compactionHalfRead(thread, 'event', timeMs);
        break;
      default:
        return { ok: 'ignored' };
    }
    return { ok: true, timeMs };
  }

  private responseItem(thread: Thread, row: RolloutRow): RowRead {
    const { payload, timeMs } = row;
    const turn = thread.turn;
    const type = stringField(payload, 'type');
    if (type === 'function_call' || type === 'custom_tool_call') {
      thread.outputSinceCount = true;
      const callId = stringField(payload, 'call_id');
      if (turn && callId) {
        const input = type === 'function_call' ? parseArguments(payload.arguments) : { input: payload.input };
        turn.calls.set(callId, { name: stringField(payload, 'name') ?? 'unknown', input, startMs: timeMs, ran: false });
      }
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      const callId = stringField(payload, 'call_id');
      if (turn) turn.requestMs = timeMs;
      if (turn && callId) this.endCall(thread, turn, callId, outputText(payload.output), timeMs);
    } else if (type === 'message' && stringField(payload, 'role') === 'assistant') {
      thread.outputSinceCount = true;
    } else if (type === 'reasoning') {
      thread.outputSinceCount = true;
    } else {
      return { ok: 'ignored' };
    }
    return { ok: true, timeMs };
  }

  private openTurn(thread: Thread, turnId: string, timeMs: number): void {
    // A turn still open when the next starts was cut off (its process ended without a word).
    if (thread.turn) this.closeTurn(thread, 'abandoned', thread.turn.lastMs);
    this.tellNeverRan(thread);
    thread.turn = {
      id: turnId,
      traceId: traceIdOf(thread.id, turnId),
      spanId: spanIdOf('turn', thread.id, turnId),
      startMs: timeMs,
      lastMs: timeMs,
      model: thread.model,
      cwd: thread.cwd,
      requestMs: timeMs,
      calls: new Map(),
      compactions: [],
      error: false,
    };
    const n = thread.turnsOpened++;
    if (thread.subagent && !this.subagentsTold.has(runKey(thread.id, n))) thread.turn.subagentTurn = n;
    // The start is told where the session_meta is read: a read from the middle of a file (a resume appended after the
    // thread was forgotten) is no start, as a read of the whole file has none there.
    if (thread.starting || thread.resuming) {
      thread.turn.startSource = thread.resuming ? 'resume' : thread.subagent ? 'subagent' : thread.forked ? 'fork' : 'startup';
      thread.starting = false;
      thread.resuming = false;
    }
  }

  /**
   * The turn's prompt: the turn starts there, as a Claude Code turn starts at its prompt (Codex's SessionStart and
   * UserPromptSubmit hooks fire between its task_started and the prompt's row, so a hook's start precedes it).
   */
  private prompt(thread: Thread, turn: Turn | undefined, text: string | undefined, timeMs: number): void {
    if (!turn || text === undefined || turn.prompt !== undefined) return;
    turn.prompt = text;
    turn.requestMs = timeMs;
    turn.startMs = timeMs;
    this.tellStart(thread, turn);
  }

  private tellStart(thread: Thread, turn: Turn): void {
    if (turn.startSource === undefined) return;
    this.out.push({ kind: 'SessionStarted', sessionId: thread.id, source: turn.startSource, messageUuid: turn.id, timeMs: turn.startMs });
    turn.startSource = undefined;
  }

  /**
   * A token_count: a new response when its cumulative total differs from the last one read (Codex repeats the
   * last count after tool outputs and at the start of a turn); its own usage is `last_token_usage`.
   */
  private tokenCount(thread: Thread, info: Record<string, unknown> | undefined, timeMs: number): void {
    if (!info) return; // 0.130 writes `info: null` before a turn's first response
    const last = usageOf(info.last_token_usage);
    const total = JSON.stringify(info.total_token_usage ?? null);
    const known = thread.lastTotal !== undefined;
    const repeated = total === thread.lastTotal || (!known && !thread.outputSinceCount);
    thread.lastTotal = total;
    if (repeated || !last) return;
    thread.outputSinceCount = false;
    const turn = thread.turn;
    const model = turn?.model ?? thread.model ?? 'unknown';
    const traceId = turn?.traceId ?? traceIdOf(thread.id, 'outside-turns');
    const startMs = Math.min(turn?.requestMs ?? timeMs, timeMs);
    this.tell(thread, turn, {
      kind: 'ChatCompleted',
      agent: AGENT,
      traceId,
      // The cumulative total tells which response of the thread this is, however often it is read.
      spanId: spanIdOf('chat', thread.id, total),
      parentSpanId: turn?.spanId ?? '',
      sessionId: thread.id,
      model,
      messageId: thread.responseIds.shift() ?? '',
      // What Codex's own telemetry knows the response by (it names none): joined on it (native-telemetry.ts).
      requestId: codexResponseKey(thread.id, { input: last.input_tokens, cached: last.cached_input_tokens, output: last.output_tokens }),
      startMs,
      endMs: timeMs,
      tokens: tokensOf(last),
      cacheWrites1h: 0,
    });
  }

  private endCall(thread: Thread, turn: Turn, callId: string, output: string | undefined, timeMs: number): void {
    const call = turn.calls.get(callId);
    if (!call) return;
    turn.calls.delete(callId);
    const interrupted = call.ran || turn.asksNothing === true; // "aborted by user" then cannot be a decline
    if (output !== undefined && thread.writesItems && !interrupted && toolOutcome(output).outcome === 'interrupted') {
      thread.aborted.set(callId, { turn, call, output, timeMs }); // its item may come after the turn's end
      return;
    }
    this.tell(thread, turn, this.toolCall(thread, turn, callId, call, { ...toolOutcome(output, interrupted ? 'ran' : 'unknown'), output, timeMs }));
    const started = { traceId: turn.traceId, toolSpanId: toolSpanId(callId), callId, sessionId: thread.id };
    const spawned = call.name === 'spawn_agent' ? /"agent_id"\s*:\s*"([^"]+)"/.exec(output ?? '')?.[1] : undefined;
    if (spawned) this.startedSubagentTurn(spawned, 0, started);
    const target = call.name === 'send_input' ? (call.input as { target?: unknown } | null)?.target : undefined;
    if (typeof target === 'string') {
      const n = (this.inputsSent.get(target) ?? 0) + 1;
      this.inputsSent.set(target, n);
      this.startedSubagentTurn(target, n, started);
    }
  }

  private tellAborted(thread: Thread, callId: string, { turn, call, output, timeMs }: AbortedRun, aborted: AbortedCall): void {
    thread.aborted.delete(callId);
    this.tell(thread, turn, this.toolCall(thread, turn, callId, call, { ...toolOutcome(output, aborted), output, timeMs }));
  }

  /** The aborted calls whose item did not come before the thread went on (or ended): they never ran. */
  private tellNeverRan(thread: Thread): void {
    for (const [callId, aborted] of thread.aborted) this.tellAborted(thread, callId, aborted, 'never_ran');
  }

  private startedSubagentTurn(threadId: string, n: number, call: Spawn): void {
    this.spawns.set(runKey(threadId, n), call);
    this.tellSubagent(threadId, n);
  }

  /** A chat or call, held while it belongs under a subagent's span not told yet. */
  private tell(thread: Thread, turn: Turn | undefined, item: NestedItem): void {
    if (turn?.subagentTurn === undefined) {
      this.out.push(item);
      return;
    }
    const key = runKey(thread.id, turn.subagentTurn);
    const held = this.nestedHeld.get(key);
    if (held) held.push(item);
    else this.nestedHeld.set(key, [item]);
  }

  /** A subagent's held items in the traces of its own turns, as they were told (no span of them will come). */
  private releaseNested(threadId: string): void {
    for (const [key, items] of this.nestedHeld) {
      if (!isRunOf(key, threadId)) continue;
      this.out.push(...items);
      this.nestedHeld.delete(key);
    }
  }

  /** What is kept for the subagent spans of a thread forgotten or read anew: its own runs as a subagent, and those it started. */
  private forgetSubagents(threadId: string): void {
    for (const key of this.nestedHeld.keys()) if (isRunOf(key, threadId)) this.nestedHeld.delete(key);
    for (const key of this.subagentRuns.keys()) if (isRunOf(key, threadId)) this.subagentRuns.delete(key);
    for (const key of this.subagentsTold) if (isRunOf(key, threadId)) this.subagentsTold.delete(key);
    // A span already told stays told: read anew, the subagent's own thread tells it again (with its nested items).
    for (const [key, spawn] of this.spawns) {
      if (spawn.sessionId !== threadId) continue;
      this.spawns.delete(key);
      this.inputsSent.delete(key.slice(0, key.indexOf(' ')));
    }
  }

  /** The span of a subagent's turn n, once both the call that started it and the turn are read. */
  private tellSubagent(threadId: string, n: number): void {
    const key = runKey(threadId, n);
    const spawn = this.spawns.get(key);
    const run = this.subagentRuns.get(key);
    if (!spawn || !run || this.subagentsTold.has(key)) return;
    this.subagentsTold.add(key);
    // The first turn's id as before later turns were nested (stored spans keep theirs).
    const spanId = n === 0 ? spanIdOf('agent', spawn.sessionId, threadId) : spanIdOf('agent', spawn.sessionId, threadId, String(n));
    this.out.push({
      kind: 'SubagentEnded',
      agent: AGENT,
      traceId: spawn.traceId,
      spanId,
      parentSpanId: spawn.toolSpanId,
      sessionId: spawn.sessionId,
      agentId: threadId,
      agentType: run.agentType,
      toolUseId: spawn.callId,
      startMs: run.startMs,
      endMs: Math.max(run.startMs, run.endMs),
    });
    // The turn's chats and calls: under its span, in the parent's trace (their own ids unchanged).
    for (const item of this.nestedHeld.get(key) ?? []) this.out.push({ ...item, traceId: spawn.traceId, parentSpanId: spanId, agentId: threadId });
    this.nestedHeld.delete(key);
  }

  private toolCall(thread: Thread, turn: Turn, callId: string, call: OpenCall, end: Pick<ToolCallEnded, 'outcome' | 'blockedBy' | 'refusalUnknown' | 'refusalInferred' | 'output'> & { timeMs: number }): ToolCallEnded {
    const shellCommand = SHELL_TOOLS.has(call.name) ? (call.input as { cmd?: unknown } | null)?.cmd : undefined;
    return {
      kind: 'ToolCallEnded',
      traceId: turn.traceId,
      spanId: toolSpanId(callId),
      parentSpanId: turn.spanId,
      sessionId: thread.id,
      toolUseId: callId,
      toolName: call.name,
      input: call.input,
      ...(typeof shellCommand === 'string' ? { shellCommand } : {}),
      outcome: end.outcome,
      ...(end.blockedBy ? { blockedBy: end.blockedBy } : {}),
      ...(end.refusalUnknown ? { refusalUnknown: true } : {}),
      ...(end.refusalInferred ? { refusalInferred: true } : {}),
      output: end.output,
      startMs: call.startMs,
      endMs: Math.max(call.startMs, end.timeMs),
      endedAtMs: end.timeMs,
    };
  }

  /** A compaction is told at its first half; the other half of the same compaction (0.130) is not a second one. */
  private compactionHalfRead(thread: Thread, half: 'row' | 'event', timeMs: number): void {
    if (thread.compactionHalf !== undefined && thread.compactionHalf !== half) {
      thread.compactionHalf = undefined;
      return;
    }
    thread.compactionHalf = half;
    if (thread.turn) this.compaction(thread, thread.turn, timeMs, 'auto');
  }

  private compaction(thread: Thread, turn: Turn, timeMs: number, trigger: string): void {
    turn.compactions.push({ timeMs, trigger });
    this.out.push({ kind: 'CompactionOccurred', traceId: turn.traceId, spanId: turn.spanId, sessionId: thread.id, messageUuid: turn.id, timeMs, trigger });
  }

  private closeTurn(thread: Thread, outcome: string, timeMs: number): void {
    const turn = thread.turn;
    if (!turn) return;
    thread.turn = undefined;
    this.tellStart(thread, turn); // a turn that ended before its prompt was read
    // Calls with no output: the turn ended without them (interrupted with it, or never answered).
    for (const [callId, call] of turn.calls) {
      this.tell(thread, turn, this.toolCall(thread, turn, callId, call, { outcome: outcome === 'interrupted' ? 'interrupted' : 'unanswered', timeMs }));
    }
    if (turn.subagentTurn !== undefined) {
      this.subagentRuns.set(runKey(thread.id, turn.subagentTurn), { agentType: thread.agentType ?? 'default', startMs: turn.startMs, endMs: Math.max(turn.startMs, timeMs) });
      this.tellSubagent(thread.id, turn.subagentTurn);
    }
    this.out.push({
      kind: 'TurnEnded',
      agent: AGENT,
      traceId: turn.traceId,
      spanId: turn.spanId,
      sessionId: thread.id,
      messageUuid: turn.id,
      promptText: turn.prompt ?? '',
      ...(turn.prompt === undefined ? { promptSeen: false as const } : {}),
      outcome,
      startMs: turn.startMs,
      endMs: Math.max(turn.startMs, timeMs),
      ...(turn.cwd ? { place: { cwd: turn.cwd } } : {}),
      version: thread.version,
      ...(firesSessionEnd(thread.version) ? {} : { endsUntold: true as const }),
      ...(turn.compactions.length > 0 ? { compactions: turn.compactions } : {}),
    });
  }
}
