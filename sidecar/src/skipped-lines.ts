// Input records the pipeline could not use, of any source: each becomes a `ccotel.record.skipped` log record
// (its text masked and capped like any output) and a health point, for the first few per file and reason;
// past them only a count is reported, so a file of garbage costs a few records, not one per line.
import { recordIdOf } from './ids.js';
import type { LogRecord, TelemetryBatch } from './model.js';
import type { Line } from './sources/line-reader.js';
import { EVENTS, METRICS, metricPoint } from './semconv.js';

/**
 * Characters of a skipped line handed to the processors beyond what the content cap keeps: masking runs on
 * them, then the cap cuts. A cut here, before masking, may leave the head of a secret unrecognisable, so it
 * falls past the cap by more than the longest secret a detector finds (a PEM body, secret-rules.ts):
 * a secret the cap could keep the head of ends before this cut, whatever CCOTEL_CONTENT_MAX_LENGTH is.
 */
const SKIPPED_LINE_MARGIN = 64 * 1024;
/**
 * Skipped records kept per file and reason; the lines skipped beyond them are only counted: one record
 * (no text, `ccotel.record.count`) per file, reason and flush.
 */
export const SKIPPED_RECORDS_PER_FILE = 10;

export interface SkippedRecord {
  source: 'transcript' | 'hook' | 'shell';
  reason: string;
  file: string;
  offset?: number;
  text: string;
  timeMs: number;
  type?: string;
}

export class SkippedLines {
  /** Per file, skipped records kept so far by reason (reset when the file is read from its start). */
  private readonly kept = new Map<string, Map<string, number>>();
  /** Skipped lines past the kept ones, per file and reason, since the last `addCounts`: the first of them and how many. */
  private over = new Map<string, { record: SkippedRecord; count: number }>();
  /** Characters of a skipped line's text kept in its record. */
  private readonly bodyKeep: number;

  /** `maxTextLength`: what the processors' content cap lets through (0: no cap). */
  constructor(maxTextLength: number) {
    this.bodyKeep = SKIPPED_LINE_MARGIN + maxTextLength;
  }

  /** The file is read again from its start: its records are kept anew (a re-read gives them the same ids). */
  restart(file: string): void {
    this.kept.delete(file);
  }

  /** Add the record of a skipped input record to `out`, or count it once its file and reason had their share. */
  add(record: SkippedRecord, out: TelemetryBatch): void {
    const kept = this.kept.get(record.file) ?? new Map<string, number>();
    this.kept.set(record.file, kept);
    const keptForReason = kept.get(record.reason) ?? 0;
    if (keptForReason < SKIPPED_RECORDS_PER_FILE) {
      kept.set(record.reason, keptForReason + 1);
      this.addRecord(record, 1, out);
      return;
    }
    const key = `${record.reason}\0${record.file}`;
    const over = this.over.get(key);
    if (over) over.count++;
    else this.over.set(key, { record: { ...record, text: '' }, count: 1 });
  }

  /** Add one record per file and reason for what was only counted since the last call. */
  addCounts(out: TelemetryBatch): void {
    for (const { record, count } of this.over.values()) this.addRecord(record, count, out);
    this.over = new Map();
  }

  private addRecord(record: SkippedRecord, count: number, out: TelemetryBatch): void {
    const id = recordIdOf('skipped', record.file, String(record.offset ?? ''));
    const attributes = {
      reason: record.reason,
      'ccotel.source': record.source,
      'ccotel.source.file': record.file,
      ...(record.offset !== undefined ? { 'ccotel.source.offset': record.offset } : {}),
      ...(record.type ? { 'ccotel.row.type': record.type } : {}),
      ...(count > 1 ? { 'ccotel.record.count': count } : {}),
    };
    const log: LogRecord = {
      id,
      timeMs: record.timeMs,
      eventName: EVENTS.recordSkipped,
      severity: 'WARN',
      traceId: '',
      spanId: '',
      body: record.text.slice(0, this.bodyKeep),
      attributes,
    };
    out.logs.push(log);
    out.metrics.push(metricPoint(METRICS.sidecarRecords, { id, timeMs: record.timeMs, value: count, attributes: { source: record.source, result: record.reason } }));
  }
}

/** Per batch of lines: where the last ask was, and the next line stating a time after it. */
const lookaheads = new WeakMap<Line[], { at: number; found?: { index: number; timeMs?: number } }>();

/**
 * The first time stated by a line after `line` in `lines`. Asked in line order: one scan forward over the batch,
 * whatever the number of asks.
 */
export function timeAfter(lines: Line[], line: Line): number | undefined {
  let state = lookaheads.get(lines);
  if (!state) lookaheads.set(lines, (state = { at: 0 }));
  while (state.at < lines.length && lines[state.at] !== line) state.at++;
  if (state.found === undefined || state.found.index <= state.at) {
    let next = state.at + 1;
    while (next < lines.length && timestampIn(lines[next].text) === undefined) next++;
    state.found = next < lines.length ? { index: next, timeMs: timestampIn(lines[next].text) } : { index: Number.POSITIVE_INFINITY };
  }
  return state.found.timeMs;
}

/** The record time written in a line, when a line that could not be used still names one. */
export function timestampIn(text: string): number | undefined {
  const match = /"timestamp":"([^"]{10,40})"/.exec(text);
  const time = match ? Date.parse(match[1]) : NaN;
  return Number.isNaN(time) ? undefined : time;
}
