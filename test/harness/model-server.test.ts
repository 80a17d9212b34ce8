import { afterEach, describe, expect, it } from 'vitest';
import { lastUserText, startModelServer, type ModelServer, type Step } from './model-server.js';

// The scripted Messages API on its own (Claude Code never sends count_tokens or non-streaming
// requests in the scenarios, so these paths are proven here).

const usage = { input_tokens: 10, output_tokens: 7, cache_read_input_tokens: 3, cache_creation_input_tokens: 2 };
const TOOLS = [{ name: 'Bash', input_schema: { type: 'object' } }];
let server: ModelServer;
afterEach(() => server.close());

function post(path: string, body: unknown) {
  return fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

function sseEvents(text: string): { event: string; data: Record<string, any> }[] { // eslint-disable-line @typescript-eslint/no-explicit-any
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((chunk) => {
      const [eventLine, dataLine] = chunk.split('\n');
      return { event: eventLine.replace('event: ', ''), data: JSON.parse(dataLine.replace('data: ', '')) };
    });
}

describe('scripted model server', () => {
  it('streams parallel tool calls as SSE with input_json_delta fragments and the scripted usage', async () => {
    const step: Step = { text: 'Two calls.', toolCalls: [{ name: 'Bash', input: { command: 'echo a' } }, { name: 'Bash', input: { command: 'echo b' } }], usage };
    server = await startModelServer([step]);
    const res = await post('/v1/messages', { stream: true, tools: TOOLS, messages: [{ role: 'user', content: 'go' }] });
    const events = sseEvents(await res.text());

    expect(res.headers.get('request-id')).toBe(server.requests[0].requestId);
    expect(events.map((e) => e.event).filter((e) => e !== 'content_block_delta' && e !== 'ping')).toEqual([
      'message_start',
      ...['content_block_start', 'content_block_stop'],
      ...['content_block_start', 'content_block_stop'],
      ...['content_block_start', 'content_block_stop'],
      'message_delta',
      'message_stop',
    ]);
    const toolInputs = [1, 2].map((index) =>
      JSON.parse(
        events
          .filter((e) => e.event === 'content_block_delta' && e.data.index === index)
          .map((e) => e.data.delta.partial_json)
          .join(''),
      ),
    );
    expect(toolInputs).toEqual([{ command: 'echo a' }, { command: 'echo b' }]);
    const starts = events.filter((e) => e.event === 'content_block_start' && e.data.content_block.type === 'tool_use');
    expect(starts.map((e) => e.data.content_block.id)).toEqual(server.requests[0].toolUseIds);
    const delta = events.find((e) => e.event === 'message_delta')!.data;
    expect(delta.delta.stop_reason).toBe('tool_use');
    expect(delta.usage).toMatchObject(usage);
  });

  it('answers non-streaming requests with the whole message', async () => {
    server = await startModelServer([{ text: 'Plain.', usage }]);
    const res = await post('/v1/messages', { tools: TOOLS, messages: [{ role: 'user', content: 'hi' }] });
    const body = await res.json();
    expect(body).toMatchObject({ id: server.requests[0].messageId, content: [{ type: 'text', text: 'Plain.' }], stop_reason: 'end_turn', usage });
  });

  it('answers side requests and count_tokens without consuming a step, and fails loudly past the script', async () => {
    server = await startModelServer([{ text: 'Main.', usage }]);
    const side = await post('/v1/messages', { messages: [{ role: 'user', content: 'title?' }] });
    expect(await side.json()).toMatchObject({ usage: { input_tokens: 0 } });
    const count = await post('/v1/messages/count_tokens', { messages: [{ role: 'user', content: 'x'.repeat(400) }] });
    expect(((await count.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
    expect(server.remainingSteps()).toBe(1);

    await post('/v1/messages', { tools: TOOLS, messages: [] });
    expect(server.remainingSteps()).toBe(0);
    const past = await post('/v1/messages', { tools: TOOLS, messages: [] });
    expect(past.status).toBe(500);
    expect(server.requests.map((r) => r.handledAs.kind)).toEqual(['side', 'count_tokens', 'step', 'other']);
  });

  it("answers a subagent's Warmup (with tools, as 2.0.77 sends it) as a side request, but not a conversation that says Warmup later", async () => {
    server = await startModelServer([{ text: 'Main.', usage }]);
    await post('/v1/messages', { stream: true, tools: TOOLS, messages: [{ role: 'user', content: 'Warmup' }] });
    expect(server.remainingSteps()).toBe(1);
    const later = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'Warmup' }];
    await post('/v1/messages', { tools: TOOLS, messages: later });
    expect(server.requests.map((r) => r.handledAs.kind)).toEqual(['side', 'step']);
  });

  it('takes the prompt from the last user message even when a system entry follows it', () => {
    const prompt = lastUserText({
      messages: [
        { role: 'user', content: 'first' },
        { role: 'user', content: [{ type: 'text', text: '<system-reminder>x</system-reminder>' }, { type: 'text', text: 'the prompt' }] },
        { role: 'system', content: [{ type: 'text', text: '# Environment' }] },
      ],
    });
    expect(prompt).toBe('<system-reminder>x</system-reminder>\nthe prompt');
  });
});
