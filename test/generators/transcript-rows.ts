// Transcript rows shaped like Claude Code's (field names of the recorded samples), for correlator tests: each
// call advances a shared clock by a second and takes a fresh uuid, so rows are in file order and time order.
import type { ClaimJournal } from '../../sidecar/src/processors/transcripts/claim-journal.js';
import type { TelemetryBatch } from '../../sidecar/src/model.js';
import type { Places } from '../../sidecar/src/processors/attribution.js';
import { TranscriptCorrelator } from '../../sidecar/src/processors/transcripts/correlator.js';
import type { TranscriptFile } from '../../sidecar/src/records/transcript.js';
import { parseTranscriptLine } from '../../sidecar/src/processors/parse-transcript.js';
import { encode } from '../../sidecar/src/processors/encode/index.js';

export const SESSION = '0b9a5c1e-0000-4000-8000-000000000001';
export const MAIN: TranscriptFile = { path: '/p/main.jsonl', kind: 'main' };

let clock = Date.parse('2026-11-01T10:00:00.000Z');
let uuidCounter = 0;

/** Move the shared clock on (a pause between rows). */
export function advanceClock(ms: number): void {
  clock += ms;
}

export function base(sessionId = SESSION) {
  clock += 1000;
  return { uuid: `u-${++uuidCounter}`, sessionId, timestamp: new Date(clock).toISOString(), isSidechain: false };
}
/** A user row: its content is the typed text, or content blocks (as meta rows of expanded commands hold). */
export const prompt = (content: string | object[], extra: object = {}) => ({ ...base(), type: 'user', message: { role: 'user', content }, ...extra });
export const assistant = (id: string, requestId: string, content: object[], usage: object, stop: string | null = null, extra: object = {}) => ({
  ...base(),
  type: 'assistant',
  requestId,
  message: { id, model: 'claude-test', role: 'assistant', content, stop_reason: stop, usage },
  ...extra,
});
export const toolUse = (id: string, name: string, input: object = {}) => ({ type: 'tool_use', id, name, input });
export const result = (toolUseId: string, content: string, isError?: boolean, toolUseResult?: unknown, extra: object = {}) => ({
  ...base(),
  type: 'user',
  message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content, ...(isError ? { is_error: true } : {}) }] },
  toolUseResult,
  ...extra,
});

/** Feed whole files (each read from its start) to a correlator, end the input, and take its output. */
export function correlate(files: [TranscriptFile, object[]][], places?: Places, claims?: ClaimJournal): TelemetryBatch {
  const correlator = new TranscriptCorrelator(places, claims);
  for (const [file, rows] of files) {
    correlator.readingFromStart(file.path);
    rows.forEach((row, index) => {
      const parsed = parseTranscriptLine(JSON.stringify(row));
      if (parsed.ok === true) correlator.add(parsed.entry, file, index);
    });
  }
  correlator.finish();
  return encode(correlator.drain(), (sessionId) => correlator.placeOf(sessionId));
}

export const spansNamed = (batch: TelemetryBatch, prefix: string) => batch.spans.filter((span) => span.name.startsWith(prefix));
export const turnRoots = (batch: TelemetryBatch) => spansNamed(batch, 'invoke_agent claude-code');
