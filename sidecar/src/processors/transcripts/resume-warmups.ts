// Where a resumed run starts in 2.0.20, 2.0.26, 2.0.28 and 2.0.29: the resumed process writes its `Warmup` chain
// under an id of its own (the id its SessionStart hook reports), inline in the session's file (2.0.20), in a file
// of its own (2.0.26) or in agent-*.jsonl files (2.0.28, 2.0.29); then its prompt continues the resumed session,
// its parentUuid the previous run's last row (test/fixtures/real/2.0.2x/resume). Nothing else marks the resume: a
// Warmup under another session's id, in the same directory, after the session's previous run ended and before its
// next prompt, is the new process's. Backfill reads file by file, so warmups and prompts come in either order and
// both are remembered.

/** Warmups and openings remembered for a match read later; the oldest go first (the two are seconds apart). */
const MAX_REMEMBERED = 1_000;

interface Warmup {
  /** The new process's own id. */
  processId: string;
  cwd: string;
  timeMs: number;
}

interface Opening<Start> {
  sessionId: string;
  cwd: string;
  /** The session's last main-thread row before the prompt: the previous run ended then. */
  afterMs: number;
  timeMs: number;
  start: Start;
}

export class ResumeWarmups<Start> {
  private readonly warmups: Warmup[] = [];
  private readonly openings: Opening<Start>[] = [];
  /** Processes whose warmup marked a resume already (2.0.28 writes two warmups per process). */
  private readonly matched = new Set<string>();
  /** Openings a warmup read after them marked, with its process: told once that process showed no prompt of its own. */
  private resumed: { processId: string; start: Start }[] = [];

  /** `startedOwnSession`: a process whose id has a conversation of its own started fresh, it resumed nothing. */
  constructor(private readonly startedOwnSession: (processId: string) => boolean) {}

  /** The first row of a Warmup chain. */
  warmup(warmup: Warmup): void {
    if (this.matched.has(warmup.processId)) return;
    if (this.startedOwnSession(warmup.processId)) return;
    const index = this.openings.findIndex((opening) => marks(warmup, opening));
    if (index < 0) return remember(this.warmups, warmup);
    this.claim(warmup.processId);
    this.resumed.push({ processId: warmup.processId, start: this.openings.splice(index, 1)[0].start });
  }

  /** The first row of a later run of a started session: whether a warmup read before marks it a resume (else it is remembered). */
  opening(opening: Opening<Start>): boolean {
    const warmup = this.warmups.find((candidate) => marks(candidate, opening) && !this.startedOwnSession(candidate.processId));
    if (warmup === undefined) {
      remember(this.openings, opening);
      return false;
    }
    this.claim(warmup.processId);
    return true;
  }

  /** The openings that warmups read after them marked: resumes, unless the warmup's process started a session of its own since. */
  takeResumed(): Start[] {
    const resumed = this.resumed.filter(({ processId }) => !this.startedOwnSession(processId));
    this.resumed = [];
    return resumed.map(({ start }) => start);
  }

  private claim(processId: string): void {
    this.matched.add(processId);
    if (this.matched.size > MAX_REMEMBERED) this.matched.delete(this.matched.values().next().value!);
    for (let i = this.warmups.length - 1; i >= 0; i--) if (this.warmups[i].processId === processId) this.warmups.splice(i, 1);
  }
}

function marks(warmup: Warmup, opening: Opening<unknown>): boolean {
  return warmup.processId !== opening.sessionId && warmup.cwd === opening.cwd && warmup.timeMs > opening.afterMs && warmup.timeMs <= opening.timeMs;
}

function remember<T>(items: T[], item: T): void {
  items.push(item);
  if (items.length > MAX_REMEMBERED) items.shift();
}
