import { describe, expect, it } from 'vitest';
import type { TelemetryBatch } from '../../model.js';
import {
  MAIN, SESSION, advanceClock, assistant, base, correlate, prompt, result, spansNamed, toolUse, turnRoots,
} from '../../../../test/generators/transcript-rows.js';

describe('TranscriptCorrelator', () => {
  it('counts one chat span per API response written as several rows, with the last row usage', () => {
    const batch = correlate([
      [MAIN, [
        prompt('hello'),
        assistant('msg_a', 'req_a', [{ type: 'thinking', thinking: '…' }], { input_tokens: 10, output_tokens: 1 }),
        assistant('msg_a', 'req_a', [{ type: 'text', text: 'hi' }], { input_tokens: 10, output_tokens: 7, cache_read_input_tokens: 3 }, 'end_turn'),
      ]],
    ]);
    const chats = spansNamed(batch, 'chat ');
    expect(chats).toHaveLength(1);
    expect(chats[0].attributes).toMatchObject({
      'gen_ai.response.id': 'msg_a',
      request_id: 'req_a',
      // As the GenAI conventions count input (cache reads included), and the provider's uncached part.
      'gen_ai.usage.input_tokens': 13,
      'ccotel.usage.uncached.input_tokens': 10,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.usage.cache_read.input_tokens': 3,
    });
    expect(chats[0].parentSpanId).toBe(turnRoots(batch)[0].spanId);
    const outputTokens = batch.metrics.filter((p) => p.name === 'ccotel.tokens' && p.attributes['gen_ai.token.type'] === 'output');
    expect(outputTokens.map((p) => p.value)).toEqual([7]);
  });

  it('pairs tool results by id even when they arrive out of order, with their outcomes', () => {
    const batch = correlate([
      [MAIN, [
        prompt('do things'),
        assistant('msg_b', 'req_b', [toolUse('toolu_1', 'Bash', { command: 'ls' })], { output_tokens: 1 }),
        assistant('msg_b', 'req_b', [toolUse('toolu_2', 'Read', { file_path: '/x' })], { output_tokens: 2 }, 'tool_use'),
        result('toolu_2', '<tool_use_error>File does not exist.</tool_use_error>', true),
        result('toolu_1', 'a\nb', false, { stdout: 'a\nb', interrupted: false }),
        assistant('msg_c', 'req_c', [{ type: 'text', text: 'done' }], { output_tokens: 3 }, 'end_turn'),
      ]],
    ]);
    const tools = Object.fromEntries(spansNamed(batch, 'execute_tool ').map((s) => [s.attributes['gen_ai.tool.call.id'], s]));
    expect(tools.toolu_1.attributes).toMatchObject({ 'gen_ai.tool.name': 'Bash', 'ccotel.tool.outcome': 'success', tool_use_id: 'toolu_1' });
    expect(tools.toolu_2.attributes).toMatchObject({ 'gen_ai.tool.name': 'Read', 'ccotel.tool.outcome': 'error' });
    expect(tools.toolu_2.status).toBe('error');
    expect(turnRoots(batch)[0].attributes['ccotel.turn.outcome']).toBe('completed');
  });

  it('tells denials by wording and counts them as permission blocks by source', () => {
    const batch = correlate([
      [MAIN, [
        prompt('delete it'),
        assistant('msg_d', 'req_d', [toolUse('toolu_3', 'Bash', { command: 'rm x' }), toolUse('toolu_4', 'Write', {})], { output_tokens: 1 }, 'tool_use'),
        result('toolu_3', "Error: rm in '/tmp/x' needs approval. The path is inside the working directories", true, "Error: rm in '/tmp/x' needs approval."),
        result('toolu_4', "The user doesn't want to proceed with this tool use. The tool use was rejected", true),
        assistant('msg_e', 'req_e', [{ type: 'text', text: 'ok' }], { output_tokens: 1 }, 'end_turn'),
      ]],
    ]);
    const outcomes = spansNamed(batch, 'execute_tool ').map((s) => s.attributes['ccotel.tool.outcome']);
    expect(outcomes).toEqual(['denied', 'denied']);
    const blocks = batch.logs.filter((l) => l.eventName === 'ccotel.permission.blocked').map((l) => l.attributes.source).sort();
    expect(blocks).toEqual(['rule', 'user']);
    expect(batch.metrics.filter((p) => p.name === 'ccotel.permission.blocks')).toHaveLength(2);
  });

  it('reads the structured permission decision of newer Claude Code, whatever the wording', () => {
    const batch = correlate([
      [MAIN, [
        prompt('try'),
        assistant('msg_p', 'req_p', [toolUse('toolu_p', 'Bash')], { output_tokens: 1 }, 'tool_use'),
        result('toolu_p', 'Some future wording', true, 'Error: Some future wording', { permissionDecision: { decision: 'reject', source: 'hook' } }),
      ]],
    ]);
    expect(spansNamed(batch, 'execute_tool ')[0].attributes['ccotel.tool.outcome']).toBe('denied');
    expect(batch.logs.find((l) => l.eventName === 'ccotel.permission.blocked')?.attributes.source).toBe('hook');
  });

  it('2.1.332: an interactive "No" is denied by the user; the same text on a call cut short while it ran is interrupted', () => {
    // The row fields of the recorded samples (interactive deny, print-mode and interactive interrupt, auto mode).
    const rejected = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file).";
    const batch = correlate([
      [MAIN, [
        prompt('three calls'),
        assistant('msg_r', 'req_r', ['toolu_no', 'toolu_cut', 'toolu_auto'].map((id) => toolUse(id, 'Bash')), { output_tokens: 1 }, 'tool_use'),
        result('toolu_no', rejected, true, 'User rejected tool use', { toolDenialKind: 'user-rejected', toolDenialBeforeRun: true }),
        result('toolu_cut', rejected, true, 'User rejected tool use', { toolDenialKind: 'user-rejected' }),
        result('toolu_auto', "Bash was not run: auto mode's safety check does not run for this session", true, 'Error: Bash was not run', {
          toolDenialKind: 'automode-unavailable',
          permissionDecision: { decision: 'reject', source: 'config', reasonType: 'classifier', reasonCode: 'classifier:auto-mode:unavailable' },
        }),
      ]],
    ]);
    const outcomes = Object.fromEntries(spansNamed(batch, 'execute_tool ').map((s) => [s.attributes.tool_use_id, s.attributes['ccotel.tool.outcome']]));
    expect(outcomes).toEqual({ toolu_no: 'denied', toolu_cut: 'interrupted', toolu_auto: 'denied' });
    const blocks = batch.logs.filter((l) => l.eventName === 'ccotel.permission.blocked').map((l) => [l.attributes.tool_use_id, l.attributes.source]);
    expect(blocks.sort()).toEqual([['toolu_auto', 'classifier'], ['toolu_no', 'user']]);
  });

  it('counts a call stopped by a PreToolUse hook (exit 2) as blocked by the hook', () => {
    const blockRow = { ...base(), type: 'attachment', attachment: { type: 'hook_blocking_error', blockingError: { blockingError: 'no rm', command: 'guard.sh' }, hookName: 'PreToolUse:Bash', toolUseID: 'toolu_h', hookEvent: 'PreToolUse' } };
    const batch = correlate([
      [MAIN, [
        prompt('clean up'),
        assistant('msg_hb', 'req_hb', [toolUse('toolu_h', 'Bash', { command: 'rm -rf build' })], { output_tokens: 1 }, 'tool_use'),
        blockRow,
        result('toolu_h', 'PreToolUse:Bash hook error: no rm', true),
        assistant('msg_hc', 'req_hc', [{ type: 'text', text: 'blocked' }], { output_tokens: 1 }, 'end_turn'),
      ]],
    ]);
    expect(spansNamed(batch, 'execute_tool ')[0].attributes['ccotel.tool.outcome']).toBe('denied');
    expect(batch.logs.find((l) => l.eventName === 'ccotel.permission.blocked')?.attributes.source).toBe('hook');
  });

  it('derives turn outcomes: interrupted, API error, abandoned with an unanswered call', () => {
    const batch = correlate([
      [MAIN, [
        prompt('first'),
        assistant('msg_f', 'req_f', [toolUse('toolu_5', 'Bash')], { output_tokens: 1 }, 'tool_use'),
        result('toolu_5', '[Request interrupted by user for tool use]', true, { interrupted: true }),
        prompt('[Request interrupted by user for tool use]'),
        prompt('second'),
        assistant('msg_g', '', [{ type: 'text', text: 'API Error: 500' }], {}, 'stop_sequence', { isApiErrorMessage: true, message: { model: '<synthetic>', role: 'assistant', content: [{ type: 'text', text: 'API Error' }] } }),
        prompt('third'),
        assistant('msg_h', 'req_h', [toolUse('toolu_6', 'Grep')], { output_tokens: 1 }, 'tool_use'),
      ]],
    ]);
    const outcomes = turnRoots(batch)
      .sort((a, b) => a.startMs - b.startMs)
      .map((s) => s.attributes['ccotel.turn.outcome']);
    expect(outcomes).toEqual(['interrupted', 'error', 'abandoned']);
    const toolOutcomes = Object.fromEntries(spansNamed(batch, 'execute_tool ').map((s) => [s.attributes.tool_use_id, s.attributes['ccotel.tool.outcome']]));
    expect(toolOutcomes).toEqual({ toolu_5: 'interrupted', toolu_6: 'unanswered' });
    expect(spansNamed(batch, 'chat ')).toHaveLength(2); // the API error row is not a response
  });

  it('does not start turns on meta rows, command echoes, compaction summaries or system reminders', () => {
    const batch = correlate([
      [MAIN, [
        prompt('<command-name>/clear</command-name>'),
        prompt('<local-command-stdout></local-command-stdout>'),
        prompt('Caveat: …', { isMeta: true }),
        prompt('This session is being continued from a previous conversation that ran out of context.', { isCompactSummary: true }),
        prompt('real question'),
      ]],
    ]);
    expect(turnRoots(batch)).toHaveLength(1);
    expect(turnRoots(batch)[0].attributes['ccotel.prompt']).toBe('real question');
  });

  it('reports a replay of history into another file once, and marks the new session as a resume', () => {
    const original = [
      prompt('build it'),
      assistant('msg_r', 'req_r', [toolUse('toolu_r', 'Bash')], { input_tokens: 5, output_tokens: 5 }, 'tool_use'),
      result('toolu_r', 'ok'),
      assistant('msg_s', 'req_s', [{ type: 'text', text: 'built' }], { output_tokens: 2 }, 'end_turn'),
    ];
    const resumed = '0b9a5c1e-0000-4000-8000-000000000002';
    // Old-style resume: a new file and session id that first copies the history (fresh uuids, same ids and times).
    const replay = original.map((row, i) => ({ ...row, uuid: `replay-${i}`, sessionId: resumed }));
    advanceClock(60_000);
    const next = [{ ...prompt('and test it'), sessionId: resumed }, { ...assistant('msg_t', 'req_t', [{ type: 'text', text: 'tested' }], { output_tokens: 4 }, 'end_turn'), sessionId: resumed }];
    const batch = correlate([
      [MAIN, original],
      [{ path: '/p/resumed.jsonl', kind: 'main' }, [...replay, ...next]],
    ]);
    expect(turnRoots(batch)).toHaveLength(2);
    expect(spansNamed(batch, 'chat ')).toHaveLength(3);
    expect(spansNamed(batch, 'execute_tool ')).toHaveLength(1);
    const starts = batch.logs.filter((l) => l.eventName === 'ccotel.session.started').map((l) => [l.attributes['session.id'], l.attributes.source]);
    expect(starts).toEqual([[SESSION, 'startup'], [resumed, 'resume']]);
  });

  it('recognises the resume copies of 1.0.x (restamped times, uuids kept or renewed, request ids dropped)', () => {
    const original = [
      prompt('count the files'),
      assistant('msg_y', 'req_y', [toolUse('toolu_y', 'Bash')], { input_tokens: 5, output_tokens: 5 }, 'tool_use'),
      result('toolu_y', '0'),
      assistant('msg_z', 'req_z', [{ type: 'text', text: 'none' }], { output_tokens: 2 }, 'end_turn'),
    ];
    advanceClock(60_000);
    const copyTime = new Date(Date.parse((base() as { timestamp: string }).timestamp)).toISOString();
    const copies = ['1.0.98', '1.0.24'].map((style, n) => {
      const sessionId = `0b9a5c1e-0000-4000-8000-00000000010${n}`;
      const copy = original.map((row) => {
        const { requestId: _dropped, ...rest } = row as Record<string, unknown>;
        return { ...rest, sessionId, timestamp: copyTime, uuid: style === '1.0.98' ? rest.uuid : `${rest.uuid}-${n}` };
      });
      const next = [{ ...prompt('and then?'), sessionId }, { ...assistant(`msg_next${n}`, `req_next${n}`, [{ type: 'text', text: 'nothing' }], { output_tokens: 4 }, 'end_turn'), sessionId }];
      return [{ path: `/p/${sessionId}.jsonl`, kind: 'main' } as const, [...copy, ...next]] as [typeof MAIN, object[]];
    });
    const batch = correlate([[MAIN, original], ...copies]);
    expect(turnRoots(batch)).toHaveLength(3);
    expect(spansNamed(batch, 'chat ')).toHaveLength(4);
    const starts = batch.logs.filter((l) => l.eventName === 'ccotel.session.started').map((l) => l.attributes.source);
    expect(starts).toEqual(['startup', 'resume', 'resume']);
  });

  it('marks a session forked from another as a fork', () => {
    const original = [prompt('start'), assistant('msg_k', 'req_k', [{ type: 'text', text: 'ok' }], { output_tokens: 1 }, 'end_turn')];
    const forked = '0b9a5c1e-0000-4000-8000-000000000003';
    const copy = original.map((row, i) => ({ ...row, uuid: `fork-${i}`, sessionId: forked, forkedFrom: { sessionId: SESSION, messageUuid: (row as { uuid: string }).uuid } }));
    const batch = correlate([[MAIN, original], [{ path: '/p/forked.jsonl', kind: 'main' }, copy]]);
    const starts = batch.logs.filter((l) => l.eventName === 'ccotel.session.started').map((l) => l.attributes.source);
    expect(starts).toEqual(['startup', 'fork']);
    expect(turnRoots(batch)).toHaveLength(1);
  });

  it('puts a subagent under the Task call that started it, in the same trace', () => {
    const taskPrompt = 'Find the config files';
    const main = [
      prompt('use an agent'),
      assistant('msg_u', 'req_u', [toolUse('toolu_task', 'Task', { prompt: taskPrompt, subagent_type: 'Explore' })], { output_tokens: 1 }, 'tool_use'),
      result('toolu_task', 'found two', false, { agentId: 'a1b2', status: 'completed' }),
      assistant('msg_v', 'req_v', [{ type: 'text', text: 'done' }], { output_tokens: 1 }, 'end_turn'),
    ];
    const agentRows = [
      { ...prompt(taskPrompt), agentId: 'a1b2', isSidechain: true },
      { ...assistant('msg_w', 'req_w', [toolUse('toolu_glob', 'Glob', { pattern: '*.json' })], { output_tokens: 9 }, 'tool_use'), agentId: 'a1b2', isSidechain: true },
      { ...result('toolu_glob', 'a.json'), agentId: 'a1b2', isSidechain: true },
    ];
    const batch = correlate([
      [MAIN, main],
      [{ path: '/p/s/subagents/agent-a1b2.jsonl', kind: 'subagent', agentId: 'a1b2', agentType: 'Explore' }, agentRows],
    ]);
    const root = turnRoots(batch)[0];
    const task = spansNamed(batch, 'execute_tool Task')[0];
    const agent = spansNamed(batch, 'invoke_agent Explore')[0];
    const glob = spansNamed(batch, 'execute_tool Glob')[0];
    expect(agent.parentSpanId).toBe(task.spanId);
    expect(agent.attributes).toMatchObject({ 'gen_ai.agent.name': 'Explore', 'ccotel.agent.id': 'a1b2' });
    expect(glob.parentSpanId).toBe(agent.spanId);
    for (const span of [task, agent, glob]) expect(span.traceId).toBe(root.traceId);
    expect(turnRoots(batch)).toHaveLength(1); // the subagent's prompt is not a user turn
  });

  it('derives the same ids from the same input, and timestamps from the records', () => {
    const rows = [prompt('same'), assistant('msg_x', 'req_x', [{ type: 'text', text: 'same' }], { output_tokens: 1 }, 'end_turn')];
    const ids = (batch: TelemetryBatch) => batch.spans.map((s) => `${s.traceId}/${s.spanId}`).sort();
    const first = correlate([[MAIN, rows]]);
    expect(ids(correlate([[MAIN, rows]]))).toEqual(ids(first));
    expect(turnRoots(first)[0].startMs).toBe(Date.parse((rows[0] as { timestamp: string }).timestamp));
  });

  it('tells inline sidechain subagents apart by chain, links each to its Task call in order, and never takes a Warmup for one (1.0.x…2.0.25)', () => {
    const sidechain = (row: { uuid: string }, parentUuid: string | null) => ({ ...row, isSidechain: true, parentUuid });
    const warmup = sidechain(prompt('Warmup'), null);
    const warmupAnswer = sidechain(assistant('msg_w', 'req_w', [{ type: 'text', text: 'OK' }], { output_tokens: 1 }, 'end_turn'), warmup.uuid);
    const first = sidechain(prompt('Check it.'), null);
    const second = sidechain(prompt('Check it.'), null);
    const firstCall = sidechain(assistant('msg_s1', 'req_s1', [toolUse('toolu_s1', 'Bash', { command: 'date' })], { output_tokens: 2 }, 'tool_use'), first.uuid);
    const batch = correlate([
      [MAIN, [
        warmup,
        prompt('Ask two helpers.'),
        warmupAnswer,
        assistant('msg_t', 'req_t', [toolUse('toolu_t1', 'Task', { description: 'one', prompt: 'Check it.' }), toolUse('toolu_t2', 'Task', { description: 'two', prompt: 'Check it.' })], { output_tokens: 3 }, 'tool_use'),
        first,
        firstCall,
        second,
        sidechain(result('toolu_s1', 'today', false), firstCall.uuid),
        sidechain(assistant('msg_s2', 'req_s2', [{ type: 'text', text: 'first done' }], { output_tokens: 4 }, 'end_turn'), second.uuid),
        sidechain(assistant('msg_s3', 'req_s3', [{ type: 'text', text: 'second done' }], { output_tokens: 5 }, 'end_turn'), second.uuid),
        result('toolu_t1', 'one done', false),
        result('toolu_t2', 'two done', false),
        assistant('msg_end', 'req_end', [{ type: 'text', text: 'both done' }], { output_tokens: 6 }, 'end_turn'),
      ]],
    ]);
    const tasks = Object.fromEntries(spansNamed(batch, 'execute_tool Task').map((span) => [span.attributes['gen_ai.tool.call.id'], span.spanId]));
    const agents = spansNamed(batch, 'invoke_agent ').filter((span) => span.name !== 'invoke_agent claude-code');
    expect(agents.map((span) => span.parentSpanId).sort()).toEqual([tasks.toolu_t1, tasks.toolu_t2].sort());
    const agentOf = (messageId: string) => spansNamed(batch, 'chat ').find((span) => span.attributes['gen_ai.response.id'] === messageId)!.parentSpanId;
    expect(agents.find((span) => span.spanId === agentOf('msg_s1'))?.parentSpanId, 'the first chain, of the first call').toBe(tasks.toolu_t1);
    expect(agents.find((span) => span.spanId === agentOf('msg_s3'))?.parentSpanId, 'the second chain, of the second call').toBe(tasks.toolu_t2);
    expect(agentOf('msg_w'), 'the warmup: a chat in no turn').toBe('');
  });
});
