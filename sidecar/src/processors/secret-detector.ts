import type { lintSource as LintSource } from '@secretlint/core';
import { mayHoldSecret, OWN_RULES } from './secret-rules.js';

// Finds secrets in text: secretlint's recommended preset plus ccotel's own rules for what the preset
// misses (JWTs, Bearer headers, short PEM keys, passwords in URLs and assignments) or reports with a
// wrong range (AWS secret access keys). Texts are scanned through a JSON-unescaped view, so a secret
// inside a JSON string inside a JSON string is found too; ranges always refer to the given text.

/** A secret at [start, end) of a text, in UTF-16 code units. */
export interface Finding {
  rule: string;
  start: number;
  end: number;
}

export interface SecretDetector {
  /** One list per text, each sorted and non-overlapping. */
  detect(texts: readonly string[]): Promise<Finding[][]>;
}

export interface SecretDetectorOptions {
  /** Skip texts with no keyword any rule needs (default true; false only to measure what it saves). */
  prefilter?: boolean;
  /** Characters per lintSource call; many texts are joined into one call because each call has a fixed cost. */
  charsPerLint?: number;
}

type LintConfig = Parameters<typeof LintSource>[0]['options']['config'];
type LintMessage = Awaited<ReturnType<typeof LintSource>>['messages'][number];

// The recommended preset's rules, listed one by one: `disabled` on a rule inside a preset is ignored
// by secretlint's core, and the comment filter must go — `secretlint-disable` comments in transcripts
// are data, not instructions to us.
const FILTER_COMMENTS_RULE = '@secretlint/secretlint-rule-filter-comments';
const RULE_OPTIONS: Record<string, object> = {
  // Access key ids (AKIA…) and account ids are only scanned with this option.
  '@secretlint/secretlint-rule-aws': { enableIDScanRule: true },
};

export interface Secretlint {
  lintSource: typeof LintSource;
  config: LintConfig;
}
let secretlint: Promise<Secretlint> | undefined;

/**
 * secretlint and its rules, loaded when the first text that may hold a secret comes (a process that never
 * sees one, e.g. an idle sidecar, does not hold them in memory).
 */
export function loadSecretlint(): Promise<Secretlint> {
  secretlint ??= (async () => {
    const [{ lintSource }, { secretLintProfiler }, { rules }] = await Promise.all([
      import('@secretlint/core'),
      import('@secretlint/profiler'),
      import('@secretlint/secretlint-rule-preset-recommend'),
    ]);
    // secretlint's profiler records a performance mark per rule per call and keeps every entry forever:
    // most of the CPU and an unbounded leak in a long-running process. The last release that runs on Node 20
    // (12.0) has no switch for it, so its one entry point is made to record nothing.
    secretLintProfiler.mark = () => undefined;
    const config: LintConfig = {
      rules: rules
        .filter((rule) => rule.meta.id !== FILTER_COMMENTS_RULE)
        .map((rule) => ({ id: rule.meta.id, rule, options: RULE_OPTIONS[rule.meta.id] ?? {} })),
    };
    return { lintSource, config };
  })();
  return secretlint;
}

// A text as the rules see it: JSON string escapes decoded (repeatedly, for JSON inside JSON), with the
// position in the original text of every character, so findings map back.
interface TextView {
  content: string;
  /** toOriginal[i] = where view character i starts in the original; one extra entry for the end. */
  toOriginal: Int32Array | null;
}

const SIMPLE_ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const MAX_UNESCAPE_LEVELS = 3;

