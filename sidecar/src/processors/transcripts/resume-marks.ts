// Where a resumed run starts in a file it appends to, for 1.0.x / 2.0.0, which number no prompts and queue none:
// the resumed process writes a file of its own holding only `summary` rows whose `leafUuid` names the last row
// of the conversation it continues (test/fixtures/real/1.0.128/resume). The summary file and the conversation
// file may be read in either order, so both are remembered: the leaves named so far, and which run-opening row
// came after the last few rows of each run.

/** Rows before a run's first row that may be the leaf a summary names (a resumed run may begin with a synthetic row). */
export const ROWS_BEFORE_OPENING = 4;
/** Openings remembered for a summary read after them; the oldest go first (a summary follows its conversation closely). */
const MAX_OPENINGS = 50_000;

export class ResumeMarks<Opening> {
  /** Leaf uuid → the file of the summary naming it. */
  private readonly leaves = new Map<string, string>();
  private readonly leavesOfFile = new Map<string, string[]>();
  /** Row uuid → the first row of the run after it. */
  private readonly openingAfter = new Map<string, Opening>();
  /** Openings a summary named after they were read, by the summary's file: resumes unless that file has conversation. */
  private readonly pending = new Map<string, Opening[]>();

  /** Files with conversation rows: their summaries label that conversation (or a copy of one), they mark no resume. */
  private readonly conversationFiles = new Set<string>();

  summary(leafUuid: string, file: string): void {
    if (this.conversationFiles.has(file)) return;
    const opening = this.openingAfter.get(leafUuid);
    if (opening !== undefined) {
      this.openingAfter.delete(leafUuid);
      this.pending.set(file, [...(this.pending.get(file) ?? []), opening]);
      return;
    }
    this.leaves.set(leafUuid, file);
    this.leavesOfFile.set(file, [...(this.leavesOfFile.get(file) ?? []), leafUuid]);
  }

  /** The openings that summaries of files without conversation (so far) named after reading them: resumes. */
  takeResumed(): Opening[] {
    const resumed = [...this.pending.values()].flat();
    this.pending.clear();
    return resumed;
  }

  /**
   * A conversation row of `file`: its summaries label a copied history (1.0.24…1.0.98 resume into a new file
   * that starts with a summary of the copy) or its own conversation, not a run appended elsewhere.
   */
  conversationIn(file: string): void {
    if (this.conversationFiles.has(file)) return;
    this.conversationFiles.add(file);
    this.pending.delete(file);
    const leaves = this.leavesOfFile.get(file);
    if (leaves === undefined) return;
    this.leavesOfFile.delete(file);
    for (const leaf of leaves) if (this.leaves.get(leaf) === file) this.leaves.delete(leaf);
  }

  isLeaf(uuid: string): boolean {
    return this.leaves.has(uuid);
  }

  /** The first row of a run (of a session already started), after the rows named. */
  opening(rowsBefore: string[], opening: Opening): void {
    for (const uuid of rowsBefore.slice(-ROWS_BEFORE_OPENING)) {
      this.openingAfter.delete(uuid);
      this.openingAfter.set(uuid, opening);
    }
    for (const oldest of this.openingAfter.keys()) {
      if (this.openingAfter.size <= MAX_OPENINGS) break;
      this.openingAfter.delete(oldest);
    }
  }
}

