// abandoned_session: a session that stopped producing events with no SessionEnd (where its agent's release fires
// one: one that does not is over once it went away after a turn's Stop). The likely cause: its current
// Claude Code process (since its last start: a resume is judged by the resumed CLI, not the exited one before
// it) vanished and the terminal it ran on is gone (tty_gone: terminal closed, SSH dropped), or vanished with
// its terminal still there (killed: kill -9, OOM, crash); or, with no process known, it went silent for the
// idle time (no_session_end). Only sessions seen through hooks count: without hooks no SessionEnd is expected.
// An agent must stay gone for ABANDON_GRACE_MS: a CLI that exits normally fires SessionEnd just before, and its
// spool file may be read a moment after the process table shows it gone.
import type { ProcessScan } from '../../records/process-scan.js';
import { ttyExists } from '../../tty-device.js';
import { agentAlive, type AgentFacts, type Detection, type Facts, type SessionFacts } from './facts.js';

export const ABANDON_GRACE_MS = 5_000;

export function detectAbandonedSessions(scan: ProcessScan | undefined, facts: Facts, nowMs: number, idleMs: number, devRoot?: string): Detection[] {
  const detections: Detection[] = [];
  for (const session of facts.sessions.values()) {
    if (!session.hooked || session.abandoned || session.endedAtMs !== undefined) continue;
    // An agent that fires no SessionEnd (Codex before 0.145) exits after a turn's Stop: that is its end.
    if (session.endsUntold && session.lastHook === 'Stop') continue;
    const gone = scan !== undefined && agentsGone(scan, session);
    if (!gone) session.agentsGoneAtMs = undefined;
    else session.agentsGoneAtMs ??= nowMs;
    const silent = nowMs - session.lastEventMs >= idleMs;
    if (gone ? nowMs - session.agentsGoneAtMs! < ABANDON_GRACE_MS : !(silent && (scan === undefined || session.agents.size === 0))) continue;
    const cause = gone ? causeOfVanishing(scan!, session, devRoot) : undefined;
    // Seen gone by the process watcher: then. Known only from silence: when the idle time ran out, from the
    // session's own last event, so a backfill of old sessions stamps it as live data would have.
    const timeMs = gone ? session.agentsGoneAtMs! : session.lastEventMs + idleMs;
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

/** Every current agent process of the session is gone (false while none is known). */
function agentsGone(scan: ProcessScan, session: SessionFacts): boolean {
  if (session.agents.size === 0) return false;
  for (const [pid, agent] of session.agents) if (agentAlive(scan, pid, agent)) return false;
  return true;
}

/**
 * Its terminal is gone when the device is (the pseudo-terminal was freed) or nobody of its terminal session is
 * on it any more (the shell that started the CLI went with the window; a new window that got the same
 * pseudo-terminal number is another session). Else the terminal is still there: the CLI was killed.
 */
function causeOfVanishing(scan: ProcessScan, session: SessionFacts, devRoot?: string): string {
  const onTerminals = [...session.agents.values()].filter((agent) => agent.ttyNr !== 0);
  const inUse = new Set([...scan.ttys].map(([pid, tty]) => `${tty}:${scan.sids.get(pid)}`));
  const gone = (agent: AgentFacts) => !ttyExists(agent.ttyNr, devRoot) || !inUse.has(`${agent.ttyNr}:${agent.sid}`);
  return onTerminals.length > 0 && onTerminals.every(gone) ? 'tty_gone' : 'killed';
}
