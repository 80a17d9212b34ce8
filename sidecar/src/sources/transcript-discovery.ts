// Find Claude Code transcripts: every root (CLAUDE_CONFIG_DIR, which may list several comma-separated
// dirs; ~/.claude; ~/.config/claude), every main transcript and every subagent transcript in all three
// layouts (inline sidechain rows need nothing here; legacy `agent-*.jsonl` beside the sessions;
// `<session>/subagents/agent-<id>.jsonl` with its `.meta.json`); and Codex's rollouts, under the sessions dir
// of its home.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { classifyTranscriptPath, TranscriptTree, type DiscoveredTranscript } from './transcript-tree.js';

export { classifyTranscriptPath, type DiscoveredTranscript };

/** The `projects` directories to read, existing ones only, without repeats. */
export function transcriptRoots(env: NodeJS.ProcessEnv = process.env, home = env.HOME ?? homedir()): string[] {
  return candidateRoots(env, home).filter((dir) => existsSync(dir));
}

/** Every `projects` directory Claude Code may write to, whether it exists yet or not (`run` waits for them). */
export function candidateRoots(env: NodeJS.ProcessEnv = process.env, home = env.HOME ?? homedir()): string[] {
  const configDirs = (env.CLAUDE_CONFIG_DIR ?? '')
    .split(',')
    .map((dir) => dir.trim())
    .filter(Boolean);
  const xdgConfig = env.XDG_CONFIG_HOME || join(home, '.config');
  const candidates = [...configDirs, join(home, '.claude'), join(xdgConfig, 'claude')].map((dir) => join(resolve(dir), 'projects'));
  return [...new Set(candidates)];
}

/** Every transcript under the roots (see TranscriptTree.discover). */
export function discoverTranscripts(roots: string[], log?: (message: string) => void): Promise<DiscoveredTranscript[]> {
  return new TranscriptTree(roots, log).discover();
}
