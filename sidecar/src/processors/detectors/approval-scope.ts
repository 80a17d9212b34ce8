// approval_scope: an approved tool call whose process tree opened a listening socket, or outlived the call — the
// approval covered one command, not a server left running. An agent that keeps commands running past their call
// by design (Codex) has them outlive it only once they left its tree.
import type { ProcessScan } from '../../records/process-scan.js';
import { OUTLIVE_GRACE_MS, sessionProcesses, underItsAgent, type Detection, type Facts } from './facts.js';

export function detectApprovalScope(scan: ProcessScan, facts: Facts): Detection[] {
  const detections: Detection[] = [];
  for (const process of sessionProcesses(scan)) {
    const found = facts.callOf(process);
    if (!found.call && !found.shell) continue; // not started by a tool call we know
    if (found.call?.outcome === 'denied') continue; // never approved
    const callEnd = facts.endOf(found);
    const kept = process.keepsCommandsPastCall === true && underItsAgent(scan, process);
    const outlived = callEnd !== undefined && scan.timeMs - callEnd >= OUTLIVE_GRACE_MS && !kept;
    if (process.listeningPorts.length === 0 && !outlived) continue;
    detections.push({
      mode: 'approval_scope',
      sessionId: process.sessionId,
      timeMs: scan.timeMs,
      toolUseId: found.call?.toolUseId,
      process,
      port: process.listeningPorts[0],
      cause: process.listeningPorts.length > 0 ? 'listening' : 'outlived',
    });
  }
  return detections;
}
