// Where a re-read after a crash must start in each file so everything still open is rebuilt whole.
import type { Parts, Turn } from './types.js';

/**
 * Per file, the offset of the oldest line a re-read must start from: open turns, pending commands, turns with a
 * call still waiting for its result, and subagents not reported yet (their own rows, and the turn of the call
 * that started them). One pass for all files: a commit asks for every file.
 */
export function oldestOpenOffsets({ sessions, tools, agents }: Parts): Map<string, number> {
  const oldest = new Map<string, number>();
  const note = (file: string | undefined, offset: number) => {
    if (file !== undefined && offset < (oldest.get(file) ?? Number.POSITIVE_INFINITY)) oldest.set(file, offset);
  };
  const noteTurn = (turn: Turn | undefined) => turn && note(turn.file, turn.startOffset);
  for (const session of sessions.all()) {
    noteTurn(session.turn);
    if (session.pendingInput) note(session.pendingInput.file.path, session.pendingInput.offset);
  }
  for (const tool of tools.waiting()) noteTurn(tool.turn);
  for (const agent of agents.unreported()) {
    noteTurn(agent.link?.turn);
    note(agent.file, agent.startOffset);
  }
  return oldest;
}
