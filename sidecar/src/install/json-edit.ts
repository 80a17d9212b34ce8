// Apply a change of a parsed JSON document to its text without rewriting the rest: the difference between
// the value before and after is turned into jsonc-parser `modify` edits at the deepest paths that differ,
// so what ccotel did not change keeps its text (numbers beyond 2^53, duplicate keys, key order; jsonc-parser
// only re-indents the lines an edit touches). JSON.parse loses such numbers and duplicates, but in both
// values alike, so they never show up as a difference.
// Named imports: its CommonJS build (Node) and its ESM build (vite-node, the demo) both have them; only the first has a default.
import { applyEdits, modify } from 'jsonc-parser';

type Json = unknown;
type Path = Array<string | number>;
interface Edit {
  path: Path;
  value: Json;
  insert?: boolean;
}

const isObject = (value: Json): value is Record<string, Json> => typeof value === 'object' && value !== null && !Array.isArray(value);
const same = (a: Json, b: Json) => JSON.stringify(a) === JSON.stringify(b);

/** `text` (which parses to `before`) edited so that it parses to `after`. */
export function applyJsonChange(text: string, before: Json, after: Json, indent: string): string {
  const formattingOptions = { insertSpaces: !indent.includes('\t'), tabSize: indent.includes('\t') ? 1 : indent.length, eol: '\n' };
  let result = text.trim() === '' ? '{}\n' : text;
  for (const edit of diff([], before, after)) {
    result = applyEdits(result, modify(result, edit.path, edit.value, { formattingOptions, isArrayInsertion: edit.insert }));
  }
  return result;
}

/** Edits from `before` to `after`, in an order where each path is still valid when it is applied. */
function diff(path: Path, before: Json, after: Json): Edit[] {
  if (same(before, after)) return [];
  if (isObject(before) && isObject(after)) {
    const edits: Edit[] = [];
    for (const key of Object.keys(before)) if (!(key in after)) edits.push({ path: [...path, key], value: undefined });
    for (const [key, value] of Object.entries(after)) {
      edits.push(...(key in before ? diff([...path, key], before[key], value) : [{ path: [...path, key], value }]));
    }
    return edits;
  }
  if (Array.isArray(before) && Array.isArray(after)) return diffArrays(path, before, after);
  return [{ path, value: after }];
}

function diffArrays(path: Path, before: Json[], after: Json[]): Edit[] {
  if (before.length === after.length) return before.flatMap((value, i) => diff([...path, i], value, after[i]));
  // Appended at the end: insert only the new elements.
  if (after.length > before.length && before.every((value, i) => same(value, after[i]))) {
    return after.slice(before.length).map((value, i) => ({ path: [...path, before.length + i], value, insert: true }));
  }
  const kept = keptIndexes(before, after);
  if (!kept) return [{ path, value: after }];
  // Change the kept elements in place, then remove the others from the back so earlier indexes hold.
  const changes = kept.flatMap((from, i) => diff([...path, from], before[from], after[i]));
  const removals = before.flatMap((_value, i) => (kept.includes(i) ? [] : [{ path: [...path, i], value: undefined }])).reverse();
  return [...changes, ...removals];
}

/** Whether `after` can come from `before` by removing array elements and object keys only. */
function shrunk(before: Json, after: Json): boolean {
  if (same(before, after)) return true;
  if (isObject(before) && isObject(after)) return Object.entries(after).every(([key, value]) => key in before && shrunk(before[key], value));
  return Array.isArray(before) && Array.isArray(after) && keptIndexes(before, after) !== undefined;
}

/**
 * When `after` is `before` with elements removed and the rest shrunk in place, the index in `before` of
 * each element of `after`: in order, an element equal to it first, else the first it can come from.
 */
function keptIndexes(before: Json[], after: Json[]): number[] | undefined {
  const kept: number[] = [];
  let from = 0;
  for (const [i, value] of after.entries()) {
    // Leave enough of `before` for the rest of `after`.
    const last = before.length - (after.length - i);
    const candidates = before.slice(from, last + 1);
    let at = candidates.findIndex((candidate) => same(candidate, value));
    if (at < 0) at = candidates.findIndex((candidate) => shrunk(candidate, value));
    if (at < 0) return undefined;
    kept.push(from + at);
    from += at + 1;
  }
  return kept;
}
