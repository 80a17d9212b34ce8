// replay_divergence: conversation resume is not process resume. A resumed session whose previous processes are
// still running (started before the resume), or a turn interrupted and then run again after a resume.
import type { ProcessScan } from '../../records/process-scan.js';
import type { TurnEnded } from '../../events.js';
import { sessionProcesses, type Detection, type Facts } from './facts.js';

export function detectResumedWithProcesses(scan: ProcessScan, facts: Facts): Detection[] {
  const detections: Detection[] = [];
  for (const process of sessionProcesses(scan)) {
    const resumes = facts.sessions.get(process.sessionId)?.resumedAtMs ?? [];
    const resumedAfterStart = resumes.find((resumedAt) => resumedAt > process.startMs);
    if (resumedAfterStart === undefined) continue;
    detections.push({
      mode: 'replay_divergence',
      sessionId: process.sessionId,
      timeMs: scan.timeMs,
      toolUseId: facts.callOf(process).call?.toolUseId,
      process,
      cause: 'processes_running',
      key: String(resumedAfterStart),
    });
  }
  return detections;
}

/** A turn root: remember interrupted prompts; the same prompt after a resume is a re-run. */
export function detectTurnRerun(turn: TurnEnded, facts: Facts): Detection[] {
  const prompt = turn.promptText;
  if (prompt === '') return [];
  if (turn.outcome === 'interrupted') {
    facts.session(turn.sessionId).interruptedPrompts.add(prompt);
    return [];
  }
  // Facts are made only for a session with something to remember: a backfill's sessions are mostly turns alone.
  const session = facts.sessions.get(turn.sessionId);
  if (!session) return [];
  const resumedBefore = session.resumedAtMs.some((resumedAt) => resumedAt <= turn.startMs);
  if (!resumedBefore || !session.interruptedPrompts.has(prompt)) return [];
  session.interruptedPrompts.delete(prompt);
  return [{ mode: 'replay_divergence', sessionId: session.id, timeMs: turn.startMs, cause: 'turn_rerun', key: turn.messageUuid }];
}
