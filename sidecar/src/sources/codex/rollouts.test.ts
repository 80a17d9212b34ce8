import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { compareVersions } from '../../../../test/harness/claude-releases.js';
import { codexFixtures, codexTuiFixtures, type CodexFixture } from '../../../../test/harness/codex-fixtures.js';
import type { ChatCompleted, CorrelationEvent, ToolCallEnded, TurnEnded } from '../../events.js';
import { CodexRollouts, toolOutcome } from './rollouts.js';
import { Pipeline } from '../../pipeline.js';
import { TranscriptCorrelator } from '../../processors/transcripts/correlator.js';
import { METRICS } from '../../semconv.js';
import { textLines } from '../line-reader.js';
import { MemorySink } from '../../../../test/helpers/memory-sink.js';

function readAll(fixture: Pick<CodexFixture, 'rollouts'>, rollouts = new CodexRollouts()): CorrelationEvent[] {
  for (const path of fixture.rollouts) {
    rollouts.readingFromStart(path);
    for (const line of readFileSync(path, 'utf8').split('\n')) if (line) rollouts.add(line, { path, kind: 'main', agent: 'codex' });
  }
  rollouts.finish();
  return rollouts.drain();
}

// The releases that first wrote these rows (bisected on the recording scenario between 0.130.0 and 0.150.0).
/** `thread_settings_applied`, which tells an `exec resume` (0.143.0 writes none). */
const FIRST_SETTINGS_ROW = '0.144.0';
/** `item_completed` for every command that ran (0.147.0 writes none). */
const FIRST_ITEMS = '0.148.0';

const ofKind = <K extends CorrelationEvent['kind']>(events: CorrelationEvent[], kind: K) => events.filter((event): event is Extract<CorrelationEvent, { kind: K }> => event.kind === kind);

