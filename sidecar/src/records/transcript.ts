// What the transcript source hands on with each line (sources/transcript-tailer.ts): which file it was read from.
import type { AgentName } from '../semconv.js';

export interface TranscriptFile {
  path: string;
  /** `main`: a session transcript; `subagent`: a subagent transcript (legacy or subagents/ layout). */
  kind: 'main' | 'subagent';
  agentId?: string;
  agentType?: string;
  /** The agent that wrote it, when not Claude Code: its own source reads the rows (AgentRows). */
  agent?: Exclude<AgentName, 'claude-code'>;
}
