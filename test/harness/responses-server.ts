import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { text } from 'node:stream/consumers';

// A scripted OpenAI Responses API on loopback, for the Codex CLI (`wire_api = "responses"`). Every POST to
// /responses consumes the next step, answered as an SSE stream: the step's text and function calls as output
// items, then `response.completed` with the step's usage, so a run's token figures are the sum of its steps.

export interface ResponsesUsage {
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  reasoning_output_tokens: number;
}

export interface FunctionCall {
  name: string;
  arguments: Record<string, unknown>;
}

export interface ResponsesStep {
  text?: string;
  calls?: FunctionCall[];
  usage: ResponsesUsage;
}

export interface ResponsesRequest {
  path: string;
  body: unknown;
  /** The step it consumed (undefined: none was left, or it was not a /responses POST). */
  step?: number;
  responseId?: string;
  callIds?: string[];
}

export interface ResponsesServer {
  url: string;
  requests: ResponsesRequest[];
  addSteps(steps: ResponsesStep[]): void;
  remainingSteps(): number;
  close(): Promise<void>;
}

const apiId = (prefix: string): string => prefix + randomBytes(12).toString('hex');

function sse(res: ServerResponse, data: { type: string }): void {
  res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
}

function streamStep(res: ServerResponse, step: ResponsesStep, responseId: string, callIds: string[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  sse(res, { type: 'response.created', response: { id: responseId } } as { type: string });
  const items: unknown[] = [];
  if (step.text !== undefined) {
    items.push({ type: 'message', role: 'assistant', id: apiId('msg_'), content: [{ type: 'output_text', text: step.text }] });
  }
  (step.calls ?? []).forEach((call, i) => {
    items.push({ type: 'function_call', id: apiId('fc_'), call_id: callIds[i], name: call.name, arguments: JSON.stringify(call.arguments) });
  });
  items.forEach((item, index) => sse(res, { type: 'response.output_item.done', output_index: index, item } as { type: string }));
  const { usage } = step;
  sse(res, {
    type: 'response.completed',
    response: {
      id: responseId,
      usage: {
        input_tokens: usage.input_tokens,
        input_tokens_details: { cached_tokens: usage.cached_input_tokens },
        output_tokens: usage.output_tokens,
        output_tokens_details: { reasoning_tokens: usage.reasoning_output_tokens },
        total_tokens: usage.input_tokens + usage.output_tokens,
      },
    },
  } as { type: string });
  res.end();
}

export async function startResponsesServer(initialSteps: ResponsesStep[]): Promise<ResponsesServer> {
  const steps = [...initialSteps];
  let next = 0;
  const requests: ResponsesRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void text(req).then((raw) => {
      let body: unknown = raw;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        // kept as text
      }
      const path = (req.url ?? '').split('?')[0];
      const recorded: ResponsesRequest = { path, body };
      requests.push(recorded);
      if (req.method === 'POST' && path.endsWith('/responses') && next < steps.length) {
        recorded.step = next;
        const step = steps[next++];
        recorded.responseId = apiId('resp_');
        recorded.callIds = (step.calls ?? []).map(() => apiId('call_'));
        streamStep(res, step, recorded.responseId, recorded.callIds);
        return;
      }
      // /models and anything unscripted: nothing to offer (Codex goes on with its built-in model list).
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `not scripted: ${req.method} ${path}` } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    addSteps: (more) => steps.push(...more),
    remainingSteps: () => steps.length - next,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
