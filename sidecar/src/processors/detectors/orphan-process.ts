// orphan_process: a process carrying the session's id (CLAUDE_CODE_SESSION_ID, CODEX_THREAD_ID) still alive after
// its tool call or its session ended, re-parented away from the agent (no longer a descendant of the agent process
// that ran it).
import type { ProcessScan } from '../../records/process-scan.js';
import { OUTLIVE_GRACE_MS, sessionProcesses, underItsAgent, type Detection, type Facts } from './facts.js';

export function detectOrphanProcesses(scan: ProcessScan, facts: Facts): Detection[] {
  const detections: Detection[] = [];
  for (const process of sessionProcesses(scan)) {
    const session = facts.sessions.get(process.sessionId);
    const found = facts.callOf(process);
    const callEnd = facts.endOf(found);
    const callOver = callEnd !== undefined && scan.timeMs - callEnd >= OUTLIVE_GRACE_MS;
    const sessionOver = session?.endedAtMs !== undefined && scan.timeMs - session.endedAtMs >= OUTLIVE_GRACE_MS;
    if (!callOver && !sessionOver) continue;
    if (underItsAgent(scan, process)) continue;
    // A port it listens on: an orphaned listener (the alert dashboards/alerts/sigma/ccotel_orphaned_listener.yml).
    detections.push({ mode: 'orphan_process', sessionId: process.sessionId, timeMs: scan.timeMs, toolUseId: found.call?.toolUseId, process, port: process.listeningPorts[0] });
  }
  return detections;
}
