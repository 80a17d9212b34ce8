// Acknowledgements that travel with the data: a source hands what it read from a file over with an ack, and the
// ack tells it where a restart must read that file from (its resume offset) once what those lines produced was
// accepted by every sink. The stage that holds the open state (the transcript correlator, the shell correlator)
// knows which lines are still needed: an open turn, a command waiting for its span. While something open holds
// the offset back, the file's latest ack is kept and told again each time the offset moves forward (the turn
// closed, the command went out), so the source never asks a correlator where to resume. Acks of a file are told
// in the order their lines were handed over.
import type { Ack, ResumeAck } from './model.js';

interface Handed {
  /** The offset after the last line handed over with the ack. */
  end: number;
  ack: ResumeAck;
  /** The resume offset last told (undefined: not told yet). */
  told?: number;
}

export class ResumeAcks {
  /** Per file, the acks handed over since the last round, in order. */
  private readonly fresh = new Map<string, Handed[]>();
  /** Per file, its latest ack once told, while something open still holds its resume offset back. */
  private readonly held = new Map<string, Handed>();

  /** Lines of `file` through `end` were handed over (or skipped): `ack` is told their resume offset. */
  add(file: string, end: number, ack: ResumeAck): void {
    const list = this.fresh.get(file);
    if (list) list.push({ end, ack });
    else this.fresh.set(file, [{ end, ack }]);
  }

  /** Acks handed over since the last round (those held back wait for what is still open to go out). */
  get handed(): number {
    let count = 0;
    for (const list of this.fresh.values()) count += list.length;
    return count;
  }

  /** Whether any ack waits to be told (a round must then ask where the open state starts). */
  get waiting(): boolean {
    return this.fresh.size > 0 || this.held.size > 0;
  }

  /**
   * One round, taken with the output it goes out with: what to run once that output is accepted. `oldestOpen`
   * gives, per file, the offset of the first line still needed by something open (undefined: none).
   */
  take(oldestOpen: (file: string) => number | undefined): Ack[] {
    const acks: Ack[] = [];
    const tell = (handed: Handed, resumeOffset: number) => {
      handed.told = resumeOffset;
      acks.push(() => handed.ack(resumeOffset));
    };
    for (const [file, handed] of this.held) {
      if (this.fresh.has(file)) continue; // a later ack of the file supersedes it
      const resumeOffset = Math.min(oldestOpen(file) ?? handed.end, handed.end);
      if (resumeOffset !== handed.told) tell(handed, resumeOffset);
      if (resumeOffset >= handed.end) this.held.delete(file);
    }
    for (const [file, list] of this.fresh) {
      const open = oldestOpen(file);
      for (const handed of list) tell(handed, Math.min(open ?? handed.end, handed.end));
      const latest = list[list.length - 1];
      if (latest.told! < latest.end) this.held.set(file, latest);
      else this.held.delete(file);
    }
    this.fresh.clear();
    return acks;
  }
}
