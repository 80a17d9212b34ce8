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
  entrypoint: string;
}

export const STYLES = {
  'v2.1': { version: '2.1.332', modern: true, layout: 'nested', agentTool: 'Agent', missingRequestId: 0, entrypoint: 'cli' },
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
    return {
      parentUuid, isSidechain: sidechain, ...agent, ...body,
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

export function usageObject(u: Usage, modern: boolean): Row {
  const base: Row = {
    input_tokens: u.input_tokens,
    cache_creation_input_tokens: u.cache_creation_input_tokens,
    cache_read_input_tokens: u.cache_read_input_tokens,
    output_tokens: u.output_tokens,
    server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
    service_tier: 'standard',
    cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: u.cache_creation_input_tokens },
  };
  if (modern) {
    base.output_tokens_details = { thinking_tokens: 0 };
    base.speed = 'standard';
  }
  return base;
}

/**
 * The large, mostly constant rows Claude Code writes around every request (system prompt snapshot,
 * request shape, listings). Built once per corpus; `scale` shrinks them for small corpora.
 */
export class BigContent {
  readonly systemPrompt: string[];
  readonly tools: Row[];
  readonly skillListing: string;
  readonly agentListing: string[];
  readonly environment: string;

  constructor(rng: Rng, text: TextPool, scale: number) {
    const n = (chars: number): number => Math.max(16, Math.round(chars * scale));
    this.systemPrompt = Array.from({ length: 14 }, () => text.text(rng, n(rng.int(2000, 7000))));
    this.tools = ['Agent', 'Bash', 'Edit', 'Glob', 'Grep', 'Read', 'Skill', 'TodoWrite', 'ToolSearch', 'WebFetch', 'WebSearch', 'Write'].map(
      (name) => ({
        name,
        description: text.text(rng, n(rng.int(300, 3500))),
        input_schema: {
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          properties: Object.fromEntries(
            ['command', 'description', 'timeout', 'file_path', 'pattern'].slice(0, rng.int(1, 5)).map((p) => [p, { description: text.text(rng, n(rng.int(40, 900))), type: 'string' }]),
          ),
          additionalProperties: false,
        },
      }),
    );
    this.skillListing = text.text(rng, n(6200));
    this.agentListing = ['claude', 'Explore', 'general-purpose', 'Plan', 'statusline-setup'].map((t) => `- ${t}: ${text.text(rng, n(rng.int(130, 540)))}`);
    this.environment = text.text(rng, n(800));
  }
}

/** The attachment rows a Claude Code 2.1 process writes with its first prompt (before the first request). */
export function startupAttachments(big: BigContent, model: string, date: string): Row[] {
  const reminder = (content: string): Row[] => [{ content: `<system-reminder>\n${content}\n</system-reminder>` }];
  return [
    { attachment: { type: 'environment', snapshot: { workingDirectory: '', isWorktree: false, isGitRepo: true, additionalWorkingDirectories: [], platform: 'linux', shell: 'bash', osVersion: 'Linux 6.8.0' } }, rendered: reminder(`# Environment\n${big.environment}`), renderedRole: 'system' },
    { attachment: { type: 'model', identity: { modelId: model, marketingName: model, knowledgeCutoff: 'June 2026' }, text: `You are powered by the model ${model}.` }, rendered: reminder(`You are powered by the model ${model}.`), renderedRole: 'system' },
    { attachment: { type: 'deferred_tools_delta', addedNames: ['CronCreate', 'CronDelete', 'EnterWorktree', 'WebSearch'], addedLines: ['CronCreate', 'CronDelete', 'EnterWorktree', 'WebSearch'], removedNames: [], wireHiddenNames: [], readdedNames: [], pendingMcpServers: [], needsAuthMcpServers: [], failedMcpServers: [] }, rendered: reminder('The following deferred tools are now available via ToolSearch.'), renderedRole: 'system' },
    { attachment: { type: 'agent_listing_delta', addedTypes: ['claude', 'Explore', 'general-purpose', 'Plan', 'statusline-setup'], addedLines: big.agentListing, builtInTypes: ['claude', 'Explore', 'general-purpose', 'Plan', 'statusline-setup'], builtInPluginTypes: [], removedTypes: [], isInitial: true, showConcurrencyNote: true }, rendered: reminder(`Available agent types for the Agent tool:\n${big.agentListing.join('\n')}`), renderedRole: 'system' },
    { attachment: { type: 'skill_listing', content: big.skillListing, skillCount: 13, isInitial: true, names: ['dataviz', 'update-config', 'code-review'], digests: ['140faf7359fd9e4c', '909bf5fe1d1fb81f', '233332cc9c0d34f7'] }, rendered: reminder(`The following skills are available for use with the Skill tool:\n\n${big.skillListing}`), renderedRole: 'system' },
    { attachment: { type: 'session_context', context: {} } },
    { attachment: { type: 'date', date }, rendered: reminder(`Today's date is ${date}.`), renderedRole: 'system' },
  ];
}

export function promptSnapshot(big: BigContent): Row {
  return { attachment: { type: 'prompt_snapshot', systemPrompt: big.systemPrompt, reminderFold: false, echoWireToolInputs: false, contextRendering: 'announced' } };
}

export function apiRequestShape(big: BigContent, sessionId: string, shapeHash: string, timestamp: string, version: string): Row {
  return {
    type: 'api-request-shape', sessionId, shapeHash, timestamp, version,
    shape: { system: [{ type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude." }, { type: 'text', text: big.systemPrompt.join('\n\n') }], tools: big.tools },
  };
}

export function apiRequest(sessionId: string, id: string, timestamp: string, version: string, shapeHash: string, model: string, tail: string[], digest: string): Row {
  return {
    type: 'api-request', sessionId, id, timestamp, version, querySource: 'repl_main_thread', shapeHash,
    params: {
      model,
      betas: ['claude-code-20250219', 'interleaved-thinking-2025-05-14', 'context-management-2025-06-27'],
      max_tokens: 32000,
      thinking: { type: 'adaptive', display: 'omitted' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      output_config: { effort: 'medium' },
    },
    thread: { type: 'none' }, echoWireToolInputs: false, keep: 0, tail,
    cacheControl: [{ path: ['system', 0], value: { type: 'ephemeral' } }, { path: ['system', 1], value: { type: 'ephemeral' } }],
    requestDigest: digest,
  };
}
