import { describe, expect, it } from 'vitest';
import { SPAWNED, startResponsesServer } from './responses-server.js';

/** The events of an SSE body: `event: <type>` lines, each with its `data:` JSON. */
function sseEvents(body: string): { type: string; [key: string]: unknown }[] {
  return body.split('\n\n').filter(Boolean).map((block) => {
    const [eventLine, dataLine] = block.split('\n');
    const data = JSON.parse(dataLine.slice('data: '.length)) as { type: string };
    expect(eventLine).toBe(`event: ${data.type}`);
    return data;
  });
}

describe('the scripted Responses API', () => {
  it('answers each POST /responses with the next step as SSE: its items, then its usage; nothing past the script', async () => {
    const server = await startResponsesServer([
      { calls: [{ name: 'exec_command', arguments: { cmd: 'ls' } }, { name: 'exec_command', arguments: { cmd: 'pwd' } }], usage: { input_tokens: 100, cached_input_tokens: 40, output_tokens: 9, reasoning_output_tokens: 3 } },
    ]);
    try {
      const post = () => fetch(`${server.url}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: [] }) });
      const first = await post();
      expect(first.headers.get('content-type')).toBe('text/event-stream');
      const events = sseEvents(await first.text());
      expect(events.map((event) => event.type)).toEqual(['response.created', 'response.output_item.done', 'response.output_item.done', 'response.completed']);
      const [request] = server.requests;
      const items = events.slice(1, 3).map((event) => event.item as { call_id: string; arguments: string });
      expect(items.map((item) => [item.call_id, JSON.parse(item.arguments).cmd])).toEqual([[request.callIds![0], 'ls'], [request.callIds![1], 'pwd']]);
      expect(events[3].response).toEqual({
        id: request.responseId,
        usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 40 }, output_tokens: 9, output_tokens_details: { reasoning_tokens: 3 }, total_tokens: 109 },
      });
      expect(server.remainingSteps()).toBe(0);
      expect((await post()).status).toBe(404);
      expect(server.requests.map((r) => r.step)).toEqual([0, undefined]);
    } finally {
      await server.close();
    }
  });

  it('answers a subagent’s thread with the subagent steps, in any order, and fills in the agents spawned', async () => {
    const usage = { input_tokens: 1, cached_input_tokens: 0, output_tokens: 1, reasoning_output_tokens: 0 };
    const server = await startResponsesServer([
      { calls: [{ name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: { message: 'hi' } }], usage },
      { text: 'from the helper', usage, subagent: true },
      { calls: [{ name: 'wait_agent', arguments: { targets: SPAWNED } }], usage },
    ]);
    try {
      const post = async (body: unknown) => sseEvents(await (await fetch(`${server.url}/responses`, { method: 'POST', body: JSON.stringify(body) })).text());
      const first = await post({ prompt_cache_key: 'main', input: [] });
      expect(first[1].item).toMatchObject({ name: 'spawn_agent', namespace: 'multi_agent_v1' });
      // 0.171 names the asking thread in client_metadata; its subagent shares the parent's cache key.
      const helper = await post({ prompt_cache_key: 'main', client_metadata: { thread_id: 'helper-thread' }, input: [] });
      expect(helper[1].item).toMatchObject({ type: 'message', content: [{ text: 'from the helper' }] });
      const spawned = { type: 'function_call_output', call_id: 'c1', output: '{"agent_id":"helper-thread","nickname":"X"}' };
      const waiting = await post({ prompt_cache_key: 'main', input: [spawned] });
      expect(JSON.parse((waiting[1].item as { arguments: string }).arguments)).toEqual({ targets: ['helper-thread'] });
      expect(server.requests.map((r) => r.step)).toEqual([0, 1, 2]);
    } finally {
      await server.close();
    }
  });
});
