// How the process table tells a Codex CLI session (DESIGN §12): the commands its tools run carry the thread in
// CODEX_THREAD_ID (both recorded releases; 0.171 also the call in CODEX_TOOL_CALL_ID). Codex names no process of its
// own there, so the agent is the command's nearest ancestor that runs the `codex` binary (the native one of
// `@openai/codex-<platform>`, which spawns the commands) and does not carry the same thread (a Codex run as a
// command of another thread is that command's, not its agent). Its `exec_command` keeps a command running in its
// pseudo-terminal past the call by design (`write_stdin`), and kills the command's process group when it ends.
import type { AgentProcesses } from '../agent-processes.js';

/** The first release with a SessionEnd hook (openai/codex#33895, in rust-v0.145.0); 0.130 was seen firing none. */
const SESSION_END_SINCE = [0, 145, 0];

/** Whether a release fires SessionEnd as it exits (unknown release: assumed so, as the newer ones do). */
export function firesSessionEnd(version: string | undefined): boolean {
  const parts = /^(\d+)\.(\d+)\.(\d+)/.exec(version ?? '')?.slice(1).map(Number);
  if (!parts) return true;
  const order = parts.map((part, i) => part - SESSION_END_SINCE[i]).find((difference) => difference !== 0) ?? 0;
  return order >= 0;
}

export const CODEX_PROCESSES: AgentProcesses = {
  agent: 'codex',
  sessionVariable: 'CODEX_THREAD_ID',
  callVariable: 'CODEX_TOOL_CALL_ID',
  agentCommand: 'codex',
  keepsCommandsPastCall: true,
};
