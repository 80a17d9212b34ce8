import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { text } from 'node:stream/consumers';

// A scripted Anthropic Messages API on loopback. The main conversation (and any subagent) consumes
// the scenario's steps in order; Claude Code's side requests (see isSideRequest) get a canned answer
// and never consume a step, so a scenario's token totals are exactly the sum of its steps' usage.

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
}

/** One scripted answer: some text, then zero or more tool calls (several = parallel calls). */
export interface Step {
  text?: string;
  toolCalls?: ToolCall[];
  usage: Usage;
  /** The model "thinks" this long before answering (a slow turn, e.g. a long gap after a resume). */
  delayMs?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  /** What the server did with it: a scenario step (its index), a side request, or neither. */
  handledAs: { kind: 'step'; index: number } | { kind: 'side' } | { kind: 'count_tokens' } | { kind: 'other' };
  /** The ids sent back, so a test can join them with transcripts and telemetry. */
  messageId?: string;
  requestId?: string;
  toolUseIds?: string[];
}

export interface ModelServer {
  url: string;
  requests: RecordedRequest[];
  /** Steps not yet answered; a finished scenario has none. */
  remainingSteps(): number;
  /** Append more steps (e.g. for a resumed session run against the same server). */
  addSteps(steps: Step[]): void;
  close(): Promise<void>;
}

const MODEL_FALLBACK = 'claude-sonnet-4-5';
const SIDE_USAGE: Usage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

function apiId(prefix: string): string {
  // Looks like the real ids (msg_01…, req_011…, toolu_01…) and is unique across runs.
  return prefix + randomBytes(16).toString('base64url').replace(/[-_]/g, 'x').slice(0, 22);
}

interface MessagesBody {
  model?: string;
  stream?: boolean;
  tools?: unknown[];
  messages?: { role: string; content: unknown }[];
  system?: unknown;
}

/** The prompt text: the last role:"user" message (the array may end with a role:"system" entry). */
export function lastUserText(body: MessagesBody): string {
  const user = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user');
  if (!user) return '';
  if (typeof user.content === 'string') return user.content;
  if (!Array.isArray(user.content)) return '';
  return user.content
    .filter((b): b is { type: 'text'; text: string } => b?.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('\n');
}

/**
 * Side requests are the ones Claude Code makes besides the agent loop: they carry no tools (in
 * interactive use: session titles, command-prefix checks…). Claude Code 2.1.332 in print mode with
 * CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 made none in any scenario; they would get a short text
 * answer with zero usage. The agent loop, a subagent's included, always sends its tool list.
 */
export function isSideRequest(body: MessagesBody): boolean {
  return !Array.isArray(body.tools) || body.tools.length === 0 || isAgentWarmup(body);
}

/**
 * Claude Code 2.0.7x–2.1.x print mode sends each built-in subagent (Explore, Plan…) a "Warmup" prompt at
 * start, with tools, to prime the prompt cache: not part of the conversation, so it gets no step.
 */
function isAgentWarmup(body: MessagesBody): boolean {
  return body.messages?.length === 1 && lastUserText(body) === 'Warmup';
}

const SIDE_ANSWER = 'OK';

interface ContentBlock {
  type: 'text' | 'tool_use';
  text?: string;
  id?: string;
  name?: string;
  input?: Record<string, unknown>;
}

function blocksOf(step: Step, toolUseIds: string[]): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  if (step.text !== undefined) blocks.push({ type: 'text', text: step.text });
  (step.toolCalls ?? []).forEach((call, i) =>
    blocks.push({ type: 'tool_use', id: toolUseIds[i], name: call.name, input: call.input }),
  );
  return blocks;
}

function stopReasonOf(blocks: ContentBlock[]): string {
  return blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
}

function usageBody(usage: Usage) {
  return {
    ...usage,
    cache_creation: { ephemeral_5m_input_tokens: usage.cache_creation_input_tokens, ephemeral_1h_input_tokens: 0 },
    service_tier: 'standard',
  };
}

function sse(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** Streams like the real API: message_start carries input/cache usage and output_tokens 1; message_delta the final usage. */
function streamMessage(res: ServerResponse, message: { id: string; model: string }, blocks: ContentBlock[], usage: Usage) {
  sse(res, 'message_start', {
    type: 'message_start',
    message: {
      id: message.id,
      type: 'message',
      role: 'assistant',
      model: message.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: usageBody({ ...usage, output_tokens: Math.min(1, usage.output_tokens) }),
    },
  });
  sse(res, 'ping', { type: 'ping' });
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } });
    } else {
      sse(res, 'content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      // Split the JSON in two so Claude Code has to assemble input_json_delta fragments.
      const json = JSON.stringify(block.input);
      const cut = Math.floor(json.length / 2);
      for (const partial of [json.slice(0, cut), json.slice(cut)]) {
        sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: partial } });
      }
    }
    sse(res, 'content_block_stop', { type: 'content_block_stop', index });
  });
  sse(res, 'message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stopReasonOf(blocks), stop_sequence: null },
    usage: usageBody(usage),
  });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export async function startModelServer(initialSteps: Step[]): Promise<ModelServer> {
  const steps = [...initialSteps];
  let nextStep = 0;
  const requests: RecordedRequest[] = [];

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?')[0];
    const raw = await text(req);
    let body: MessagesBody = {};
    try {
      body = raw ? (JSON.parse(raw) as MessagesBody) : {};
    } catch {
      sendJson(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'body is not JSON' } });
      return;
    }
    const record: RecordedRequest = { method: req.method ?? '', path, headers: req.headers, body, handledAs: { kind: 'other' } };
    requests.push(record);

    if (req.method === 'HEAD' && path === '/api/hello') {
      // The connectivity probe Claude Code sends when nonessential traffic is allowed.
      res.writeHead(200).end();
      return;
    }
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
      record.handledAs = { kind: 'count_tokens' };
      sendJson(res, 200, { input_tokens: Math.ceil(raw.length / 4) });
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/messages') {
      sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `no route ${req.method} ${path}` } });
      return;
    }

    let blocks: ContentBlock[];
    let usage: Usage;
    if (isSideRequest(body)) {
      record.handledAs = { kind: 'side' };
      blocks = [{ type: 'text', text: SIDE_ANSWER }];
      usage = SIDE_USAGE;
    } else {
      const step = steps[nextStep];
      if (!step) {
        // Running out of script is a scenario bug: fail the request loudly rather than invent an answer.
        sendJson(res, 500, { type: 'error', error: { type: 'api_error', message: `scenario has no step ${nextStep}` } });
        return;
      }
      record.handledAs = { kind: 'step', index: nextStep++ };
      record.toolUseIds = (step.toolCalls ?? []).map(() => apiId('toolu_01'));
      blocks = blocksOf(step, record.toolUseIds);
      usage = step.usage;
      if (step.delayMs) await new Promise((resolve) => setTimeout(resolve, step.delayMs));
    }
    record.messageId = apiId('msg_01');
    record.requestId = apiId('req_011');
    const message = { id: record.messageId, model: body.model ?? MODEL_FALLBACK };
    const headers = { 'request-id': record.requestId };

    if (body.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
      streamMessage(res, message, blocks, usage);
    } else {
      sendJson(
        res,
        200,
        {
          ...message,
          type: 'message',
          role: 'assistant',
          content: blocks,
          stop_reason: stopReasonOf(blocks),
          stop_sequence: null,
          usage: usageBody(usage),
        },
        headers,
      );
    }
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { type: 'error', error: { type: 'api_error', message: String(err) } });
      else res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    remainingSteps: () => steps.length - nextStep,
    addSteps: (more) => void steps.push(...more),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