const ESCAPE_SEQUENCE = /\\(?:(["\\/bfnrt])|u([0-9a-fA-F]{4}))/g;
const HAS_ESCAPE = new RegExp(ESCAPE_SEQUENCE.source);

function unescapeOnce(text: string): { content: string; toText: Int32Array } {
  const parts: string[] = [];
  const toText = new Int32Array(text.length + 1);
  let length = 0;
  let from = 0;
  /** Copies text[from, to) unchanged: each character maps to itself. */
  const copyUpTo = (to: number) => {
    parts.push(text.slice(from, to));
    for (let i = from; i < to; i++) toText[length++] = i;
  };
  for (const escape of text.matchAll(ESCAPE_SEQUENCE)) {
    copyUpTo(escape.index);
    parts.push(escape[1] !== undefined ? SIMPLE_ESCAPES[escape[1]] : String.fromCharCode(parseInt(escape[2], 16)));
    toText[length++] = escape.index;
    from = escape.index + escape[0].length;
  }
  copyUpTo(text.length);
  toText[length] = text.length;
  return { content: parts.join(''), toText: toText.subarray(0, length + 1) };
}

function viewOf(text: string): TextView {
  let content = text;
  let toOriginal: Int32Array | null = null;
  for (let level = 0; level < MAX_UNESCAPE_LEVELS && HAS_ESCAPE.test(content); level++) {
    const step = unescapeOnce(content);
    toOriginal = toOriginal ? step.toText.map((i) => toOriginal![i]) : step.toText;
    content = step.content;
  }
  return { content, toOriginal };
}

/** A secret as the rules saw it, JSON escapes decoded: what its fingerprint is computed on. */
export function decodedSecret(text: string): string {
  return viewOf(text).content;
}

/** Rule names from secretlint message ids: AWSSecretAccessKey → aws-secret-access-key, GITHUB_TOKEN → github-token. */
function ruleNameOf(messageId: string): string {
  return messageId
    .replace(/(MongoDB|MySQL|PostgreSQL)/, (db) => db.toLowerCase())
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .replace(/_+/g, '-')
    .toLowerCase();
}

const AWS_ACCOUNT_ID = /\d{4}-?\d{4}-?\d{4}/;

/**
 * secretlint's AWS rule reports a range that starts at the variable name (the match start) with the
 * length of the key, so most of the key would stay readable; the key itself is in the message data.
 */
function secretRangeOf(message: LintMessage, content: string): [number, number] {
  const [start, end] = message.range;
  if (message.messageId === 'AWSSecretAccessKey') {
    const key = String((message.data as { KEY?: string } | undefined)?.KEY ?? '');
    const at = key ? content.indexOf(key, start) : -1;
    if (at >= 0 && at <= end) return [at, at + key.length];
  }
  if (message.messageId === 'AWSAccountID') {
    const id = AWS_ACCOUNT_ID.exec(content.slice(start, end));
    if (id) return [start + id.index, start + id.index + id[0].length];
  }
  return [start, end];
}

/** Sorted, non-overlapping: overlapping findings become one that keeps the first one's rule. */
function mergeFindings(findings: Finding[]): Finding[] {
  findings.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: Finding[] = [];
  for (const finding of findings) {
    const last = merged.at(-1);
    if (last && finding.start < last.end) last.end = Math.max(last.end, finding.end);
    else if (finding.end > finding.start) merged.push({ ...finding });
  }
  return merged;
}

export function createSecretDetector(options: SecretDetectorOptions = {}): SecretDetector {
  const usePrefilter = options.prefilter ?? true;
  const charsPerLint = options.charsPerLint ?? 1_000_000;

  /** Runs secretlint once per chunk of joined views and adds its findings to each view's list. */
  async function lintInto(views: TextView[], indices: number[], found: Finding[][]): Promise<void> {
    if (indices.length === 0) return;
    const { lintSource, config } = await loadSecretlint();
    for (let first = 0; first < indices.length; ) {
      // Views joined by newlines; starts[k] is where view indices[first + k] begins in the joined content.
      const starts: number[] = [];
      const parts: string[] = [];
      let length = 0;
      let next = first;
      do {
        starts.push(length);
        parts.push(views[indices[next]].content);
        length += views[indices[next]].content.length + 1;
        next++;
      } while (next < indices.length && length < charsPerLint);
      const content = parts.join('\n');
      const result = await lintSource({
        source: { content, filePath: 'ccotel-content.txt', ext: '.txt', contentType: 'text' },
        options: { config, noPhysicFilePath: true },
      });
      for (const message of result.messages) {
        const [start, end] = secretRangeOf(message, content);
        // A range can only cross a separator if a rule matched across texts: give each text its part.
        for (let k = lastStartAtOrBefore(starts, start); k < starts.length && starts[k] < end; k++) {
          const viewLength = parts[k].length;
          const localStart = Math.max(0, start - starts[k]);
          const localEnd = Math.min(viewLength, end - starts[k]);
          if (localEnd > localStart) found[indices[first + k]].push({ rule: ruleNameOf(message.messageId), start: localStart, end: localEnd });
        }
      }
      first = next;
    }
  }

  /** Findings of texts that are all different. */
  async function detectDistinct(texts: readonly string[]): Promise<Finding[][]> {
    const views: TextView[] = texts.map(viewOf);
    const found: Finding[][] = texts.map(() => []);
    const candidates: number[] = [];
    views.forEach((view, index) => {
      if (usePrefilter && !mayHoldSecret(view.content)) return;
      candidates.push(index);
      for (const rule of OWN_RULES) {
        for (const [start, end] of rule.find(view.content)) found[index].push({ rule: rule.name, start, end });
      }
    });
    await lintInto(views, candidates, found);
    return found.map((findings, index) => {
      const toOriginal = views[index].toOriginal;
      const mapped = toOriginal
        ? findings.map((f) => ({ rule: f.rule, start: toOriginal[f.start], end: toOriginal[f.end] }))
        : findings;
      return mergeFindings(mapped);
    });
  }

  return {
    async detect(texts) {
      // A text a batch repeats (a session's directory, repository and branch on each of its records: a URL makes
      // every rule's prefilter look) is scanned once; findings depend on the text alone.
      const at = new Map<string, number>();
      const distinct: string[] = [];
      for (const text of texts) {
        if (!at.has(text)) at.set(text, distinct.push(text) - 1);
      }
      const found = await detectDistinct(distinct);
      return texts.map((text) => found[at.get(text)!]);
    },
  };
}

/** Index of the last start <= position (starts ascending, starts[0] = 0). */
function lastStartAtOrBefore(starts: number[], position: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (starts[mid] <= position) low = mid;
    else high = mid - 1;
  }
  return low;
}
