// A set of ids, compact enough to hold a whole history's worth (a sink's ids written, the transcript correlator's
// responses, calls and prompts claimed): hex digest ids (16 or 32 hex digits, ids.ts) are kept as 32-bit words in
// open-addressed tables (8 or 16 bytes an id instead of the ~150 a string in a Set costs, the slice of a digest
// keeping the digest alive). Exact for those: an id is found only if that very id was added. Any other id (e.g.
// `<span id>:cost:input`, a message id) is kept as the first 64 bits of its SHA-256 (63 of them decide), as
// unlikely to collide as two span ids: these are most of what a long history claims (message, request, call and
// prompt ids), and 64 bits instead of 128 halve their tables (17 of 20 MB after a 5 GB backfill).
import { hash } from 'node:crypto';

const MAX_LOAD = 0.7;
const INITIAL_SLOTS = 1 << 12;

/** Ids of one width (in 32-bit words), linear probing; an all-zero id never gets here, so zero marks a free slot. */
class WordTable {
  private slots: Uint32Array;
  private mask = INITIAL_SLOTS - 1;
  size = 0;

  constructor(private readonly words: number) {
    this.slots = new Uint32Array(INITIAL_SLOTS * words);
  }

  /** True if the id was not there before. */
  add(id: Uint32Array): boolean {
    if ((this.size + 1) / (this.mask + 1) > MAX_LOAD) this.grow();
    const slot = this.find(id);
    if (!this.isFree(slot)) return false;
    this.slots.set(id, slot * this.words);
    this.size++;
    return true;
  }

  has(id: Uint32Array): boolean {
    return !this.isFree(this.find(id));
  }

  /** The slot holding `id`, or the free slot where it would go. */
  private find(id: Uint32Array): number {
    // The words are digest bits already: the first one is a good hash.
    for (let slot = id[0] & this.mask; ; slot = (slot + 1) & this.mask) {
      if (this.isFree(slot) || this.holds(slot, id)) return slot;
    }
  }

  private holds(slot: number, id: Uint32Array): boolean {
    for (let word = 0; word < this.words; word++) if (this.slots[slot * this.words + word] !== id[word]) return false;
    return true;
  }

  private isFree(slot: number): boolean {
    for (let word = 0; word < this.words; word++) if (this.slots[slot * this.words + word] !== 0) return false;
    return true;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(old.length * 2);
    this.mask = this.mask * 2 + 1;
    for (let at = 0; at < old.length; at += this.words) {
      const id = old.subarray(at, at + this.words);
      if (id.some((word) => word !== 0)) this.slots.set(id, this.find(id) * this.words);
    }
  }
}

export class IdSet {
  private readonly short = new WordTable(2);
  private readonly long = new WordTable(4);
  /** Digests of the other ids: a table of their own, so one never meets a digest id. */
  private readonly other = new WordTable(2);

  get size(): number {
    return this.short.size + this.long.size + this.other.size;
  }

  /** True if the id was not there before. */
  add(id: string): boolean {
    const { table, words } = this.place(id);
    return table.add(words);
  }

  has(id: string): boolean {
    const { table, words } = this.place(id);
    return table.has(words);
  }

  private place(id: string): { table: WordTable; words: Uint32Array } {
    const words = hexWords(id);
    if (words && words.some((word) => word !== 0)) return { table: words.length === 2 ? this.short : this.long, words };
    const digest = hash('sha256', id, 'buffer');
    // Never all zero (a free slot): the last word's low bit is set, the other 63 bits decide.
    return { table: this.other, words: Uint32Array.of(digest.readUInt32BE(0), digest.readUInt32BE(4) | 1) };
  }
}

/** The 32-bit words of a hex digest id (16 or 32 lowercase hex digits), else undefined; one pass, no regex or slices. */
function hexWords(id: string): Uint32Array | undefined {
  if (id.length !== 16 && id.length !== 32) return undefined;
  const words = new Uint32Array(id.length / 8);
  for (let at = 0; at < id.length; at++) {
    const code = id.charCodeAt(at);
    const digit = code >= 48 && code <= 57 ? code - 48 : code >= 97 && code <= 102 ? code - 87 : -1;
    if (digit === -1) return undefined;
    words[at >> 3] = ((words[at >> 3] << 4) | digit) >>> 0;
  }
  return words;
}
