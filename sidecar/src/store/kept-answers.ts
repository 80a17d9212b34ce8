// A running sidecar's query endpoint answers the report's and the web view's questions again from memory while the
// store is unchanged: at 1 GB of history a `report session` costs the engine ~0.5–1 s of CPU (the span facts read
// with FINAL), the same every time it is asked (issue 36). The store's state is its fingerprint as the question sees it
// (answer-cache.ts storeState: the modification times of the directories of the tables it reads and of every
// definition, which every insert, merge, TTL drop, mutation and DDL changes), read before the question is asked and
// again after it is answered: an answer is kept only if the store
// did not change meanwhile, and found only under the state it was asked in. Only questions that ask for it are kept
// (KEEP_ANSWER_HEADER: the report's reads, all of them ordered and deterministic), never one that reads the clock;
// `ccotel query`'s own SQL may read anything (system tables, rand()) and is always asked anew. An answer of one state
// of the store goes out with that state's key as its tag (ETag): a reader that kept what it made of it (the report's
// printed output, report/kept-output.ts) asks with If-None-Match whether it still stands, and the endpoint says so
// (304) from the store's fingerprint alone, without the engine and without sending the answer.
import type { QueryParams } from '@clickhouse/client';
import { createHash } from 'node:crypto';
import { READS_CLOCK } from './answer-cache.js';

/** Sent by a reader whose question has one answer per state of the store (report/select.ts). */
export const KEEP_ANSWER_HEADER = 'x-ccotel-keep-answer';

/**
 * A store's client whose answers say which state of the store they are of (a tag, when they are of one): the
 * endpoint's (endpoint-client.ts) and a cold reader's (answer-cache.ts). What a reader made of tagged answers stands
 * while each of them still answers its question.
 */
export interface TaggingClient {
  query(params: QueryParams): Promise<{ json<T>(): Promise<T[]>; tag?: string }>;
  /** Whether the answer tagged `tag` is still the answer to `params`: asked without sending the answer again. */
  stillAnswers(params: QueryParams, tag: string): Promise<boolean>;
}

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

  /**
   * The answer to `question`: kept, or what `ask` gives (kept when the store did not change while it was asked); and
   * its tag, when it is the answer of one state of the store (the key it is kept under): a reader that kept what it
   * made of the answer asks whether it still stands (`stillAnswers`) instead of asking for it again.
   */
  async answer(question: Question, ask: () => Promise<Buffer>): Promise<{ answer: Buffer; tag?: string }> {
    if (READS_CLOCK.test(question.sql)) return { answer: await ask() };
    const key = this.keyOf(question);
    const kept = this.answers.get(key);
    if (kept) {
      this.answers.delete(key);
      this.answers.set(key, kept);
      return { answer: kept, tag: key };
    }
    const answer = await ask();
    if (this.keyOf(question) !== key) return { answer };
    if (answer.length <= this.maxBytes) this.keep(key, answer);
    return { answer, tag: key };
  }

  /** Whether the answer tagged `tag` is still the answer to `question` (the store as it was when it was given). */
  stillAnswers(question: Question, tag: string): boolean {
    return !READS_CLOCK.test(question.sql) && this.keyOf(question) === tag;
  }

  /** The question in the store's state as it sees it now. */
  private keyOf(question: Question): string {
    return createHash('sha256').update(JSON.stringify([this.fingerprint(question.sql), question.sql, question.format, question.params, question.settings])).digest('hex');
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