describe.each(codexFixtures())('Codex $version rollouts', (fixture) => {
  const events = readAll(fixture);
  const chats = ofKind(events, 'ChatCompleted');
  const turns = ofKind(events, 'TurnEnded');
  const tools = ofKind(events, 'ToolCallEnded');
  // A subagent is a thread of its own: the one a run's spawn_agent call's output names.
  const subagentOf = (run: number) => /"agent_id":"([^"]+)"/.exec(
    tools.find((call) => call.sessionId === fixture.threads[run] && call.toolName === 'spawn_agent' && turns.some((turn) => turn.spanId === call.parentSpanId && turn.promptText === fixture.runs[run].prompt))?.output ?? '',
  )?.[1];
  const asTokens = ({ usage }: CodexFixture['runs'][number]['steps'][number]) =>
    ({ input: usage.input_tokens - usage.cached_input_tokens, output: usage.output_tokens, cache_read: usage.cached_input_tokens, cache_creation: 0 });

  it('tell one chat per response the server gave, with that response’s own usage, in order, a subagent’s in its thread', () => {
    const steps = fixture.runs.flatMap((run) => run.steps);
    expect(chats).toHaveLength(steps.length);
    // A thread's runs follow each other in its file (a resume appends): its chats are the steps of its runs in order.
    for (const thread of new Set(fixture.threads)) {
      const answered = fixture.runs.filter((_, n) => fixture.threads[n] === thread).flatMap((run) => run.steps.filter((step) => !step.subagent));
      expect(chats.filter((chat) => chat.sessionId === thread).map((chat) => chat.tokens)).toEqual(answered.map(asTokens));
    }
    const spawning = fixture.runs.flatMap((run, n) => (run.steps.some((step) => step.subagent) ? [n] : []));
    expect(spawning.length).toBeGreaterThan(0);
    for (const n of spawning) {
      expect(chats.filter((chat) => chat.sessionId === subagentOf(n)).map((chat) => chat.tokens)).toEqual(fixture.runs[n].steps.filter((step) => step.subagent).map(asTokens));
    }
    expect(new Set(chats.map((chat) => chat.spanId)).size).toBe(chats.length);
    expect(chats.every((chat) => chat.agent === 'codex' && chat.model === 'gpt-5.1-codex')).toBe(true);
  });

  it('sum per thread to the total the CLI printed last, less the parent’s of a fork (its turn.completed is cumulative across resumes and forks)', () => {
    const printed = (run: number) => fixture.printed[run].find((event) => event.type === 'turn.completed')?.usage as Record<string, number>;
    // An interrupted run prints no total (its chats are checked against the server above).
    for (const thread of new Set(fixture.threads.filter((_, n) => fixture.runs[n].interruptAfterMs === undefined))) {
      const first = fixture.threads.indexOf(thread);
      const forked = fixture.runs[first].forks;
      // A fork's count goes on from its parent's total at the fork: the last run of the parent before it.
      const base = forked === undefined ? undefined : printed(fixture.threads.lastIndexOf(fixture.threads[forked], first - 1));
      const last = printed(fixture.threads.lastIndexOf(thread));
      const own = (key: string) => last[key] - (base?.[key] ?? 0);
      const mine = chats.filter((chat) => chat.sessionId === thread);
      const sum = (pick: (chat: ChatCompleted) => number) => mine.reduce((total, chat) => total + pick(chat), 0);
      expect(sum((chat) => chat.tokens.input + chat.tokens.cache_read)).toBe(own('input_tokens'));
      expect(sum((chat) => chat.tokens.cache_read)).toBe(own('cached_input_tokens'));
      expect(sum((chat) => chat.tokens.output)).toBe(own('output_tokens'));
    }
  });

  it('tell a turn per run with its prompt, completed or interrupted, a subagent’s turn in its thread, and one start per thread', () => {
    const mains = new Set(fixture.threads);
    expect(turns.filter((turn) => mains.has(turn.sessionId)).map((turn: TurnEnded) => [turn.sessionId, turn.promptText, turn.outcome])).toEqual(
      fixture.runs.map((run, n) => [fixture.threads[n], run.prompt, run.interruptAfterMs === undefined ? 'completed' : 'interrupted']),
    );
    const subagents = fixture.runs.flatMap((run, n) => (run.steps.some((step) => step.subagent) ? [subagentOf(n)!] : []));
    expect(turns.filter((turn) => !mains.has(turn.sessionId)).map((turn) => [turn.sessionId, turn.outcome])).toEqual(subagents.map((thread) => [thread, 'completed']));
    const starts = ofKind(events, 'SessionStarted').map((start) => [start.sessionId, start.source]);
    expect(starts.filter(([thread]) => !mains.has(thread))).toEqual(subagents.map((thread) => [thread, 'subagent']));
    // A chat is under its turn, or (a subagent's first turn) under the subagent's span.
    const spans = [...turns, ...ofKind(events, 'SubagentEnded')];
    for (const chat of chats) expect(spans.some((span) => span.spanId === chat.parentSpanId && span.traceId === chat.traceId)).toBe(true);
  });

  it('tell a start per run: startup or fork where a thread begins, resume where `exec resume` took it up again (from 0.144: its thread_settings_applied)', () => {
    const resumesSeen = compareVersions(fixture.version, FIRST_SETTINGS_ROW) >= 0;
    const expected = fixture.runs.flatMap((run, n): string[][] => {
      if (run.resumes !== undefined) return resumesSeen ? [[fixture.threads[n], 'resume']] : [];
      return [[fixture.threads[n], run.forks === undefined ? 'startup' : 'fork']];
    });
    const mains = new Set(fixture.threads);
    const starts = ofKind(events, 'SessionStarted').filter((start) => mains.has(start.sessionId));
    expect(starts.map((start) => [start.sessionId, start.source])).toEqual(expected);
    // A resume's start is at its run's turn: the one with the run's prompt.
    for (const start of starts.filter((s) => s.source === 'resume')) {
      expect(turns.find((turn) => turn.messageUuid === start.messageUuid)?.promptText).toBe(fixture.runs.find((run) => run.resumes !== undefined)?.prompt);
    }
  });

  it('tell each command with the outcome of the exit code the CLI printed for it, or as interrupted with its run; the agent tools as done', () => {
    const printedCommands = fixture.printed.flat().filter((event) => event.type === 'item.completed' && (event.item as { type: string }).type === 'command_execution').map((event) => event.item as { command: string; exit_code: number });
    expect(tools).toHaveLength(fixture.runs.flatMap((run) => run.steps.flatMap((step) => step.calls ?? [])).length);
    const agentTools = tools.filter((call) => call.toolName !== 'exec_command');
    expect(agentTools.map((call) => [call.toolName, call.outcome])).toEqual([['spawn_agent', 'success'], ['wait_agent', 'success']]);
    for (const call of tools.filter((c) => c.toolName === 'exec_command')) {
      const cmd = (call.input as { cmd: string }).cmd;
      const printed = printedCommands.find((command) => command.command.includes(`'${cmd}'`));
      const interrupted = fixture.runs.some((run) => run.interruptAfterMs !== undefined && run.steps.some((step) => step.calls?.some((c) => c.arguments.cmd === cmd)));
      // 0.130 printed no completion for the command after wait_agent: the e2e test checks it by the rollout's exit code.
      if (!printed && !interrupted) continue;
      expect(call.outcome, cmd).toBe(interrupted ? 'interrupted' : printed!.exit_code === 0 ? 'success' : 'error');
      expect(call.toolName).toBe('exec_command');
      expect(turns.some((turn) => turn.spanId === call.parentSpanId)).toBe(true);
    }
    expect(tools.some((call: ToolCallEnded) => call.outcome === 'error')).toBe(true);
  });

  it('tell the interrupted command interrupted even when Codex exited before writing its item (seen on a loaded machine): exec asks no approval, so nothing was declined', () => {
    const interrupted = tools.find((call) => (call.input as { cmd?: string }).cmd === 'sleep 30')!;
    expect(interrupted.outcome).toBe('interrupted');
    const dir = mkdtempSync(join(tmpdir(), 'ccotel-rollout-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const withoutItem = fixture.rollouts.map((path) => {
      const lines = readFileSync(path, 'utf8').split('\n').filter((line) => !(line.includes('"item_') && line.includes(`"id":"${interrupted.toolUseId}"`)));
      const copy = join(dir, basename(path));
      writeFileSync(copy, lines.join('\n'));
      return copy;
    });
    const again = ofKind(readAll({ rollouts: withoutItem }), 'ToolCallEnded').find((call) => call.toolUseId === interrupted.toolUseId)!;
    expect([again.outcome, again.blockedBy]).toEqual(['interrupted', undefined]);
  });

  it('tell a subagent’s first turn as its span under the spawn_agent call, whichever file is read first', () => {
    const spawning = fixture.runs.findIndex((run) => run.steps.some((step) => step.subagent));
    const thread = subagentOf(spawning)!;
    const spawn = tools.find((call) => call.toolName === 'spawn_agent')!;
    const own = turns.find((turn) => turn.sessionId === thread)!;
    const told = ofKind(events, 'SubagentEnded');
    expect(told).toEqual([{
      kind: 'SubagentEnded', agent: 'codex', traceId: spawn.traceId, spanId: expect.any(String), parentSpanId: spawn.spanId, sessionId: spawn.sessionId,
      agentId: thread, agentType: 'default', toolUseId: spawn.toolUseId, startMs: own.startMs, endMs: own.endMs,
    }]);
    // Its chats and calls are in the parent's trace, under its span, whichever file is read first.
    const nested = (all: CorrelationEvent[]) => [...ofKind(all, 'ChatCompleted'), ...ofKind(all, 'ToolCallEnded')].filter((item) => item.sessionId === thread);
    expect(nested(events).length).toBe(fixture.runs[spawning].steps.filter((step) => step.subagent).length);
    for (const item of nested(events)) expect([item.traceId, item.parentSpanId, item.agentId]).toEqual([spawn.traceId, told[0].spanId, thread]);
    const reversed = readAll({ ...fixture, rollouts: [...fixture.rollouts].reverse() });
    expect(ofKind(reversed, 'SubagentEnded')).toEqual(told);
    const byId = (all: CorrelationEvent[]) => nested(all).sort((a, b) => a.spanId.localeCompare(b.spanId));
    expect(byId(reversed)).toEqual(byId(events));
  });

  it('tell a subagent’s items in its own turn’s trace when its spawn call is never read (the parent’s file gone)', () => {
    const spawning = fixture.runs.findIndex((run) => run.steps.some((step) => step.subagent));
    const thread = subagentOf(spawning)!;
    const alone = readAll({ ...fixture, rollouts: fixture.rollouts.filter((path) => path.endsWith(`${thread}.jsonl`)) });
    const own = ofKind(alone, 'TurnEnded')[0];
    const items = [...ofKind(alone, 'ChatCompleted'), ...ofKind(alone, 'ToolCallEnded')];
    expect(items.length).toBeGreaterThan(0);
    for (const item of items) expect([item.traceId, item.parentSpanId, item.agentId]).toEqual([own.traceId, own.spanId, undefined]);
  });

  it('ask a restart to read a held thread’s file from its start, and tell a start only where its session_meta is read', () => {
    const rollouts = new CodexRollouts();
    const path = fixture.rollouts[0];
    const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    const file = { path, kind: 'main' as const, agent: 'codex' as const };
    for (const line of lines) rollouts.add(line, file);
    rollouts.closeIdle(Number.POSITIVE_INFINITY);
    expect(rollouts.oldestOpenOffsets()).toEqual(new Map([[path, 0]]));
    // Its rows from the first turn on, as a read from the middle of the file (a resume appended after a restart) sees them.
    const later = new CodexRollouts();
    for (const line of lines.slice(lines.findIndex((line) => line.includes('"task_started"')))) later.add(line, file);
    later.finish();
    const events = later.drain();
    expect(ofKind(events, 'SessionStarted')).toEqual([]);
    expect(ofKind(events, 'TurnEnded')).toHaveLength(1);
  });

  it('tell the same items with the same ids when read again', () => {
    const rollouts = new CodexRollouts();
    readAll(fixture, rollouts);
    // Read again by the same source, a subagent's span may come as soon as its spawn call is read (its run is known).
    const inOrder = (told: CorrelationEvent[]) => told.map((event) => JSON.stringify(event)).sort();
    expect(inOrder(readAll(fixture, rollouts))).toEqual(inOrder(events));
    expect(readAll(fixture)).toEqual(events);
  });
});

