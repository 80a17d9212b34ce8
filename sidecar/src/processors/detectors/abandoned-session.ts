// abandoned_session: a session that stopped producing events with no SessionEnd. The likely cause: its current
// Claude Code process (since its last start: a resume is judged by the resumed CLI, not the exited one before
// it) vanished and the terminal it ran on is gone (tty_gone: terminal closed, SSH dropped), or vanished with
// its terminal still there (killed: kill -9, OOM, crash); or, with no process known, it went silent for the
// idle time (no_session_end). Only sessions seen through hooks count: without hooks no SessionEnd is expected.
import { ttyExists, type ProcessScan } from '../../sources/process-watcher.js';
import { agentAlive, type Detection, type Facts, type SessionFacts } from './facts.js';

export function detectAbandonedSessions(scan: ProcessScan | undefined, facts: Facts, nowMs: number, idleMs: number, devRoot?: string): Detection[] {
  const detections: Detection[] = [];
  for (const session of facts.sessions.values()) {
    if (!session.hooked || session.abandoned || session.endedAtMs !== undefined) continue;
    const cause = scan ? causeFromProcesses(scan, session, devRoot) : undefined;
    const silent = nowMs - session.lastEventMs >= idleMs;
    if (cause === undefined && !(silent && (scan === undefined || session.agents.size === 0))) continue;
    // Seen gone by the process watcher: now. Known only from silence: when the idle time ran out, from the
    // session's own last event, so a backfill of old sessions stamps it as live data would have.
    const timeMs = cause !== undefined ? nowMs : session.lastEventMs + idleMs;
    detections.push({
      mode: 'abandoned_session',
      sessionId: session.id,
      timeMs,
      toolUseId: [...session.openCalls].pop(), // the call it was running, if any
      agentPid: [...session.agents.keys()].pop(),
      cause: cause ?? 'no_session_end',
      key: String(session.lastEventMs),
    });
  }
  return detections;
}

/** Every current agent process of the session is gone: was its terminal gone too? undefined while one is alive. */
function causeFromProcesses(scan: ProcessScan, session: SessionFacts, devRoot?: string): string | undefined {
  if (session.agents.size === 0) return undefined;
  for (const [pid, agent] of session.agents) if (agentAlive(scan, pid, agent)) return undefined;
  const ttys = [...session.agents.values()].map((agent) => agent.ttyNr).filter((tty) => tty !== 0);
  return ttys.length > 0 && ttys.every((tty) => !ttyExists(tty, devRoot)) ? 'tty_gone' : 'killed';
}
