import type { Rng } from './random.js';
import type { TextPool } from './text.js';

// Row shapes, field names and field order as Claude Code writes them (see test/fixtures/real/ for the
// recorded originals). Rows are plain objects; JSON.stringify gives the compact form Claude Code writes.

export type Row = Record<string, unknown>;

export interface Style {
  version: string;
  /** 2.1.x: promptId & co on user rows, attachment / api-request* / cost-state … rows. */
  modern: boolean;
  /** Where subagent transcripts go. */
  layout: 'inline' | 'legacy' | 'nested';
  agentTool: 'Task' | 'Agent';
  /** Share of assistant messages written without requestId (old versions). */
  missingRequestId: number;
  /** 2.1 rows only; the recorded samples are all 'sdk-cli' (claude -p). */
  entrypoint: string;
}

export const STYLES = {
  'v2.1': { version: '2.1.332', modern: true, layout: 'nested', agentTool: 'Agent', missingRequestId: 0, entrypoint: 'sdk-cli' },
  'v2.0': { version: '2.0.50', modern: false, layout: 'legacy', agentTool: 'Task', missingRequestId: 0, entrypoint: 'cli' },
  'v1.0': { version: '1.0.98', modern: false, layout: 'inline', agentTool: 'Task', missingRequestId: 0.3, entrypoint: 'cli' },
} as const satisfies Record<string, Style>;
export type StyleName = keyof typeof STYLES;

/** Who writes a row: the session, and for subagent rows the agent. */
export interface Envelope {
  sessionId: string;
  cwd: string;
  gitBranch: string;
  style: Style;
  agentId?: string;
}

/** Wraps a row body in the envelope fields, in the order the given Claude Code version writes them. */
export function stamp(env: Envelope, parentUuid: string | null, body: Row): Row {
  const sidechain = env.agentId !== undefined;
  const agent = sidechain ? { agentId: env.agentId } : {};
  if (env.style.modern) {
    // 2.1 subagent user rows put the (parent's) promptId before agentId.
    const { promptId, ...rest } = body;
    const prompt = promptId === undefined ? {} : { promptId };
    return {
      parentUuid, isSidechain: sidechain, ...prompt, ...agent, ...rest,
      userType: 'external', entrypoint: env.style.entrypoint, cwd: env.cwd, sessionId: env.sessionId,
      version: env.style.version, gitBranch: env.gitBranch,
    };
  }
  return {
    parentUuid, isSidechain: sidechain, userType: 'external', cwd: env.cwd, sessionId: env.sessionId,
    version: env.style.version, gitBranch: env.gitBranch, ...agent, ...body,
  };
}

export interface Usage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

/** message.usage as 2.1.332 writes it (older versions: the first fields only). */
export function usageObject(u: Usage, modern: boolean): Row {
  if (!modern) {
    return {
      input_tokens: u.input_tokens, cache_creation_input_tokens: u.cache_creation_input_tokens,
      cache_read_input_tokens: u.cache_read_input_tokens, output_tokens: u.output_tokens, service_tier: 'standard',
    };
  }
  return {
    input_tokens: u.input_tokens,
    cache_creation_input_tokens: u.cache_creation_input_tokens,
    cache_read_input_tokens: u.cache_read_input_tokens,
    output_tokens: u.output_tokens,
    output_tokens_details: { thinking_tokens: 0 },
    server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
    service_tier: 'standard',
    cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: u.cache_creation_input_tokens },
    inference_geo: '',
    iterations: [],
    speed: 'standard',
    fallback_credit: null,
  };
}

const TOOL_NAMES_IN_PROMPT = ['Agent', 'Bash', 'Edit', 'Glob', 'Grep', 'Read', 'Skill', 'TodoWrite', 'ToolSearch', 'WebFetch', 'Write', 'Monitor'];

/**
 * The large, mostly constant content Claude Code 2.1 writes once per transcript file: the system
 * prompt snapshot (with and without tool schemas), the request shape, the agent and skill listings,
 * the environment block. Sizes follow test/fixtures/real. Built once per corpus; `scale` shrinks it.
 */
