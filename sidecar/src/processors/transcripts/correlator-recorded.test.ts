// Claude Code 2.1.332 itself, recorded (test/fixtures/formats/README.md): a custom slash command in print mode,
// and an interactive session with a bash-mode command the model answers and permission-mode switches.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TelemetryBatch } from '../../model.js';
import { spansNamed, turnRoots } from '../../../../test/generators/transcript-rows.js';
import { TranscriptCorrelator } from './correlator.js';
import { parseTranscriptLine } from '../parse-transcript.js';
import { encode } from '../encode/index.js';

const RECORDED = join(import.meta.dirname, '..', '..', '..', '..', 'test', 'fixtures', 'formats', '2.1.332');

function correlateRecorded(sample: string): { batch: TelemetryBatch; skipped: string[] } {
  const dir = join(RECORDED, sample);
  const [name] = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
  const path = join(dir, name);
  const correlator = new TranscriptCorrelator();
  correlator.readingFromStart(path);
  const skipped: string[] = [];
  let offset = 0;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const parsed = line ? parseTranscriptLine(line) : undefined;
    if (parsed?.ok === true) correlator.add(parsed.entry, { path, kind: 'main' }, offset);
    else if (parsed?.ok === false) skipped.push(`${parsed.type}: ${parsed.reason}`);
    offset += Buffer.byteLength(line) + 1;
  }
  correlator.finish();
  return { batch: encode(correlator.drain()), skipped };
}

const logsNamed = (batch: TelemetryBatch, name: string) => batch.logs.filter((log) => log.eventName === name);

describe('recorded Claude Code 2.1.332', () => {
  it('custom command `/review PR-12` (print mode): one turn named after it, with its answer and its start', () => {
    const { batch, skipped } = correlateRecorded('custom-command');
    expect(skipped).toEqual([]);
    const turns = turnRoots(batch);
    expect(turns.map((t) => [t.attributes['ccotel.prompt'], t.attributes['ccotel.command.name'], t.attributes['ccotel.turn.outcome']])).toEqual([
      ['/review PR-12', '/review', 'completed'],
    ]);
    const [chat] = spansNamed(batch, 'chat ');
    expect(chat.parentSpanId).toBe(turns[0].spanId);
    expect(chat.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 900, 'gen_ai.usage.output_tokens': 11 }); // the script's usage
    expect(logsNamed(batch, 'ccotel.session.started').map((l) => l.attributes.source)).toEqual(['startup']);
  });

  it('interactive: `!` command answered by the model, then accept edits and plan mode', () => {
    const { batch, skipped } = correlateRecorded('bash-mode-and-modes');
    expect(skipped).toEqual([]);
    const turns = turnRoots(batch).sort((a, b) => a.startMs - b.startMs);
    expect(turns.map((t) => [t.attributes['ccotel.prompt'], t.attributes['ccotel.turn.outcome']])).toEqual([
      ['! echo bash-mode-hi', 'completed'],
      ['Write hello into notes.txt', 'completed'],
    ]);
    const [shell] = logsNamed(batch, 'ccotel.shell.command');
    expect(shell.attributes).toMatchObject({ 'process.command_line': 'echo bash-mode-hi', 'ccotel.shell.origin': 'bash_mode' });
    const changes = logsNamed(batch, 'ccotel.permission_mode.changed');
    expect(changes.map((l) => l.attributes['ccotel.permission.mode'])).toEqual(['default', 'acceptEdits', 'plan']);
    // The last switch (plan) is a row without a timestamp after the last turn: it takes that turn's last time.
    expect(changes[2].timeMs).toBe(turns[1].endMs);
    const [write] = spansNamed(batch, 'execute_tool Write');
    expect(write.attributes).toMatchObject({ 'ccotel.tool.outcome': 'success', 'ccotel.permission.mode': 'acceptEdits' });
    expect(turns.map((t) => t.attributes['ccotel.permission.mode'])).toEqual(['default', 'acceptEdits']);
    for (const span of spansNamed(batch, 'chat ')) expect(turns.map((t) => t.spanId)).toContain(span.parentSpanId);
  });
});
