// A running sidecar's query endpoint answers the report's and the web view's questions again from memory while the
// store is unchanged: at 1 GB of history a `report session` costs the engine ~0.5–1 s of CPU (the span facts read
// with FINAL), the same every time it is asked (issue 36). The store's state is its fingerprint as the question sees it
// (answer-cache.ts storeState: the modification times of the directories of the tables it reads and of every
// definition, which every insert, merge, TTL drop, mutation and DDL changes), read before the question is asked and
// again after it is answered: an answer is kept only if the store
// did not change meanwhile, and found only under the state it was asked in. Only questions that ask for it are kept
// (KEEP_ANSWER_HEADER: the report's reads, all of them ordered and deterministic), never one that reads the clock;
// `ccotel query`'s own SQL may read anything (system tables, rand()) and is always asked anew.
import { createHash } from 'node:crypto';
import { READS_CLOCK } from './answer-cache.js';

/** Sent by a reader whose question has one answer per state of the store (report/select.ts). */
export const KEEP_ANSWER_HEADER = 'x-ccotel-keep-answer';

/** What the kept answers may hold at most, together. */
const MAX_KEPT_BYTES = 64 << 20;

export interface Question {
  sql: string;
  format: string;
  params: Record<string, string>;
  settings: Record<string, string>;
}

export class KeptAnswers {
  /** In order of use, the least recently used first; answers of an earlier state of the store age out among them. */
  private readonly answers = new Map<string, Buffer>();
  private bytes = 0;

  constructor(
    /** The store's state as a reader of a statement sees it. */
    private readonly fingerprint: (sql: string) => string,
    private readonly maxBytes = MAX_KEPT_BYTES,
  ) {}

  /** The answer to `question`: kept, or what `ask` gives (kept when the store did not change while it was asked). */
  async answer(question: Question, ask: () => Promise<Buffer>): Promise<Buffer> {
    if (READS_CLOCK.test(question.sql)) return ask();
    const before = this.fingerprint(question.sql);
    const key = createHash('sha256').update(JSON.stringify([before, question.sql, question.format, question.params, question.settings])).digest('hex');
    const kept = this.answers.get(key);
    if (kept) {
      this.answers.delete(key);
      this.answers.set(key, kept);
      return kept;
    }
    const answer = await ask();
    if (this.fingerprint(question.sql) === before && answer.length <= this.maxBytes) this.keep(key, answer);
    return answer;
  }

  private keep(key: string, answer: Buffer): void {
    // Asked twice at once: the later answer replaces the earlier.
    this.bytes -= this.answers.get(key)?.length ?? 0;
    this.answers.delete(key);
    this.answers.set(key, answer);
    this.bytes += answer.length;
    for (const [oldest, dropped] of this.answers) {
      if (this.bytes <= this.maxBytes) break;
      this.answers.delete(oldest);
      this.bytes -= dropped.length;
    }
  }
}
