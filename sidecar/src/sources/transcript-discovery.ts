// Find Claude Code transcripts: every root (CLAUDE_CONFIG_DIR, which may list several comma-separated
// dirs; ~/.claude; ~/.config/claude), every main transcript and every subagent transcript in all three
// layouts (inline sidechain rows need nothing here; legacy `agent-*.jsonl` beside the sessions;
// `<session>/subagents/agent-<id>.jsonl` with its `.meta.json`).
import { existsSync, readFileSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import type { TranscriptFile } from '../processors/correlate-transcripts.js';

export interface DiscoveredTranscript extends TranscriptFile {
  size: number;
  mtimeMs: number;
}

/** The `projects` directories to read, existing ones only, without repeats. */
export function transcriptRoots(env: NodeJS.ProcessEnv = process.env, home = env.HOME ?? homedir()): string[] {
  const configDirs = (env.CLAUDE_CONFIG_DIR ?? '')
    .split(',')
    .map((dir) => dir.trim())
    .filter(Boolean);
  const xdgConfig = env.XDG_CONFIG_HOME || join(home, '.config');
  const candidates = [...configDirs, join(home, '.claude'), join(xdgConfig, 'claude')].map((dir) => join(resolve(dir), 'projects'));
  return [...new Set(candidates)].filter((dir) => existsSync(dir));
}

const AGENT_FILE = /^agent-(.+)\.jsonl$/;

/** What a `.jsonl` path under a projects dir is, or undefined for files that are not transcripts. */
export function classifyTranscriptPath(projectsDir: string, path: string): TranscriptFile | undefined {
  if (!path.endsWith('.jsonl')) return undefined;
  const parts = relative(projectsDir, path).split(sep);
  const name = basename(path);
  const agent = AGENT_FILE.exec(name);
  // <project>/<session>.jsonl or <project>/agent-<id>.jsonl (legacy subagent layout)
  if (parts.length === 2) {
    return agent ? { path, kind: 'subagent', agentId: agent[1] } : { path, kind: 'main' };
  }
  // <project>/<session>/subagents/agent-<id>.jsonl
  if (parts.length === 4 && parts[2] === 'subagents' && agent) {
    return { path, kind: 'subagent', agentId: agent[1], agentType: readAgentType(path) };
  }
  return undefined;
}

function readAgentType(agentPath: string): string | undefined {
  const metaPath = join(dirname(agentPath), basename(agentPath, '.jsonl') + '.meta.json');
  try {
    const meta = JSON.parse(readFileSync(metaPath, 'utf8')) as { agentType?: unknown };
    return typeof meta.agentType === 'string' ? meta.agentType : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Every transcript under the roots. Main transcripts come first, oldest first, then subagents: a subagent
 * is attached to the tool call that started it, which lives in a main transcript.
 */
export async function discoverTranscripts(roots: string[]): Promise<DiscoveredTranscript[]> {
  const found: DiscoveredTranscript[] = [];
  for (const root of roots) {
    let entries: string[];
    try {
      entries = await readdir(root, { recursive: true });
    } catch {
      continue; // a root that vanished or cannot be read holds nothing we can use
    }
    for (const entry of entries) {
      const file = classifyTranscriptPath(root, join(root, entry));
      if (!file) continue;
      try {
        const info = await stat(file.path);
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
