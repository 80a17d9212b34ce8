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
  return correlateFile(join(dir, name));
}

/**
 * One file's rows through the correlator; without `finish`, only what it told while reading (as `run` follows it).
 * `keep` leaves rows out (e.g. those a run without hooks would not have written).
 */
function correlateFile(path: string, finish = true, keep = (_line: string) => true): { batch: TelemetryBatch; skipped: string[] } {
  const correlator = new TranscriptCorrelator();
  correlator.readingFromStart(path);
  const skipped: string[] = [];
  let offset = 0;
  for (const line of readFileSync(path, 'utf8').split('\n').filter(keep)) {
    const parsed = line ? parseTranscriptLine(line) : undefined;
    if (parsed?.ok === true) correlator.add(parsed.entry, { path, kind: 'main' }, offset);
    else if (parsed?.ok === false) skipped.push(`${parsed.type}: ${parsed.reason}`);
    offset += Buffer.byteLength(line) + 1;
  }
  if (finish) correlator.finish();
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

  it('a turn is told at the row that says it is over (stop_hook_summary, turn_duration, cost-state), not at the idle time', () => {
    // Every session of the recorded harness runs (print mode and interactive, ccotel's hooks installed).
    const sessions = ['2.1.332', '2.1.332-interactive'].flatMap((release) => {
      const root = join(import.meta.dirname, '..', '..', '..', '..', 'test', 'fixtures', 'real', release);
      return readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => /projects\/[^/]+\/[^/]+\.jsonl$/.test(f)).map((f) => join(root, f));
    });
    expect(sessions.length).toBeGreaterThan(10);
    const summary = (batch: TelemetryBatch) => turnRoots(batch).map((t) => `${t.spanId} ${t.attributes['ccotel.turn.outcome']} ${t.endMs}`).sort();
    // As recorded (ccotel's hooks configured), and as a run without hooks writes it (no stop_hook_summary).
    const withoutHooks = (line: string) => !line.includes('"subtype":"stop_hook_summary"');
    const toldWhileReading = [() => true, withoutHooks].map((keep) => {
      let told = 0;
      for (const path of sessions) {
        const following = correlateFile(path, false, keep).batch;
        const whole = correlateFile(path, true, keep).batch;
        // A turn told while reading is told exactly as the end of input tells it (an interrupted one, whose
        // cost-state comes before its call's result, waits).
        for (const turn of summary(following)) expect(summary(whole)).toContain(turn);
        told += turnRoots(following).length;
      }
      return told;
    });
    expect(toldWhileReading[0]).toBeGreaterThanOrEqual(15);
    // Print mode without a Stop hook: its cost-state ends the run's turn as well.
    expect(toldWhileReading[1]).toBe(toldWhileReading[0]);
  });
});

