// Join the shell log (docs/HOOKS.md: one `start` and one `end` line per Bash tool command, paired by pid + seq)
// onto the transcript traces: each command is told as ShellCommandEnded (encode/shell.ts: a `shell {program}` span
// and a `ccotel.shell.command` log record), child of the Bash tool span that was open in that session at that time
// (the span named by an inherited TRACEPARENT when it is one of ours). A command waits until its Bash span goes out; one whose span never
// comes (no transcript, or given up) gets a trace of its own, or the TRACEPARENT's (Claude Code's native trace).
// A command killed before its EXIT trap ran has no end: it ends with its tool call.
import { spanIdOf, traceIdOf } from '../ids.js';
import { ranShellCommand, type CorrelationEvent, type Join, type Joined, type ToolCallEnded } from '../events.js';
import type { ResumeAck } from '../model.js';
import { ResumeAcks } from '../ordered-acks.js';
import type { ShellRead, ShellRecord, ShellRecordConsumer } from '../records/shell-log.js';
import { toolSpanId } from '../semconv.js';

export interface ShellCommand {
  sessionId: string;
  pid: number;
  seq: number;
  start?: ShellRecord;
  end?: ShellRecord;
  file: string;
  /** Offset of its first line: a restart must read from here while the command is not out. */
  offset: number;
  parent?: BashSpan;
}

interface BashSpan {
  traceId: string;
  spanId: string;
  sessionId: string;
  toolUseId: string;
  startMs: number;
  endMs: number;
  command?: string;
  /** Unix sessions (psid) of the commands placed under it: a Bash call runs one shell, in a session of its own. */
  shells: Set<number>;
}

export interface ShellCorrelatorStats {
  commands: number;
  underToolSpan: number;
  withoutToolSpan: number;
  withoutEnd: number;
  /** An end whose start was never read (e.g. read before a restart that had already delivered it). */
  endWithoutStart: number;
}

/** A command belongs to a Bash span whose time, widened by this, holds its start. */
const SKEW_MS = 1_000;
/** Bash spans remembered per session for commands read after their span went out. */
const SPANS_PER_SESSION = 500;
/** Bash spans remembered in all, the most recent: a backfill of a long history must not keep every one. */
export const BASH_SPANS_REMEMBERED = 20_000;

export class ShellCorrelator implements Join, ShellRecordConsumer {
  readonly stats: ShellCorrelatorStats = { commands: 0, underToolSpan: 0, withoutToolSpan: 0, withoutEnd: 0, endWithoutStart: 0 };
  readonly consumes = ['ToolCallEnded'] as const;
  readonly produces = ['ShellCommandEnded'] as const;
  private events: CorrelationEvent[] = [];
  private readonly waiting = new Map<string, ShellCommand>();
  private readonly bashSpans = new Map<string, BashSpan[]>();
  private readonly spansById = new Map<string, BashSpan>();
  /** Acks of the records read: each file's resume offset is its oldest command not yet out. */
  private readonly resumeAcks = new ResumeAcks();

  /**
   * `lateRecords`: whether shell records may still come after the Bash span they belong to went out (following,
   * the default). Reading once, every record is read before the transcripts: a span none waits for is not kept.
   */
  constructor(private readonly options: { lateRecords?: boolean } = {}) {}

  addRecords({ file, records, end }: ShellRead, ack: ResumeAck): void {
    for (const { record, offset } of records) this.add(record, file, offset);
    this.resumeAcks.add(file, end, ack);
  }

  add(record: ShellRecord, file: string, offset: number): void {
    const key = `${record.sid}\u0000${record.pid}\u0000${record.seq}`;
    let command = this.waiting.get(key);
    if (!command) {
      command = { sessionId: record.sid, pid: record.pid, seq: record.seq, file, offset };
      this.waiting.set(key, command);
    }
    if (record.ev === 'start') command.start = record;
    else command.end = record;
    this.tryEmit(key, command);
  }

