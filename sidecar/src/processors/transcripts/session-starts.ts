// How a session started (startup, resume, fork), told once per start. Newer Claude Code numbers prompts; older
// releases are recognised from copies of history read elsewhere and from the marks a resumed run leaves.
import { IdSet } from '../../id-set.js';
import { recordIdOf } from '../../ids.js';
import { realPromptText, userInput, userText } from '../classify.js';
import type { TranscriptEntry } from '../transcript-entry.js';
import { ResumeMarks, ROWS_BEFORE_OPENING } from './resume-marks.js';
import { ResumeWarmups } from './resume-warmups.js';
import { WARMUP_PROMPT } from './subagents.js';
import type { Parts, Session, Turn } from './types.js';


export class SessionStarts {
  /** Files whose first line was read: only there can a session's first prompt be recognised as such. */
  private readonly filesReadFromStart = new Set<string>();
  /** Inputs read so far, by a digest of time and text (history must not hold every prompt's text). */
  private readonly seenPrompts = new IdSet();
  /** Prompt uuids read, and each with the session it was first read in: 1.0.x resume copies keep the uuids (and restamp the times). */
  private readonly promptUuids = new IdSet();
  private readonly promptFirstSessions = new IdSet();
  /** By session id: an opening must not keep a session alive that was forgotten (`Sessions.retire`). */
  private readonly resumeMarks = new ResumeMarks<{ sessionId: string; entry: StartingRow }>();
  private readonly resumeWarmups = new ResumeWarmups<{ sessionId: string; entry: StartingRow }>((id) => this.parts.sessions.find(id)?.started === true);

  constructor(private readonly parts: Parts) {}

  readingFromStart(path: string): void {
    this.filesReadFromStart.add(path);
  }

  isReadFromStart(path: string): boolean {
    return this.filesReadFromStart.has(path);
  }

  /** Whether this input (by time and text, or by uuid) was read before in another session: history an old-style resume copied. */
  seenBefore(entry: TranscriptEntry, text: string): boolean {
    const key = recordIdOf(String(entry.timeMs), text);
    const inThisSession = `${entry.uuid} ${entry.sessionId}`;
    const readInAnother = this.promptUuids.has(entry.uuid) && !this.promptFirstSessions.has(inThisSession);
    const seen = this.seenPrompts.has(key) || readInAnother;
    this.seenPrompts.add(key);
    if (this.promptUuids.add(entry.uuid)) this.promptFirstSessions.add(inThisSession);
    return seen;
  }

  /** A `summary` row: it may name the row a resumed run continues from. */
  summary(leafUuid: string, path: string): void {
    this.resumeMarks.summary(leafUuid, path);
  }

  /** A conversation row was read in this file (its summaries mark no resume). */
  conversationIn(path: string): void {
    this.resumeMarks.conversationIn(path);
  }

  /** The first row of a Warmup chain: under an id not the session's own, a resumed process's (`ResumeWarmups`). */
  warmup(entry: TranscriptEntry): void {
    if (entry.cwd !== undefined) this.resumeWarmups.warmup({ processId: entry.sessionId, cwd: entry.cwd, timeMs: entry.timeMs });
  }

  /** Tell the resumes a summary or a warmup marked after their first row was read. */
  startResumed(): void {
    for (const { sessionId, entry } of [...this.resumeMarks.takeResumed(), ...this.resumeWarmups.takeResumed()]) this.start(this.parts.sessions.get(sessionId), entry, 'resume');
  }

  start(session: Session, entry: StartingRow, source: string): void {
    session.started = true;
    // messageUuid names the prompt: the hook correlator merges a SessionStart hook into this start.
    this.parts.out.event({ kind: 'SessionStarted', sessionId: session.id, source, messageUuid: entry.uuid, promptId: entry.promptId, permissionMode: session.permissionMode, timeMs: entry.timeMs });
  }

  /** Tell the start a turn's prompt makes, at its first response (a replayed one makes a startup a resume). */
  tell(session: Session, turn: Turn, replayedResponse: boolean): void {
    const start = turn.pendingStart;
    if (!start) return;
    turn.pendingStart = undefined;
    this.start(session, start.entry, replayedResponse && start.source === 'startup' ? 'resume' : start.source);
  }