export class BigContent {
  readonly systemPrompt: string[];
  readonly tools: Row[];
  readonly skillListing: string;
  readonly agentListing: string[];
  readonly environment: string;

  constructor(rng: Rng, text: TextPool, scale: number) {
    const n = (chars: number): number => Math.max(8, Math.round(chars * scale));
    this.systemPrompt = [2025, 357, 520, 424, 163, 2108, 620, 280, 277, 265].map((len) => text.text(rng, n(len)));
    this.tools = TOOL_NAMES_IN_PROMPT.map((name) => ({
      name,
      description: text.text(rng, n(rng.int(200, 3200))),
      input_schema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: Object.fromEntries(
          ['command', 'description', 'timeout', 'file_path', 'pattern'].slice(0, rng.int(1, 5)).map((p) => [p, { description: text.text(rng, n(rng.int(40, 900))), type: 'string' }]),
        ),
        additionalProperties: false,
      },
    }));
    this.skillListing = text.text(rng, n(6200));
    this.agentListing = ['claude', 'Explore', 'general-purpose', 'Plan', 'statusline-setup'].map((t) => `- ${t}: ${text.text(rng, n(rng.int(130, 540)))}`);
    this.environment = text.text(rng, n(800));
  }
}

function reminder(content: string): Row[] {
  return [{ content: `<system-reminder>\n${content}\n</system-reminder>` }];
}

export type StartupAttachment = 'environment' | 'model' | 'deferred_tools_delta' | 'agent_listing_delta' | 'skill_listing';

/** Attachment bodies a 2.1 process writes with the first prompt of a transcript file. */
export function startupAttachment(kind: StartupAttachment, big: BigContent, model: string, cwd: string): Row {
  switch (kind) {
    case 'environment':
      return { attachment: { type: 'environment', snapshot: { workingDirectory: cwd, isWorktree: false, isGitRepo: true, additionalWorkingDirectories: [], platform: 'linux', shell: 'bash', osVersion: 'Linux 6.8.0' } }, rendered: reminder(`# Environment\n${big.environment}`), renderedRole: 'system' };
    case 'model':
      return { attachment: { type: 'model', identity: { modelId: model, marketingName: model, knowledgeCutoff: 'June 2026' }, text: `You are powered by the model ${model}.` }, rendered: reminder(`You are powered by the model ${model}.`), renderedRole: 'system' };
    case 'deferred_tools_delta':
      return { attachment: { type: 'deferred_tools_delta', addedNames: ['CronCreate', 'CronDelete', 'EnterWorktree', 'WebSearch'], addedLines: ['CronCreate', 'CronDelete', 'EnterWorktree', 'WebSearch'], removedNames: [], wireHiddenNames: [], readdedNames: [], pendingMcpServers: [], needsAuthMcpServers: [], failedMcpServers: [] }, rendered: reminder('The following deferred tools are now available via ToolSearch.'), renderedRole: 'system' };
    case 'agent_listing_delta':
      return { attachment: { type: 'agent_listing_delta', addedTypes: ['claude', 'Explore', 'general-purpose', 'Plan', 'statusline-setup'], addedLines: big.agentListing, builtInTypes: ['claude', 'Explore', 'general-purpose', 'Plan', 'statusline-setup'], builtInPluginTypes: [], removedTypes: [], isInitial: true, showConcurrencyNote: true }, rendered: reminder(`Available agent types for the Agent tool:\n${big.agentListing.join('\n')}`), renderedRole: 'system' };
    case 'skill_listing':
      return { attachment: { type: 'skill_listing', content: big.skillListing, skillCount: 13, isInitial: true, names: ['dataviz', 'update-config', 'code-review'], digests: ['140faf7359fd9e4c', '909bf5fe1d1fb81f', '233332cc9c0d34f7'] }, rendered: reminder(`The following skills are available for use with the Skill tool:\n\n${big.skillListing}`), renderedRole: 'system' };
  }
}

