// The seam between the pipeline and an agent other than Claude Code: its source takes the lines of the files that
// agent wrote and tells the same correlation events the transcript correlator tells (DESIGN §12). The pipeline
// hands it the lines of the files naming it (TranscriptFile.agent), and asks it what it holds as it asks the
// transcript correlator.
import type { CorrelationEvent } from '../events.js';
import type { TranscriptFile } from './transcript.js';

/** Why an input line was not used (every agent's source gives one of these). */
export type SkipReason =
  | 'malformed_json'
  | 'not_object'
  | 'missing_fields'
  | 'unknown_type'
  | 'partial_last_line'
  | 'line_too_long'
  /** Used all the same (a refusal by `unknown`), but its `toolDenialKind` is one no recorded release wrote. */
  | 'unknown_denial_kind';

/** What became of one line: used (with its record's time), skipped (counted and kept aside), or of no use. */
export type RowRead = { ok: true; timeMs: number } | { ok: false; reason: SkipReason; type?: string } | { ok: 'ignored' };

export interface AgentRows {
  /** `path` is read from its start (again): what was told of it before is told again, with the same ids. */
  readingFromStart(path: string): void;
  add(text: string, file: TranscriptFile, offset: number): RowRead;
  /** Take the events told so far. */
  drain(): CorrelationEvent[];
  /** Close what has had no row since `idleBeforeMs`. */
  closeIdle(idleBeforeMs: number): void;
  /** End of input: close everything open. */
  finish(): void;
  sessionCounts(): { open: number; held: number; revived: number };
  /** Whether the session is one of its agent's it holds (what joins tell of it is that agent's). */
  holdsSession(sessionId: string): boolean;
  /** Per file, where a re-read must start so what is still open is rebuilt whole. */
  oldestOpenOffsets(): Map<string, number>;
}
