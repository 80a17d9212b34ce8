// Resumes that append to the same file without `turnPosition` (2.0.42…2.1.258, docs/VERSIONS.md gap B): rows
// shaped like test/fixtures/real/2.1.258/resume and 2.1.114/compaction.
import { describe, expect, it } from 'vitest';
import type { TelemetryBatch } from '../model.js';
import { MAIN, SESSION, assistant, correlate, prompt } from '../../../test/generators/transcript-rows.js';

const queued = (content?: string) => [
  { type: 'queue-operation', operation: 'enqueue', timestamp: new Date().toISOString(), sessionId: SESSION, ...(content ? { content } : {}) },
  { type: 'queue-operation', operation: 'dequeue', timestamp: new Date().toISOString(), sessionId: SESSION },
];
const answer = (n: number) => assistant(`msg_${n}`, `req_${n}`, [{ type: 'text', text: 'ok' }], { input_tokens: 10, output_tokens: 2 }, 'end_turn');
const starts = (batch: TelemetryBatch) =>
  batch.logs.filter((log) => log.eventName === 'ccotel.session.started').map((log) => log.attributes.source);

describe('a resumed print-mode run appended to the same file', () => {
  it('starts a resume at the first prompt queued after the session started (2.1.258)', () => {
    const print = { entrypoint: 'sdk-cli' };
    const batch = correlate([[MAIN, [
      ...queued('Count the files.'), prompt('Count the files.', print), answer(1),
      { type: 'last-prompt', lastPrompt: 'Count the files.', sessionId: SESSION },
      ...queued('And what did you find before?'), prompt('And what did you find before?', print), answer(2),
    ]]]);
    expect(starts(batch)).toEqual(['startup', 'resume']);
  });

  it('starts a resume at the summary of a run that only compacts, and at the prompt of the next run (2.1.114)', () => {
    const batch = correlate([[MAIN, [
      ...queued(), prompt('List the project.'), answer(1),
      ...queued('/compact'),
      { ...prompt('This session is being continued from a previous conversation that ran out of context.'), isCompactSummary: true },
      prompt('<command-name>/compact</command-name>\n<command-message>compact</command-message>\n<command-args></command-args>'),
      prompt('<local-command-stdout>Compacted</local-command-stdout>'),
      ...queued('Was it empty?'), prompt('Was it empty?'), answer(2),
    ]]]);
    expect(starts(batch)).toEqual(['startup', 'resume', 'resume']);
  });

  it('takes no resume from a prompt typed while Claude worked in interactive use, nor from numbered prompts', () => {
    const interactive = correlate([[MAIN, [prompt('one', { entrypoint: 'cli' }), answer(1), ...queued('two'), prompt('two', { entrypoint: 'cli' }), answer(2)]]]);
    expect(starts(interactive)).toEqual(['startup']);
    const numbered = correlate([[MAIN, [
      ...queued(), prompt('one', { turnPosition: { promptIndex: 1, turnIndex: 1 } }), answer(1),
      ...queued(), prompt('two', { turnPosition: { promptIndex: 0, turnIndex: 2 } }), answer(2),
    ]]]);
    expect(starts(numbered)).toEqual(['startup', 'resume']);
  });
});
