// replay_divergence: conversation resume is not process resume. A resumed session whose previous processes are
// still running (started before the resume), or a turn interrupted and then run again after a resume.
import type { ProcessScan } from '../../records/process-scan.js';
import type { SpanRecord } from '../../model.js';
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
export function detectTurnRerun(root: SpanRecord, facts: Facts): Detection[] {
  const session = facts.session(String(root.attributes['session.id'] ?? ''));
  const prompt = root.attributes['ccotel.prompt'];
  if (typeof prompt !== 'string' || prompt === '') return [];
  if (root.attributes['ccotel.turn.outcome'] === 'interrupted') {
    session.interruptedPrompts.add(prompt);
    return [];
  }
  const resumedBefore = session.resumedAtMs.some((resumedAt) => resumedAt <= root.startMs);
  if (!resumedBefore || !session.interruptedPrompts.has(prompt)) return [];
  session.interruptedPrompts.delete(prompt);
  return [{ mode: 'replay_divergence', sessionId: session.id, timeMs: root.startMs, cause: 'turn_rerun', key: String(root.attributes['message.uuid'] ?? root.spanId) }];
}
