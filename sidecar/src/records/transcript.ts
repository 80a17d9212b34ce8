// What the transcript source hands on with each line (sources/transcript-tailer.ts): which file it was read from.

export interface TranscriptFile {
  path: string;
  /** `main`: a session transcript; `subagent`: a subagent transcript (legacy or subagents/ layout). */
  kind: 'main' | 'subagent';
  agentId?: string;
  agentType?: string;
}
