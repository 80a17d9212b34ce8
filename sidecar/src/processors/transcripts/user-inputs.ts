// Slash commands and bash-mode commands (`!`) with their outputs: rows between turns, never prompts. A command
// waits on its session until the model answers it (then it is a turn's prompt) or its output shows it was local.
import { isCommandExpansion, isCommandOutput, userInput } from '../classify.js';
import type { TranscriptEntry } from '../transcript-entry.js';
import { sessionStartSource, startingRow } from './session-starts.js';
import type { Parts, Row, Session } from './types.js';

export class UserInputs {
  constructor(private readonly parts: Parts) {}

  /** Whether the row is a command or a command's output (nothing else is to be done with it then). */
  add(row: Row, session: Session): boolean {
    const { entry, file, offset } = row;
    const input = userInput(entry);
    if (input) {
      const text = input.kind === 'bash' ? `! ${input.command}` : [input.name, input.args].filter(Boolean).join(' ');
      session.pendingInput = { entry, input, text, file, offset, answerable: input.kind === 'bash' };
      const { starts } = this.parts;
      const readFromStart = starts.isReadFromStart(file.path);
      session.firstCommand ??= { entry: startingRow(entry), source: sessionStartSource(entry, session.started, starts.seenBefore(entry, `input:${text}`), readFromStart) };
      if (input.kind === 'bash') this.emitUserShellCommand(session, entry, input.command);
      return true;
    }
    const pending = session.pendingInput;
    if (!pending) return false;
    if (isCommandExpansion(entry)) pending.answerable = true;
    else if (!isCommandOutput(entry)) return false;
    else if (pending.input.kind === 'command') session.pendingInput = undefined; // a local command (/model): no model call
    return true;
  }

  /**
   * A command the user ran in bash mode: a log record like the shell log's, so the SIEM rules on shell commands
   * see it. No span: it belongs to no turn and no tool call. Keyed by time and command: a resume's copy repeats it.
   */
  private emitUserShellCommand(session: Session, entry: TranscriptEntry, command: string): void {
    this.parts.out.event({ kind: 'UserShellCommand', sessionId: session.id, command, cwd: entry.cwd, messageUuid: entry.uuid, timeMs: entry.timeMs });
  }
}