// The TUI session with approvals (codex-tui.ts): a plain prompt, an escalation the user declined (Esc), one approved (y),
// one approved and then interrupted while it ran (Esc).
describe.each(codexTuiFixtures())('Codex $version TUI session with approvals', (fixture) => {
  const events = readAll(fixture);
  const tools = ofKind(events, 'ToolCallEnded');
  const [, declinedStep, approvedStep, , cutStep] = fixture.answered;
  const declined = tools.find((call) => call.toolUseId === declinedStep.callIds[0])!;
  const approved = tools.find((call) => call.toolUseId === approvedStep.callIds[0])!;
  const cut = tools.find((call) => call.toolUseId === cutStep.callIds[0])!;
  const payloads = fixture.hooks.map((hook) => hook.payload);
  const hooksOf = (callId: string) => {
    const pre = payloads.find((hook) => hook.hook_event_name === 'PreToolUse' && hook.tool_use_id === callId)!;
    const command = (pre.tool_input as { command: string }).command;
    // PermissionRequest names no call: the one of the same turn asking for the same command.
    const asked = payloads.some((hook) => hook.hook_event_name === 'PermissionRequest' && hook.turn_id === pre.turn_id && (hook.tool_input as { command?: string }).command === command);
    return { command, asked, ran: payloads.some((hook) => hook.hook_event_name === 'PostToolUse' && hook.tool_use_id === callId) };
  };

  it('agree with the hooks and the screen on what the user decided: asked for each, one declined, one run, one run and cut short', () => {
    expect(hooksOf(declined.toolUseId)).toEqual({ command: 'touch declined.txt', asked: true, ran: false });
    expect(hooksOf(approved.toolUseId)).toEqual({ command: 'touch approved.txt', asked: true, ran: true });
    // Interrupted while it ran: its hooks are those of the refusal (no PostToolUse).
    expect(hooksOf(cut.toolUseId)).toEqual({ command: 'touch started.txt && sleep 30', asked: true, ran: false });
    expect(fixture.screens).toContain('You canceled the request to run touch declined.txt');
    expect(fixture.screens).toContain('You approved codex to run touch approved.txt');
    expect(fixture.screens).toContain('You approved codex to run touch started.txt && sleep 30');
    expect(fixture.screens).toContain('Conversation interrupted');
  });

  it('tell the approved call a success and the declined one denied by the user where the rollout can tell (it never ran), else left to the hooks', () => {
    expect(approved).toMatchObject({ toolName: 'exec_command', shellCommand: 'touch approved.txt', outcome: 'success' });
    expect(approved.blockedBy).toBeUndefined();
    expect(declined).toMatchObject({ toolName: 'exec_command', shellCommand: 'touch declined.txt' });
    // Every release writes "aborted by user" for it, as for Ctrl-C during a command; from 0.148 Codex writes an item for each
    // command that ran (the interrupted one of the exec fixture has one), so one without was declined.
    expect(declined.output).toMatch(/aborted by user/);
    const itemsWritten = compareVersions(fixture.version, FIRST_ITEMS) >= 0;
    expect([declined.outcome, declined.blockedBy, declined.refusalUnknown]).toEqual(itemsWritten ? ['denied', 'user', undefined] : ['interrupted', undefined, true]);
    expect(declined.refusalInferred).toBe(itemsWritten ? true : undefined);
    // The one cut short says the same "aborted by user"; its item (from 0.148) tells it ran.
    expect(cut.output).toMatch(/aborted by user/);
    expect([cut.outcome, cut.blockedBy, cut.refusalUnknown]).toEqual(itemsWritten ? ['interrupted', undefined, undefined] : ['interrupted', undefined, true]);
  });

  it('tell four turns of one session started once (the TUI’s settings row before each turn is no resume), a chat per answer', () => {
    const turns = ofKind(events, 'TurnEnded');
    expect(turns.map((turn) => [turn.promptText, turn.outcome])).toEqual([
      ['say hello', 'completed'],
      ['make declined.txt', 'interrupted'],
      ['make approved.txt', 'completed'],
      ['make started.txt slowly', 'interrupted'],
    ]);
    expect(ofKind(events, 'SessionStarted').map((start) => start.source)).toEqual(['startup']);
    const steps = fixture.scenario.flatMap((prompt) => prompt.steps);
    expect(ofKind(events, 'ChatCompleted').map((chat) => chat.tokens.output)).toEqual(steps.map((step) => step.usage.output_tokens));
  });
});

