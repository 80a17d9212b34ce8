// Find Claude Code transcripts: every root (CLAUDE_CONFIG_DIR, which may list several comma-separated
// dirs; ~/.claude; ~/.config/claude), every main transcript and every subagent transcript in all three
// layouts (inline sidechain rows need nothing here; legacy `agent-*.jsonl` beside the sessions;
// `<session>/subagents/agent-<id>.jsonl` with its `.meta.json`).
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TranscriptFile } from '../processors/correlate-transcripts.js';
import { classifyTranscriptPath, TranscriptTree } from './transcript-tree.js';

export { classifyTranscriptPath };

export interface DiscoveredTranscript extends TranscriptFile {
  size: number;
  mtimeMs: number;
}

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

/**
 * Every transcript under the roots. Main transcripts come first, oldest first, then subagents: a subagent
 * is attached to the tool call that started it, which lives in a main transcript.
 */
export async function discoverTranscripts(roots: string[], log?: (message: string) => void): Promise<DiscoveredTranscript[]> {
  const tree = new TranscriptTree(roots, log);
  const found: DiscoveredTranscript[] = [];
  for (const root of roots) {
    for (const path of await tree.walk(root)) {
      const file = classifyTranscriptPath(root, path)!;
      try {
        const info = await stat(path);
        if (info.isFile()) found.push({ ...file, size: info.size, mtimeMs: info.mtimeMs });
      } catch {
        // deleted between listing and stat
      }
    }
  }
  return found.sort(
    (a, b) => Number(a.kind !== 'main') - Number(b.kind !== 'main') || a.mtimeMs - b.mtimeMs || a.path.localeCompare(b.path),
  );
}
