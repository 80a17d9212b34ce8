// signal_propagation: an interrupted or cancelled tool call whose processes kept running — the interrupt
// reached the agent, not the process tree the call started.
import type { ProcessScan } from '../../records/process-scan.js';
import { OUTLIVE_GRACE_MS, sessionProcesses, type Detection, type Facts } from './facts.js';

export function detectSignalPropagation(scan: ProcessScan, facts: Facts): Detection[] {
  const detections: Detection[] = [];
  for (const process of sessionProcesses(scan)) {
    const { call } = facts.callOf(process);
    const interruptedAt = call?.interruptedAtMs;
    if (interruptedAt === undefined || scan.timeMs - interruptedAt < OUTLIVE_GRACE_MS) continue;
    detections.push({ mode: 'signal_propagation', sessionId: process.sessionId, timeMs: scan.timeMs, toolUseId: call!.toolUseId, process });
  }
  return detections;
}