  /**
   * A resumed run appends to the same file; without `turnPosition` (before 2.1.3xx) only a mark before it tells its
   * first row from a next prompt: print mode (2.0.42 on) queues each run's prompt; 1.0.x / 2.0.0 write a summary
   * naming the last row before it (`ResumeMarks`); 2.0.19…2.0.29 write the new process's Warmup, under the
   * session's id (`startsResumedProcess`) or under one of its own (`ResumeWarmups`). In interactive use a queue
   * means a prompt typed while Claude worked: no resume.
   */
  noteRunStart(session: Session, entry: TranscriptEntry): void {
    if (opensRun(entry)) {
      const unnumbered = entry.turnPosition === undefined;
      if (session.nextRunResumes && unnumbered && entry.entrypoint !== 'cli') this.start(session, entry, 'resume');
      else if (session.started && unnumbered) this.noteLaterRun(session, entry);
      session.nextRunResumes = false;
      session.rowsBeforeOpening = [];
    }
    if (session.started && this.resumeMarks.isLeaf(entry.uuid)) session.nextRunResumes = true;
    session.rowsBeforeOpening.push(entry.uuid);
    if (session.rowsBeforeOpening.length > ROWS_BEFORE_OPENING) session.rowsBeforeOpening.shift();
  }

  /** A run after the first with no mark read before it: a warmup read before may mark it, or a mark read later. */
  private noteLaterRun(session: Session, entry: TranscriptEntry): void {
    const start = { sessionId: session.id, entry: startingRow(entry) };
    const afterMs = session.lastRowMs.get('main');
    if (entry.cwd !== undefined && afterMs !== undefined && this.resumeWarmups.opening({ sessionId: session.id, cwd: entry.cwd, afterMs, timeMs: entry.timeMs, start })) {
      this.start(session, entry, 'resume');
      return;
    }
    this.resumeMarks.opening(session.rowsBeforeOpening, start);
  }
}

/** What a session start tells of the row that starts it: kept for a start told later, not the whole row. */
export type StartingRow = Pick<TranscriptEntry, 'uuid' | 'promptId' | 'timeMs'>;

export function startingRow({ uuid, promptId, timeMs }: TranscriptEntry): StartingRow {
  return { uuid, promptId, timeMs };
}

/**
 * Whether a prompt starts a session, and how. Newer Claude Code numbers prompts (`turnPosition`): turn 1 is the
 * startup, and a process's first prompt in a later turn is a resume (it appends to the same file). Older
 * versions resumed or forked by copying the history into a new file: a session whose first prompt repeats one
 * seen elsewhere is a resume, or a fork when its rows say `forkedFrom`. Without numbering, the first prompt is
 * known only in a file read from its start (a re-read from a checkpoint must not report the start again).
 */
export function sessionStartSource(entry: TranscriptEntry, sessionStarted: boolean, replayed: boolean, fileReadFromStart: boolean): string | undefined {
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
export function isResumedCompaction(entry: TranscriptEntry, session: { started: boolean; lastCompactTrigger?: string }): boolean {
  return entry.isCompactSummary && session.started && entry.turnPosition?.promptIndex === 0 && session.lastCompactTrigger === 'manual';
}

/** What a resumed process answers first when the history it continues ended in a user row. */
const NO_RESPONSE_REQUESTED = 'No response requested.';

/**
 * A row only a new process writes into a session that ran before: 2.0.25 marks a resumed run neither with
 * `queue-operation` rows nor with a summary file, only with the chain its rows make: the process's `Warmup`
 * (an inline sidechain starting a chain of its own), or, when the history ended in a user row (a command's
 * output), the synthetic "No response requested." answer a resumed process adds before its prompt.
 */
export function startsResumedProcess(entry: TranscriptEntry): boolean {
  if (entry.agentId === undefined && opensWarmup(entry)) return true;
  return entry.type === 'assistant' && entry.message.model === '<synthetic>' && userText(entry) === NO_RESPONSE_REQUESTED;
}


/** The first row of a process's Warmup chain (inline, or in an agent-*.jsonl file from 2.0.28 on). */
export function opensWarmup(entry: TranscriptEntry): boolean {
  return entry.isSidechain && entry.parentUuid === null && userText(entry) === WARMUP_PROMPT;
}