describe('Codex rollout lines', () => {
  const file = { path: '/x/sessions/2026/01/01/rollout-2026-01-01T00-00-00-01a242e6-0000-7000-8000-000000000001.jsonl', kind: 'main' as const, agent: 'codex' as const };

  it('are Codex’s in every point, even of a thread closed and let go at once (a backfill reaching a day later)', async () => {
    const sink = new MemorySink();
    const pipeline = new Pipeline(new TranscriptCorrelator(), [], [sink], [], { codex: new CodexRollouts() });
    const row = (payload: object) => JSON.stringify({ timestamp: '2026-01-01T00:00:00Z', type: payload === turn ? 'event_msg' : 'response_item', payload });
    const turn = { type: 'task_started', turn_id: 't1' };
    // A call its turn never answered: told as the turn closes, in the same pass that lets the thread go.
    const call = { type: 'function_call', name: 'exec_command', call_id: 'call_1', arguments: '{"cmd":"sleep 9"}' };
    await pipeline.addLines(file, textLines([row(turn), row(call)]));
    pipeline.closeIdle(Date.parse('2026-01-03T00:00:00Z'));
    await pipeline.finish();
    const agents = sink.received.metrics.filter((point) => point.name === METRICS.toolCalls.name).map((point) => [point.attributes.outcome, point.attributes['gen_ai.agent.name']]);
    expect(agents).toEqual([['unanswered', 'codex']]);
  });

  it('count a bad line as skipped and go on', () => {
    const rollouts = new CodexRollouts();
    expect(rollouts.add('{"timestamp":', file)).toEqual({ ok: false, reason: 'malformed_json' });
    expect(rollouts.add('[1,2]', file)).toEqual({ ok: false, reason: 'not_object' });
    expect(rollouts.add('{"type":"event_msg","payload":{}}', file)).toMatchObject({ ok: false, reason: 'missing_fields' });
    expect(rollouts.add('{"timestamp":"2026-01-01T00:00:00Z","type":"something_new","payload":{}}', file)).toEqual({ ok: 'ignored' });
    const token = (total: number) => JSON.stringify({ timestamp: '2026-01-01T00:00:01Z', type: 'event_msg', payload: { type: 'token_count', info: { total_token_usage: { input_tokens: total, output_tokens: 'many' }, last_token_usage: { input_tokens: -1 } } } });
    rollouts.add('{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t1"}}', file);
    rollouts.add('{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[]}}', file);
    expect(rollouts.add(token(5), file)).toMatchObject({ ok: true });
    rollouts.finish();
    const events = rollouts.drain();
    expect(ofKind(events, 'ChatCompleted')).toHaveLength(0); // a usage that is no usage is no response
    expect(ofKind(events, 'TurnEnded').map((turn) => [turn.outcome, turn.promptSeen])).toEqual([['abandoned', false]]);
    expect(ofKind(events, 'TurnEnded')[0].sessionId).toBe('01a242e6-0000-7000-8000-000000000001');
  });

  it('read the outcome of a call from its output', () => {
    expect(toolOutcome('Chunk ID: 1\nProcess exited with code 0\nOutput:\nok')).toEqual({ outcome: 'success' });
    expect(toolOutcome('Process exited with code 2\n')).toEqual({ outcome: 'error' });
    expect(toolOutcome('Process exited with code -1\n')).toEqual({ outcome: 'interrupted' });
    // "aborted by user": an interrupt or a declined escalation; told apart by whether the command ran, where known.
    expect(toolOutcome('aborted by user after 2.6s')).toEqual({ outcome: 'interrupted', refusalUnknown: true });
    expect(toolOutcome('Wall time: 2.6 seconds\naborted by user', 'ran')).toEqual({ outcome: 'interrupted' });
    expect(toolOutcome('Wall time: 2.6 seconds\naborted by user', 'never_ran')).toEqual({ outcome: 'denied', blockedBy: 'user', refusalInferred: true });
    expect(toolOutcome('{"output":"x","metadata":{"exit_code":1,"duration_seconds":0.1}}')).toEqual({ outcome: 'error' });
    expect(toolOutcome('Success. Updated the following files:\nM a.txt')).toEqual({ outcome: 'success' });
  });
});
