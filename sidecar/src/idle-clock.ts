// The idle clock of a following pipeline, owned by the driver (build-pipeline.ts), not by a source: at each tick
// the transcript tailer runs the driver's idle work inside its read loop, between two files (so it never
// interleaves with a read, and is retried like any delivery while a sink is down): sessions with no record for the
// idle time have their open turn closed.
import type { Pipeline } from './pipeline.js';
import type { TranscriptTailer } from './sources/transcript-tailer.js';

/** What each tick does: close the open turns of sessions with no record for `idleMs`. */
export function closeIdleSessions(pipeline: Pipeline, idleMs: number): () => Promise<void> {
  return () => pipeline.closeIdle(Date.now() - idleMs);
}

/** Tick `tailer` four times per idle time (between once a second and once a minute); returns the clock's stop. */
export function startIdleClock(tailer: TranscriptTailer, idleMs: number): () => void {
  const timer = setInterval(() => tailer.tick(), Math.min(Math.max(idleMs / 4, 1_000), 60_000));
  timer.unref();
  return () => clearInterval(timer);
}