  observe(events: readonly CorrelationEvent[]): void {
    const keepSpans = this.options.lateRecords !== false || this.waiting.size > 0;
    for (const event of events) {
      if (!keepSpans || event.kind !== 'ToolCallEnded' || !ranShellCommand(event)) continue;
      const bash = bashSpanOf(event);
      const list = this.bashSpans.get(bash.sessionId) ?? [];
      list.push(bash);
      if (list.length > SPANS_PER_SESSION) this.spansById.delete(list.shift()!.spanId);
      this.bashSpans.set(bash.sessionId, list);
      this.spansById.set(bash.spanId, bash);
      if (this.spansById.size > BASH_SPANS_REMEMBERED) this.forgetOldestSpan();
    }
    for (const [key, command] of this.waiting) this.tryEmit(key, command);
  }

  drain(): Joined {
    const events = this.events;
    this.events = [];
    return { events, acks: this.resumeAcks.waiting ? this.resumeAcks.take((file) => this.oldestWaitingOffset(file)) : [] };
  }

  /** Stop waiting for commands started before `beforeMs`: emit them with what is known. */
  expire(beforeMs: number): void {
    for (const [key, command] of this.waiting) {
      if (startMs(command) >= beforeMs) continue;
      this.waiting.delete(key);
      if (!command.start) {
        this.stats.endWithoutStart++;
        continue;
      }
      command.parent ??= this.parentOf(command.start, true);
      this.emit(command);
    }
  }

  finish(): void {
    this.expire(Number.POSITIVE_INFINITY);
  }

  /** Offset of the first line of the oldest command of `file` not yet out (where a restart must read from). */
  private oldestWaitingOffset(file: string): number | undefined {
    let oldest: number | undefined;
    for (const command of this.waiting.values()) if (command.file === file && (oldest === undefined || command.offset < oldest)) oldest = command.offset;
    return oldest;
  }

  /** Forget the Bash span remembered longest ago, and its session once it has none left. */
  private forgetOldestSpan(): void {
    const oldest = this.spansById.values().next().value!;
    this.spansById.delete(oldest.spanId);
    const list = this.bashSpans.get(oldest.sessionId) ?? [];
    if (list.includes(oldest)) list.splice(list.indexOf(oldest), 1);
    if (list.length === 0) this.bashSpans.delete(oldest.sessionId);
  }

  private tryEmit(key: string, command: ShellCommand): void {
    if (!command.start) return;
    command.parent ??= this.parentOf(command.start, false);
    // A command goes out once it has ended under a known span; a killed one (no end) once its span is out.
    if (!command.parent) return;
    if (!command.end && command.parent.endMs + SKEW_MS > Date.now()) return;
    this.waiting.delete(key);
    this.emit(command);
  }

  /**
   * The Bash span a command ran under. While spans are still coming (`last` false) only a call whose own time
   * holds the command's start, and that no other shell session took yet, will do: parallel calls overlap, and
   * the right one may not be out yet. At the end (`last`) the window widened by SKEW_MS, taken or not.
   */
  private parentOf(start: ShellRecord, last: boolean): BashSpan | undefined {
    // The call that ran it, where the shell knows it (Codex 0.171), or the span its TRACEPARENT names.
    for (const named of [start.call ? toolSpanId(start.call) : undefined, traceparentSpanId(start.tp)]) {
      if (named && this.spansById.has(named)) return this.spansById.get(named);
    }
    const atMs = start.ts / 1000;
    const session = start.psid ?? undefined;
    const within = (span: BashSpan) => atMs >= span.startMs && atMs <= span.endMs;
    const free = (span: BashSpan) => span.shells.size === 0 || session === undefined || span.shells.has(session);
    const candidates = (this.bashSpans.get(start.sid) ?? []).filter((span) =>
      last ? atMs >= span.startMs - SKEW_MS && atMs <= span.endMs + SKEW_MS : within(span) && free(span),
    );
    // The call that ran this very command, then one whose own time holds it, then the latest started before it.
    const rank = (span: BashSpan) => (span.command !== undefined && span.command === start.cmd ? 4 : 0) + (within(span) ? 2 : 0) + (span.startMs <= atMs ? 1 : 0);
    const parent = candidates.sort((a, b) => rank(b) - rank(a) || b.startMs - a.startMs)[0];
    if (parent && session !== undefined) parent.shells.add(session);
    return parent;
  }

