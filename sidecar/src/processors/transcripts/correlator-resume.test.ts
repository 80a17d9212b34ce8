// Resumed runs of older releases (docs/VERSIONS.md gaps B, C and H′): rows shaped like test/fixtures/real/2.1.258/resume,
// 2.1.114/compaction, 2.0.42/resume, 2.0.77/resume and 2.0.20…2.0.29/resume.
import { describe, expect, it } from 'vitest';
import type { TelemetryBatch } from '../../model.js';
import { MAIN, SESSION, assistant, correlate, prompt, spansNamed } from '../../../../test/generators/transcript-rows.js';
import type { TranscriptFile } from '../../records/transcript.js';

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

describe('a resumed 1.0.x / 2.0.0 run appended to the same file', () => {
  const RESUMER = '0b9a5c1e-0000-4000-8000-00000000abcd';
  const summaryFile: TranscriptFile = { path: `/p/${RESUMER}.jsonl`, kind: 'main' };
  const firstRun = () => [prompt('Count the files.'), answer(1)];
  const summaryOf = (rows: { uuid: string }[]) => ({ type: 'summary', summary: 'OK', leafUuid: rows.at(-1)!.uuid });

  it('starts a resume at the prompt after the row a summary-only file names, whichever file is read first (1.0.128)', () => {
    const run = firstRun();
    const rows = [...run, prompt('And what did you find before?'), answer(2)];
    expect(starts(correlate([[summaryFile, [summaryOf(run)]], [MAIN, rows]]))).toEqual(['startup', 'resume']);
    expect(starts(correlate([[MAIN, rows], [summaryFile, [summaryOf(run)]]]))).toEqual(['startup', 'resume']);
  });

  it('takes no resume from the summary atop a copied history (1.0.98 resumes into a new file), nor from a next prompt', () => {
    const run = firstRun();
    const copy = (row: object) => ({ ...row, sessionId: RESUMER });
    const batch = correlate([
      [MAIN, [...run, prompt('A next prompt, same process.'), answer(2)]],
      [summaryFile, [summaryOf(run), ...run.map(copy), copy(prompt('And what did you find before?')), copy(answer(3))]],
    ]);
    expect(starts(batch)).toEqual(['startup', 'resume']);
    expect(batch.logs.filter((log) => log.eventName === 'ccotel.session.started').map((log) => log.attributes['session.id'])).toEqual([SESSION, RESUMER]);
  });
});

describe('the warmups of a resumed 2.0.x run', () => {
  const FRESH = '0b9a5c1e-0000-4000-8000-00000000f7e5';
  const agentFile = (agentId: string): TranscriptFile => ({ path: `/p/agent-${agentId}.jsonl`, kind: 'subagent', agentId });
  const warmupPrompt = (agentId: string, sessionId: string) => ({ ...prompt('Warmup'), agentId, isSidechain: true, sessionId });
  const warmupAnswer = (agentId: string, sessionId: string) => ({
    ...assistant(`msg_w${agentId}`, `req_w${agentId}`, [{ type: 'text', text: 'OK' }], { input_tokens: 7, output_tokens: 1 }, 'end_turn'),
    agentId,
    isSidechain: true,
    sessionId,
  });
  const warmupChats = (batch: TelemetryBatch) => spansNamed(batch, 'chat ').filter((span) => span.attributes['ccotel.agent.id']);
  const conversation = [prompt('Count the files.'), answer(1)];

  it('2.0.42: a warmup under an id that holds no conversation is a chat (its tokens count) of that id, in no turn, with no start', () => {
    const batch = correlate([[agentFile('w1'), [warmupAnswer('w1', FRESH)]], [MAIN, conversation]]);
    const [warmup] = warmupChats(batch);
    expect(warmup.attributes['session.id']).toBe(FRESH);
    expect(warmup.parentSpanId).toBe('');
    const tokens = batch.metrics.filter((point) => point.name === 'ccotel.tokens' && point.spanId === warmup.spanId);
    expect(tokens.map((point) => [point.attributes['gen_ai.token.type'], point.value])).toEqual([['input', 7], ['output', 1]]);
    const started = batch.logs.filter((log) => log.eventName === 'ccotel.session.started').map((log) => log.attributes['session.id']);
    expect(started).toEqual([SESSION]);
  });

  it("2.0.77: a warmup asked under the fresh id and answered under the resumed session's is a chat of that session", () => {
    const batch = correlate([[MAIN, conversation], [agentFile('w2'), [warmupPrompt('w2', FRESH), warmupAnswer('w2', SESSION)]]]);
    expect(warmupChats(batch).map((span) => span.attributes['session.id'])).toEqual([SESSION]);
  });
});

