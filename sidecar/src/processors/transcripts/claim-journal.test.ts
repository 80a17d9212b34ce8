// A fork's or resume's copy of a response or tool call read after the sidecar restarted: still a copy, as it is when one
// process reads both files. Before the journal the restarted correlator had no claims and told the copy again, under the
// fork's session and turn with the original's span id (the fleet's summaries counted it twice, the embedded store once).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TelemetryBatch } from '../../model.js';
import type { TranscriptFile } from '../../records/transcript.js';
import { assistant, correlate, MAIN, prompt, result, spansNamed, toolUse } from '../../../../test/generators/transcript-rows.js';
import { ClaimJournal } from './claim-journal.js';

const FORK = '0b9a5c1e-0000-4000-8000-00000000f0f0';
const FORK_FILE: TranscriptFile = { path: `/p/${FORK}.jsonl`, kind: 'main' };
const usage = { input_tokens: 10, output_tokens: 2 };

/** The original session: a prompt, a response calling Bash, its result, the closing response. */
function original(): object[] {
  return [
    prompt('Count the files.'),
    assistant('msg_1', 'req_1', [toolUse('toolu_1', 'Bash', { command: 'ls' })], usage, 'tool_use'),
    result('toolu_1', 'a b'),
    assistant('msg_2', 'req_2', [{ type: 'text', text: 'Two.' }], usage, 'end_turn'),
  ];
}

/** A fork of it: its history copied under the fork's session id with fresh row uuids, then a turn of its own. */
function fork(rows: object[]): object[] {
  const copies = rows.map((row, index) => ({ ...row, sessionId: FORK, uuid: `fork-copy-${index}` }));
  const own = [prompt('And the hidden ones?'), assistant('msg_3', 'req_3', [{ type: 'text', text: 'None.' }], usage, 'end_turn')];
  return [...copies, ...own.map((row) => ({ ...row, sessionId: FORK }))];
}

/** Each chat and tool span: its id, session and trace (by id). */
const told = (...batches: TelemetryBatch[]) =>
  batches
    .flatMap((batch) => [...spansNamed(batch, 'chat '), ...spansNamed(batch, 'execute_tool ')])
    .map((span) => ({ name: span.name, spanId: span.spanId, session: span.attributes['session.id'], traceId: span.traceId }))
    .sort((a, b) => a.spanId.localeCompare(b.spanId));

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ccotel-claims-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('claims kept across a restart', () => {
  it('a copy read after a restart is a copy, as when one process reads both files', () => {
    const rows = original();
    const forkRows = fork(rows);
    const oneProcess = correlate([[MAIN, rows], [FORK_FILE, forkRows]]);
    const path = join(dir, 'claims.log');
    const before = new ClaimJournal(path);
    const first = correlate([[MAIN, rows]], undefined, before);
    expect(before.flush()).toBe(true);
    const after = correlate([[FORK_FILE, forkRows]], undefined, new ClaimJournal(path));
    expect(told(first, after)).toEqual(told(oneProcess));
    expect(told(after).map((span) => span.name)).toEqual(['chat claude-test']); // the fork's own response only
    // Without the claims of the first run, the copies were told again under the fork (what the fleet counted twice).
    expect(told(correlate([[FORK_FILE, forkRows]])).map((span) => span.session)).toEqual([FORK, FORK, FORK, FORK]);
  });

  it('the rows that made a claim, read again after a restart, are told again as they were', () => {
    const rows = original();
    const path = join(dir, 'claims.log');
    const before = new ClaimJournal(path);
    const first = correlate([[MAIN, rows]], undefined, before);
    before.flush();
    expect(told(correlate([[MAIN, rows]], undefined, new ClaimJournal(path)))).toEqual(told(first));
  });

  it('keeps nothing until flushed, and skips a last line a crash cut', () => {
    const path = join(dir, 'claims.log');
    const journal = new ClaimJournal(path);
    correlate([[MAIN, original()]], undefined, journal);
    expect(() => readFileSync(path)).toThrow();
    journal.flush();
    const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(3);
    writeFileSync(path, `${lines.join('\n')}\n${lines[0]!.slice(0, 20)}`);
    expect(new ClaimJournal(path).claimedBefore('call toolu_1')).toBe(true);
  });
});