/** Orders as recorded: the main thread lists agents up front, a subagent only after its first tool result. */
export const MAIN_STARTUP: readonly StartupAttachment[] = ['environment', 'model', 'deferred_tools_delta', 'agent_listing_delta', 'skill_listing'];
export const SUBAGENT_STARTUP: readonly StartupAttachment[] = ['deferred_tools_delta', 'environment', 'model', 'skill_listing'];

/** Attachment bodies written after the atis-latch row that follows the startup attachments. */
export function contextAttachments(date: string): Row[] {
  return [
    { attachment: { type: 'session_context', context: {} } },
    { attachment: { type: 'date', date }, rendered: reminder(`Today's date is ${date}.`), renderedRole: 'system' },
    { attachment: { type: 'remote_session_change', url: null, commit: 'Co-Authored-By: Claude <noreply@anthropic.com>', pr: 'Generated with Claude Code', sendUserFileHint: false, managedCommit: false, managedPr: false }, rendered: reminder('Attribution for git commits and pull requests you create from here on.'), renderedRole: 'user', renderedBesideToolResult: true },
  ];
}

/** The system prompt snapshot: small with the first prompt, large (tool schemas) after the first tool result. */
export function promptSnapshot(big: BigContent, withTools: boolean): Row {
  if (!withTools) {
    return { attachment: { type: 'prompt_snapshot', systemPrompt: big.systemPrompt, reminderFold: false, echoWireToolInputs: false, contextRendering: 'announced' } };
  }
  return {
    attachment: {
      type: 'prompt_snapshot', systemPrompt: big.systemPrompt,
      tools: big.tools.map((t) => ({ name: t.name, description: t.description, schema: t })),
      cliPrefix: "You are Claude Code, Anthropic's official CLI for Claude.",
      reminderFold: false, systemTurns: true, toolChangeHeader: true, inlineTools: false, keptReminders: false, echoWireToolInputs: false, contextRendering: 'announced',
    },
  };
}

/** `agent` adds the subagent's agentId (its api-request* rows go to its own file). */
export function apiRequestShape(big: BigContent, sessionId: string, agent: Row, shapeHash: string, timestamp: string, version: string): Row {
  return {
    type: 'api-request-shape', sessionId, ...agent, shapeHash, timestamp, version,
    shape: { system: [{ type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude." }, { type: 'text', text: big.systemPrompt.join('\n\n') }], tools: big.tools },
  };
}

/** The request's system message (environment block), as api-request-blob stores it. */
export function systemBlobMessage(big: BigContent): Row {
  return { role: 'system', content: [{ type: 'text', text: `# Environment\n${big.environment}\n${big.skillListing}` }], output_config: { effort: 'medium' } };
}

export function apiRequest(sessionId: string, agent: Row, id: string, timestamp: string, version: string, querySource: string, shapeHash: string, model: string, tail: string[], digest: string): Row {
  return {
    type: 'api-request', sessionId, ...agent, id, timestamp, version, querySource, shapeHash,
    params: {
      model,
      betas: ['claude-code-20250219', 'interleaved-thinking-2025-05-14', 'context-management-2025-06-27', 'per-turn-control-2026-07-01', 'mid-conversation-tool-changes-2026-07-01', 'thinking-token-count-2026-05-13', 'advanced-tool-use-2025-11-20', 'effort-2025-11-24'],
      max_tokens: 128000,
      thinking: { type: 'adaptive', display: 'omitted' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      output_config: { effort: 'medium' },
    },
    thread: { type: 'none' }, echoWireToolInputs: false, keep: 0, tail,
    cacheControl: [{ path: ['system', 0], value: { type: 'ephemeral' } }, { path: ['system', 1], value: { type: 'ephemeral' } }, { path: ['messages', 1, 'content', 0], value: { type: 'ephemeral' } }],
    requestDigest: digest,
  };
}