describe('a resumed 2.0.20…2.0.29 run, its Warmup under the new process’s own id (docs/VERSIONS.md gap H′)', () => {
  const PROCESS = '0b9a5c1e-0000-4000-8000-0000000a0002';
  const OTHER = '0b9a5c1e-0000-4000-8000-0000000a0003';
  const cwd = '/tmp/project';
  const row = (made: object, sessionId = SESSION) => ({ ...made, cwd, sessionId });
  const warmup = (sessionId: string, extra: object = {}) => ({ ...prompt('Warmup'), parentUuid: null, isSidechain: true, cwd, sessionId, ...extra });
  const agentFile = (agentId: string): TranscriptFile => ({ path: `/p/agent-${agentId}.jsonl`, kind: 'subagent', agentId });
  const otherFile: TranscriptFile = { path: `/p/${OTHER}.jsonl`, kind: 'main' };

  it('starts a resume at the prompt after a Warmup of another id in agent-*.jsonl, whichever file is read first (2.0.28, 2.0.29)', () => {
    const firstRun = [row(prompt('Count the files.')), row(answer(1))];
    const warmupFiles: [TranscriptFile, object[]][] = ['w1', 'w2'].map((agentId) => [agentFile(agentId), [warmup(PROCESS, { agentId })]]);
    const rows = [...firstRun, row(prompt('And what did you find before?')), row(answer(2))];
    expect(starts(correlate([...warmupFiles, [MAIN, rows]]))).toEqual(['startup', 'resume']);
    expect(starts(correlate([[MAIN, rows], ...warmupFiles]))).toEqual(['startup', 'resume']);
  });

  it('starts a resume at the prompt after an inline Warmup of another id in the session’s own file (2.0.20)', () => {
    const rows = [row(prompt('Count the files.')), row(answer(1)), warmup(PROCESS), row(prompt('And what did you find before?')), row(answer(2))];
    expect(starts(correlate([[MAIN, rows]]))).toEqual(['startup', 'resume']);
  });

  it('takes no resume from a next prompt with no such Warmup, a fresh session’s Warmup, or a Warmup in another directory', () => {
    const next = [row(prompt('one')), row(answer(1)), row(prompt('two')), row(answer(2))];
    expect(starts(correlate([[MAIN, next]]))).toEqual(['startup']);
    const first = [row(prompt('one')), row(answer(1))];
    const fresh = [warmup(OTHER), row(prompt('Another session.'), OTHER), row(answer(3), OTHER)];
    const second = [row(prompt('two')), row(answer(2))];
    expect(starts(correlate([[MAIN, [...first, ...second]], [otherFile, fresh]]))).toEqual(['startup', 'startup']);
    expect(starts(correlate([[otherFile, fresh], [MAIN, [...first, ...second]]]))).toEqual(['startup', 'startup']);
    const elsewhere = [row(prompt('one')), row(answer(1)), warmup(PROCESS, { cwd: '/tmp/elsewhere' }), row(prompt('two')), row(answer(2))];
    expect(starts(correlate([[MAIN, elsewhere]]))).toEqual(['startup']);
  });
});
