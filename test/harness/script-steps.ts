import type { Usage } from './model-server.js';
import type { ScriptedToolCall, ToolOutcome } from './scenarios.js';

// Building blocks of scenario scripts.

/** Distinct numbers per step, so a total that double-counts or drops a request shows. */
export function usage(input: number, output: number, cacheRead = 0, cacheCreation = 0): Usage {
  return {
    input_tokens: input,
    output_tokens: output,
    cache_read_input_tokens: cacheRead,
    cache_creation_input_tokens: cacheCreation,
  };
}

export function bash(command: string, outcome: ToolOutcome, description = 'Run a harness command'): ScriptedToolCall {
  return { name: 'Bash', input: { command, description }, outcome };
}
