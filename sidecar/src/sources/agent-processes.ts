// How each agent's processes are told in the process table (sources/process-watcher.ts): which variable of a tool
// command's environment names its session, and how its agent process is found. One entry per agent, in one list.
import type { AgentName } from '../semconv.js';
import { CODEX_PROCESSES } from './codex/processes.js';

export interface AgentProcesses {
  agent: AgentName;
  /** The variable naming the session in the environment of the commands its tools run. */
  sessionVariable: string;
  /** The variable naming the tool call that ran the command, where the agent sets one. */
  callVariable?: string;
  /** The variable naming the agent process (its pid), where the agent sets one. */
  agentPidVariable?: string;
  /** Else: the agent is the command's nearest ancestor running this program (its `comm`) outside the session. */
  agentCommand?: string;
  /** A hook command (or what it started) rather than a tool's, told by its environment. */
  isHook?: (env: (key: string) => string | undefined) => boolean;
  /** The agent keeps a command's processes running past its call by design: no failure while under the agent. */
  keepsCommandsPastCall?: boolean;
}

/**
 * Claude Code: CLAUDE_CODE_SESSION_ID and CLAUDE_PID in its Bash tool's commands; (2.1) its hooks get
 * CLAUDE_PROJECT_DIR and the Bash tool CLAUDE_CODE_EXECPATH instead.
 */
const CLAUDE_CODE_PROCESSES: AgentProcesses = {
  agent: 'claude-code',
  sessionVariable: 'CLAUDE_CODE_SESSION_ID',
  agentPidVariable: 'CLAUDE_PID',
  isHook: (env) => env('CLAUDE_PROJECT_DIR') !== undefined && env('CLAUDE_CODE_EXECPATH') === undefined,
};

export const AGENT_PROCESSES: readonly AgentProcesses[] = [CLAUDE_CODE_PROCESSES, CODEX_PROCESSES];