  private emit(command: ShellCommand): void {
    this.stats.commands++;
    const start = command.start;
    const parent = command.parent;
    const beginMs = startMs(command);
    const endMs = command.end ? command.end.ts / 1000 : Math.max(parent?.endMs ?? beginMs, beginMs);
    if (!command.end) this.stats.withoutEnd++;
    let traceId: string;
    let parentSpanId: string;
    const inherited = parseTraceparent(start?.tp);
    if (parent) {
      this.stats.underToolSpan++;
      ({ traceId, spanId: parentSpanId } = parent);
    } else {
      this.stats.withoutToolSpan++;
      traceId = inherited?.traceId ?? traceIdOf(command.sessionId, 'shell', String(command.pid), String(command.seq));
      parentSpanId = inherited?.spanId ?? '';
    }
    const truncated = start?.cmdlen !== undefined && Buffer.byteLength(start.cmd ?? '') < start.cmdlen;
    // The shell script cut the command: its last word may be the head of a secret too short to recognise.
    const commandLine = truncated ? `${(start?.cmd ?? '').replace(/\S*$/, '')}…` : (start?.cmd ?? '');
    const spanId = spanIdOf('shell', command.sessionId, String(command.pid), String(command.seq), String(start?.ts ?? command.end?.ts ?? ''));
    const told = <T>(value: T | null | undefined): T | undefined => (value === null || value === '' ? undefined : value);
    this.events.push({
      kind: 'ShellCommandEnded',
      traceId,
      spanId,
      parentSpanId,
      sessionId: command.sessionId,
      pid: command.pid,
      parentPid: start?.ppid ?? undefined,
      toolUseId: parent?.toolUseId || undefined,
      startMs: beginMs,
      endMs: command.end?.status !== undefined ? Math.max(endMs, beginMs) : undefined,
      spanEndMs: Math.max(endMs, beginMs),
      commandLine,
      commandLength: start?.cmdlen ?? commandLine.length,
      truncated,
      ended: command.end !== undefined,
      exitStatus: command.end?.status,
      process: {
        groupLeaderPid: told(start?.pgid),
        sessionLeaderPid: told(start?.psid),
        tty: told(start?.tty),
        cwd: told(start?.cwd ?? command.end?.cwd),
        traceparent: told(start?.tp),
      },
    });
  }
}

function startMs(command: ShellCommand): number {
  return (command.start?.ts ?? command.end?.ts ?? 0) / 1000;
}

function bashSpanOf(call: ToolCallEnded): BashSpan {
  const command = call.shellCommand ?? (call.input as { command?: unknown } | null | undefined)?.command;
  return {
    traceId: call.traceId,
    spanId: call.spanId,
    sessionId: call.sessionId,
    toolUseId: call.toolUseId,
    startMs: call.startMs,
    endMs: call.endMs,
    command: typeof command === 'string' ? command : undefined,
    shells: new Set(),
  };
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/** A W3C traceparent's trace and span (of Claude Code's tool.execution span, in its Bash tool's processes). */
export function parseTraceparent(value: string | undefined): { traceId: string; spanId: string } | undefined {
  const match = value ? TRACEPARENT.exec(value.trim()) : null;
  return match ? { traceId: match[1], spanId: match[2] } : undefined;
}

function traceparentSpanId(value: string | undefined): string | undefined {
  return parseTraceparent(value)?.spanId;
}
