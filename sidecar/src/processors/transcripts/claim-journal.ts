// Which row claimed each API response and tool call, kept across restarts. The transcript correlator tells a copy of a
// response or call already claimed (a fork's or resume's history) from the first one by its claims, which live in
// memory; a sidecar started again reads on from its committed offsets with none. Without this journal a copy read after
// a restart was told again under the copying session and turn, with the same span id as the first: the same id with
// other content, which an embedded store drops (it keeps the first) and ClickHouse's summaries counted once more.
//
// The journal holds, per claim, a digest of the claim and one of the claim with the row that made it (its uuid): a row
// read again after a restart (a re-read from an open turn's start) is that same row and claims again, as before; any
// other row holding a claimed response or call is a copy. Appended at each commit before the checkpoint is written, so
// a committed offset past a claiming row never outlives the claim.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { hash } from 'node:crypto';
import { IdSet } from '../../id-set.js';

/** How a state file is written (sources/state-file.ts StateWrites): a failure is logged and kept, not thrown. */
interface StateWriter {
  attempt(path: string, write: () => void): boolean;
}

const digest = (text: string) => hash('sha256', text).slice(0, 32);
const LINE = /^([0-9a-f]{32}) ([0-9a-f]{32})$/;

export class ClaimJournal {
  /** Claims of earlier runs, and the same with the row that made each. */
  private readonly earlier = new IdSet();
  private readonly earlierRows = new IdSet();
  private pending: string[] = [];

  /** Without a path: nothing kept (reading once into a store that is not read on from, tests). */
  constructor(
    private readonly path?: string,
    private readonly writes?: StateWriter,
  ) {
    if (!path || !existsSync(path)) return;
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      const match = LINE.exec(line); // a last line cut by a crash is left out: its claim is made again
      if (!match) continue;
      this.earlier.add(match[1]!);
      this.earlierRows.add(match[2]!);
    }
  }

  /** Claimed in an earlier run. */
  claimedBefore(claim: string): boolean {
    return this.earlier.size > 0 && this.earlier.has(digest(claim));
  }

  /** Claimed in an earlier run by `row`. */
  claimedBy(claim: string, row: string): boolean {
    return this.earlierRows.has(digest(`${claim}\n${row}`));
  }

  /** `row` claims `claim` (kept from the next flush on). */
  record(claim: string, row: string): void {
    if (this.path) this.pending.push(`${digest(claim)} ${digest(`${claim}\n${row}`)}\n`);
  }

  /** Appends the claims recorded since the last flush, synced. False (kept for the next flush) when it failed. */
  flush(): boolean {
    const path = this.path;
    if (!path || this.pending.length === 0) return true;
    const text = this.pending.join('');
    const written = this.writes
      ? this.writes.attempt(path, () => appendSynced(path, text))
      : (appendSynced(path, text), true);
    if (written) this.pending = [];
    return written;
  }
}

function appendSynced(path: string, text: string): void {
  const fd = openSync(path, 'a', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
