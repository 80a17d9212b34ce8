// The idle work of a following pipeline, run by the driver's tick (driver.ts), not by a source: sessions with no
// record for the idle time have their open turn closed, and hook events and shell commands that waited that long
// for their span are given up on (delivered as they are). The turns are closed inside the transcript tailer's read
// loop, between two files, so that closing never interleaves with a read.
import type { Driver } from './driver.js';
import type { Pipeline } from './pipeline.js';
import type { TranscriptTailer } from './sources/transcript-tailer.js';

/** Close the open turns of sessions with no record for `idleMs` (the tailer's `onTick`). */
export function closeIdleSessions(pipeline: Pipeline, idleMs: number): () => void {
  return () => pipeline.closeIdle(Date.now() - idleMs);
}

/** Run the idle work four times per idle time (between once a second and once a minute) on `driver`'s tick. */
export function scheduleIdleWork(driver: Driver, idleMs: number, giveUp: ((beforeMs: number) => void)[], tailer: TranscriptTailer): void {
  driver.every(Math.min(Math.max(idleMs / 4, 1_000), 60_000), () => {
    for (const expire of giveUp) expire(Date.now() - idleMs);
    tailer.tick();
  });
}
