// Where Codex writes its rollouts and the shape of that tree: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread
// id>.jsonl`. The shared walker (transcript-tree.ts) follows it as it follows a Claude Code projects root, by the
// roles given here: the sessions dir, then year, month and day dirs, whose rollout files are the transcripts.
import { basename, join, resolve } from 'node:path';

/** The name of a Codex home's rollouts dir, which no Claude Code root has (they are `projects`). */
const SESSIONS_DIR = 'sessions';
const ROLLOUT_FILE = /^rollout-.*\.jsonl$/;
const DATE_PART = { rollouts: /^\d{4}$/, year: /^\d{2}$/, month: /^\d{2}$/ } as const;
const CHILD = { rollouts: 'year', year: 'month', month: 'day' } as const;

export type RolloutDirRole = 'rollouts' | 'year' | 'month' | 'day';

/** The root of Codex's rollouts in its home (`$CODEX_HOME/sessions`), whether it exists yet or not. */
export function codexRoot(codexHome: string): string {
  return join(resolve(codexHome), SESSIONS_DIR);
}

/** Whether a root is a Codex home's sessions dir. */
export function isRolloutsRoot(root: string): boolean {
  return basename(root) === SESSIONS_DIR;
}

/** Whether a path below the sessions dir (its parts) is a rollout: `YYYY/MM/DD/rollout-*.jsonl`. */
export function isRolloutPath(parts: string[]): boolean {
  return parts.length === 4 && ROLLOUT_FILE.test(parts[3]);
}

/** The role of a subdirectory `name` of a rollouts-tree dir, or undefined when no rollout can be below it. */
export function rolloutChildRole(role: RolloutDirRole, name: string): RolloutDirRole | undefined {
  return role !== 'day' && DATE_PART[role].test(name) ? CHILD[role] : undefined;
}

/** Whether a file `name` directly in a rollouts-tree dir is a rollout. */
export function isRolloutName(role: RolloutDirRole, name: string): boolean {
  return role === 'day' && ROLLOUT_FILE.test(name);
}
