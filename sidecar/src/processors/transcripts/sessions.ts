// Sessions by id, and their permission mode: a change of mode is a log record of its own. A session closed
// long enough is forgotten (its id kept, packed, if it had started): memory holds the recent sessions, not the
// history; a later row of one starts it afresh, as the started session it was.
import { IdSet } from '../../id-set.js';
import type { TranscriptEntry } from '../transcript-entry.js';
import type { Parts, Session, TranscriptFile } from './types.js';

export class Sessions {
  private readonly byId = new Map<string, Session>();
  /** Sessions with a row since they were last closed for idleness: the only ones an idle check looks at. */
  private readonly active = new Set<Session>();
  /** Sessions in the order they were last closed, oldest first: the ones `retire` may forget. */
  private readonly closed = new Set<Session>();
  /** Ids of the sessions forgotten after they had started. */
  private readonly retiredStarted = new IdSet();
  /** Sessions that had a row after they were forgotten. */
  revived = 0;

  constructor(private readonly parts: Parts) {}

  /** The session of this id, new if none was seen. */
  get(id: string): Session {
    let session = this.byId.get(id);
    if (!session) {
      const started = this.retiredStarted.has(id);
      if (started) this.revived++;
      session = { id, started, forked: false, turns: 0, lastMs: 0, lastRowMs: new Map(), rowsBeforeOpening: [] };
      this.byId.set(id, session);
    }
    return session;
  }

  /** Forget the sessions closed with no row since `beforeMs` and nothing open (`isOpen` asks the other parts). */
  retire(beforeMs: number, isOpen: (session: Session) => boolean): void {
    for (const session of this.closed) {
      if (session.lastMs >= beforeMs) return;
      this.closed.delete(session);
      if (this.active.has(session) || session.turn || session.pendingInput || isOpen(session)) continue;
      this.byId.delete(session.id);
      if (session.started) this.retiredStarted.add(session.id);
    }
  }

  find(id: string): Session | undefined {
    return this.byId.get(id);
  }

  all(): IterableIterator<Session> {
    return this.byId.values();
  }

  /** A row of the session at `timeMs` was read. */
  touch(session: Session, timeMs: number): void {
    session.lastMs = Math.max(session.lastMs, timeMs);
    this.active.add(session);
  }

  /** The active sessions with no row since `idleBeforeMs`; they are not active any more. */
  takeIdle(idleBeforeMs: number): Session[] {
    const idle: Session[] = [];
    for (const session of this.active) {
      if (session.lastMs >= idleBeforeMs) continue;
      this.active.delete(session);
      idle.push(session);
      this.closed.delete(session); // closed again: it goes to the end
      this.closed.add(session);
    }
    return idle;
  }

  /** Sessions with a row since they were last closed. */
  activeCount(): number {
    return this.active.size;
  }

  /** Sessions held, open or closed and not forgotten yet. */
  heldCount(): number {
    return this.byId.size;
  }

  /** A row names the session's directory and branch: from this row on its records carry them (one that names neither keeps the last). */
  locate(session: Session, entry: TranscriptEntry): void {
    const cwd = entry.cwd ?? session.place?.cwd;
    const branch = entry.gitBranch ?? session.place?.branch;
    if (session.place && session.place.cwd === cwd && session.place.branch === branch) return;
    session.place = this.parts.places.of(cwd, branch);
  }

  /** A `permission-mode` row: it may have no time of its own. */
  addPermissionModeRow(entry: TranscriptEntry, file: TranscriptFile): void {
    const session = this.get(entry.sessionId);
    const mode = entry.permissionMode!;
    if (!Number.isNaN(entry.timeMs)) this.changePermissionMode(session, mode, entry.timeMs, file);
    else if (session.lastMs > 0) this.changePermissionMode(session, mode, session.lastMs, file); // the row before it
    else session.untimedMode = mode;
  }

  /** A row with a time: it dates a mode read before it. */
  timeUntimedMode(session: Session, timeMs: number, file: TranscriptFile): void {
    if (session.untimedMode === undefined) return;
    this.changePermissionMode(session, session.untimedMode, timeMs, file);
    session.untimedMode = undefined;
  }

  /** A new permission mode of a session (Claude Code repeats the current one often: only a change is news). */
  changePermissionMode(session: Session, mode: string, timeMs: number, file: TranscriptFile): void {
    const previous = session.permissionMode;
    if (mode === previous) return;
    session.permissionMode = mode;
    // The first mode of a session is told only from the file's start: a re-read from a checkpoint would repeat it.
    if (previous === undefined && !this.parts.starts.isReadFromStart(file.path)) return;
    this.parts.out.event({ kind: 'PermissionModeChanged', sessionId: session.id, mode, previousMode: previous, timeMs });
  }
}
