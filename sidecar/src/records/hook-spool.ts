// What the hook spool source hands on: one event per spool file (sources/hook-spool-source.ts, docs/HOOKS.md).
import type { Ack } from '../model.js';
import type { AgentName } from '../semconv.js';

export interface HookEvent {
  /** Spool file name (unique per event): the seed of the event's ids. */
  file: string;
  firedAtMs: number;
  firedAtNs: string;
  hookPid: number;
  /** The Claude Code process that fired the hook (its CLAUDE_PID), when the spool file name carries it. */
  agentPid?: number;
  /** The agent its hook was installed for, when the spool file name carries it (none: Claude Code's hook, or an earlier install). */
  agent?: AgentName;
  payload: Record<string, unknown>;
  ack: Ack;
}
