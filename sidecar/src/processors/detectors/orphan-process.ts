// orphan_process: a process carrying the session's CLAUDE_CODE_SESSION_ID still alive after its tool call or its
// session ended, re-parented away from the agent (no longer a descendant of the Claude Code process that ran it).
import { descendsFrom, type ProcessScan } from '../../records/process-scan.js';
import { OUTLIVE_GRACE_MS, sessionProcesses, type Detection, type Facts } from './facts.js';

export function detectOrphanProcesses(scan: ProcessScan, facts: Facts): Detection[] {
  const detections: Detection[] = [];
  for (const process of sessionProcesses(scan)) {
    const session = facts.sessions.get(process.sessionId);
    const found = facts.callOf(process);
    const callEnd = facts.endOf(found);
    const callOver = callEnd !== undefined && scan.timeMs - callEnd >= OUTLIVE_GRACE_MS;
    const sessionOver = session?.endedAtMs !== undefined && scan.timeMs - session.endedAtMs >= OUTLIVE_GRACE_MS;
    if (!callOver && !sessionOver) continue;
    const agent = process.agentPid;
    const underAgent = agent !== undefined && scan.parents.has(agent) && descendsFrom(scan, process.pid, agent);
    if (underAgent) continue;
    detections.push({ mode: 'orphan_process', sessionId: process.sessionId, timeMs: scan.timeMs, toolUseId: found.call?.toolUseId, process });
  }
  return detections;
}
