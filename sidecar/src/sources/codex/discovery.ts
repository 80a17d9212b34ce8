// Find Codex rollouts: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl` (CODEX_HOME defaults to ~/.codex), oldest
// first by name (they are named by their start time), as files of the agent `codex`.
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { DiscoveredTranscript } from '../transcript-tree.js';

const ROLLOUT = /^rollout-.*\.jsonl$/;

/** The sessions directory of a Codex home. */
export function codexSessionsDir(codexHome: string): string {
  return join(codexHome, 'sessions');
}

/** Whether `path` (under a sessions dir) is a rollout. */
export function isRollout(path: string): boolean {
  return ROLLOUT.test(path.slice(path.lastIndexOf('/') + 1));
}

async function walk(dir: string, found: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await walk(path, found);
    else if (entry.isFile() && ROLLOUT.test(entry.name)) found.push(path);
  }
}

/** Every rollout under the Codex home (none when it has no sessions dir), oldest first. */
export async function discoverRollouts(codexHome: string): Promise<DiscoveredTranscript[]> {
  const paths: string[] = [];
  await walk(codexSessionsDir(codexHome), paths);
  const found: DiscoveredTranscript[] = [];
  for (const path of paths) {
    const info = await lstat(path).catch(() => undefined);
    if (info?.isFile()) found.push({ path, kind: 'main', agent: 'codex', size: info.size, mtimeMs: info.mtimeMs, dev: info.dev, ino: info.ino });
  }
  return found;
}
