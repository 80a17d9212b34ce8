import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { text } from 'node:stream/consumers';

// A scripted OpenAI Responses API on loopback, for the Codex CLI (`wire_api = "responses"`). Every POST to
// /responses consumes the next step, answered as an SSE stream: the step's text and function calls as output
// items, then `response.completed` with the step's usage, so a run's token figures are the sum of its steps. A run's
// first conversation (its thread) takes the main steps; any other (a subagent it spawned)
// takes the steps marked `subagent`, so the two may ask in any order.

export interface ResponsesUsage {
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  reasoning_output_tokens: number;
}

/** In a call's arguments: the ids of the agents spawned so far (the `agent_id`s of the outputs the request holds). */
export const SPAWNED = '$spawned';
/** In a call's arguments: the id of the first agent spawned so far. */
export const FIRST_SPAWNED = '$spawned[0]';

export interface FunctionCall {
  name: string;
  arguments: Record<string, unknown>;
  /** The tool namespace the function is in (0.171's `multi_agent_v1`). */
  namespace?: string;
}

export interface ResponsesStep {
  text?: string;
  calls?: FunctionCall[];
  usage: ResponsesUsage;
  /** Answered to a subagent's requests, not the run's own thread's. */
  subagent?: true;
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

/** The agent ids in the function call outputs of a request's input (spawn_agent answers `{"agent_id": …}`). */
function spawnedIn(body: unknown): string[] {
  const input = (body as { input?: { type?: string; output?: unknown }[] } | undefined)?.input ?? [];
  return input.flatMap((item) => {
    if (item.type !== 'function_call_output' || typeof item.output !== 'string') return [];
    const id = /"agent_id":"([^"]+)"/.exec(item.output)?.[1];
    return id ? [id] : [];
  });
}

function withSpawned(args: Record<string, unknown>, body: unknown): Record<string, unknown> {
  const spawned = spawnedIn(body);
  return Object.fromEntries(Object.entries(args).map(([key, value]) => [key, value === SPAWNED ? spawned : value === FIRST_SPAWNED ? spawned[0] : value]));
}

function streamStep(res: ServerResponse, step: ResponsesStep, responseId: string, callIds: string[], body: unknown): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  sse(res, { type: 'response.created', response: { id: responseId } } as { type: string });
  const items: unknown[] = [];
  if (step.text !== undefined) {
    items.push({ type: 'message', role: 'assistant', id: apiId('msg_'), content: [{ type: 'output_text', text: step.text }] });
  }
  (step.calls ?? []).forEach((call, i) => {
    items.push({ type: 'function_call', id: apiId('fc_'), call_id: callIds[i], name: call.name, ...(call.namespace ? { namespace: call.namespace } : {}), arguments: JSON.stringify(withSpawned(call.arguments, body)) });
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
  const answered = new Set<number>();
  /** The thread of the current run (its first request's cache key): added steps start a run. */
  let runThread: string | undefined;
  const requests: ResponsesRequest[] = [];
  const nextStep = (body: unknown): number => {
    // The thread asking: 0.171 names it in client_metadata (its subagents share the parent's cache key), 0.130 by the key.
    const asked = body as { prompt_cache_key?: string; client_metadata?: { thread_id?: string } } | undefined;
    const key = asked?.client_metadata?.thread_id ?? asked?.prompt_cache_key;
    runThread ??= key;
    const subagent = key !== runThread;
    return steps.findIndex((step, i) => !answered.has(i) && (step.subagent === true) === subagent);
  };
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
      const index = req.method === 'POST' && path.endsWith('/responses') ? nextStep(body) : -1;
      if (index >= 0) {
        recorded.step = index;
        answered.add(index);
        const step = steps[index];
        recorded.responseId = apiId('resp_');
        recorded.callIds = (step.calls ?? []).map(() => apiId('call_'));
        streamStep(res, step, recorded.responseId, recorded.callIds, body);
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
    addSteps: (more) => {
      runThread = undefined;
      steps.push(...more);
    },
    remainingSteps: () => steps.length - answered.size,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
