import { utimesSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { ExpectedTally, SubagentLayout, TurnOutcome } from './expected.js';
import type { Rng } from './random.js';
import {
  apiRequest, apiRequestShape, contextAttachments, MAIN_STARTUP, promptSnapshot, stamp, startupAttachment, SUBAGENT_STARTUP,
  systemBlobMessage, usageObject, type BigContent, type Envelope, type Row, type Usage,
} from './rows.js';
import type { TextPool } from './text.js';
import {
  GUARDED_TOOLS, INTERRUPT, INTERRUPT_FOR_TOOL, TOOL_NAMES, toolDenial, toolFailure, toolInput, toolInterrupted,
  toolSuccess, type DenialKind, type ToolKit, type ToolResult, type ToolResultContent,
} from './tools.js';
import { LineWriter } from './writer.js';

// Writes conversations: turns of prompts, API responses (one row per content block), tool calls and
// their results, subagents, compactions, meta rows and noise. Every writer bumps the expected tally
// for exactly what it wrote; copies (replays, forks) are written elsewhere and bump nothing.

export interface Gen {
  /** The corpus root; files are named relative to it in the expected answer. */
  root: string;
  rng: Rng;
  text: TextPool;
  tally: ExpectedTally;
  big: BigContent;
}

export const MAIN_MODELS = ['claude-opus-5-5', 'claude-sonnet-4-5'];
export const SUBAGENT_MODELS = ['claude-haiku-4-5', 'claude-sonnet-4-5'];
export const AGENT_TYPES = ['Explore', 'general-purpose', 'Plan'];

/** One transcript file. Main-thread conversation rows can be kept for a later replay or fork. */
export class TranscriptFile {
  private readonly writer: LineWriter;
  /** Main-thread user/assistant/system rows, in order, when this file may be replayed or forked. */
  readonly history: Row[] | null;
  /** 2.1 writes its large rows once per file: startup attachments, request shape, full prompt snapshot. */
  readonly once = { startup: false, shapeHash: '', fullSnapshot: false };

  constructor(private readonly gen: Gen, readonly path: string, keepHistory: boolean) {
    this.writer = new LineWriter(path);
    this.history = keepHistory ? [] : null;
    gen.tally.files++;
  }

  /** Rows written so far are not part of the conversation a replay or fork copies. */
  forgetHistory(): void {
    this.history?.splice(0);
  }

  row(row: Row, keep = false): void {
    this.writer.write(JSON.stringify(row) + '\n');
    this.gen.tally.row(row.type as string);
    if (keep && this.history) this.history.push(row);
  }

  /** A line a reader must count and skip. */
  badLine(text: string): void {
    this.writer.write(text + '\n');
  }

  /** The last line, half-written: no newline. */
  partialLine(row: Row): void {
    const json = JSON.stringify(row);
    this.writer.write(json.slice(0, Math.floor(json.length / 2)));
    this.gen.tally.skippedLines.partial_last_line++;
  }

  /** Closes the file and dates it like Claude Code would: modified at its last row's time. */
  close(lastRowMs: number): void {
    this.writer.close();
    utimesSync(this.path, new Date(lastRowMs), new Date(lastRowMs));
    this.gen.tally.bytes += this.writer.bytes;
  }
}

interface ToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

type ForcedOutcome = { kind: 'deny'; denial: DenialKind } | { kind: 'error' } | { kind: 'interrupt' } | { kind: 'unanswered' };

const ACCEPTED = { decision: 'accept', source: 'config', reasonType: 'rule', ruleSource: 'cliArg' };

/** A thread of rows written by one process: the main conversation, or one subagent. */
export class Thread {
  parentUuid: string | null = null;
  private pendingBlobs: Row[] = [];
  /** Prompts in this process (0-based; a resumed process starts again at 0) and in this session. */
  private promptIndex = 0;
  private turnIndex = 0;
  private resumed = false;
  private lastAssistantUuid = '';
  private lastPromptText = '';
  private stepsThisTurn = 0;
  readonly model: string;
  readonly kit: ToolKit;
  /** 2.1 sessions run with hooks configured write a stop_hook_summary row at the end of each turn. */
  private readonly hooks: boolean;
  private promptId: string;

  constructor(
    readonly gen: Gen,
    readonly file: TranscriptFile,
    readonly env: Envelope,
    public clock: number,
    readonly projectDir: string,
    /** A subagent: its type, and the parent turn's promptId (which its user rows carry). */
    private readonly agent?: { type: string; promptId: string },
  ) {
    this.promptId = agent?.promptId ?? '';
    this.model = env.agentId ? gen.rng.pick(SUBAGENT_MODELS) : gen.rng.pick(MAIN_MODELS);
    this.kit = { rng: gen.rng, text: gen.text, cwd: env.cwd };
    this.hooks = gen.rng.chance(0.5);
  }

  get modern(): boolean {
    return this.env.style.modern;
  }

  get isMain(): boolean {
    return this.env.agentId === undefined;
  }

  tick(minMs: number, maxMs: number): string {
    this.clock += this.gen.rng.int(minMs, maxMs);
    return new Date(this.clock).toISOString();
  }

  /** A conversation row (user / assistant / system / attachment): envelope, uuid chain. */
  private conversationRow(body: Row, keep: boolean): Row {
    const row = stamp(this.env, this.parentUuid, body);
    this.file.row(row, keep && this.isMain);
    this.parentUuid = row.uuid as string;
    return row;
  }

  private attachment({ attachment, ...rendering }: Row): void {
    this.conversationRow({ attachment, type: 'attachment', uuid: this.gen.rng.uuid(), timestamp: this.tick(0, 2), ...rendering }, false);
  }

  /** A user row; `flags` go right after `message`, `after` after the timestamp (the order 2.1 writes). */
  private userRow(content: unknown, flags: Row = {}, after: Row = {}): Row {
    const timestamp = this.tick(5, 900);
    const promptId = this.modern ? { promptId: this.promptId } : {};
    return this.conversationRow({ ...promptId, type: 'user', message: { role: 'user', content }, ...flags, uuid: this.gen.rng.uuid(), timestamp, ...after }, true);
  }

  private sessionRow(row: Row): void {
    this.file.row(row);
  }

  // ---- prompts and the rows around requests ----

  /** A real user prompt, with what a 2.1 process writes around it. */
  prompt(text: string): void {
    const { rng, big } = this.gen;
    this.promptId = rng.uuid();
    this.lastPromptText = text;
    this.stepsThisTurn = 0;
    const sessionId = this.env.sessionId;
    if (!this.modern) {
      this.userRow(rng.chance(0.7) ? text : [{ type: 'text', text }]);
      return;
    }
    this.sessionRow({ type: 'queue-operation', operation: 'enqueue', timestamp: this.tick(1, 3), sessionId, content: text });
    this.sessionRow({ type: 'queue-operation', operation: 'dequeue', timestamp: this.tick(1, 3), sessionId });
    this.turnIndex++;
    this.userRow(text, {}, {
      permissionMode: 'default', promptSource: 'sdk', sentAtMs: this.clock - 2, rowSource: 'local', turnOrigin: 'sdk',
      turnPosition: { promptIndex: this.promptIndex, turnIndex: this.turnIndex },
    });
    this.promptIndex++;
    if (!this.file.once.startup) {
      this.file.once.startup = true;
      for (const kind of MAIN_STARTUP) this.attachment(startupAttachment(kind, big, this.model, this.env.cwd));
      this.sessionRow({ type: 'atis-latch', atis: '', sessionId });
      for (const a of contextAttachments(new Date(this.clock).toISOString().slice(0, 10))) this.attachment(a);
      this.attachment(promptSnapshot(big, false));
      this.pendingBlobs.push({ role: 'user', content: [{ type: 'text', text: '<system-reminder>\nAttribution for git commits.\n</system-reminder>' }, { type: 'text', text }] }, systemBlobMessage(big));
    }
  }

  /** A subagent's first row: the task prompt from the Task/Agent call, then (2.1) its own startup rows. */
  agentStart(prompt: string): void {
    const { big } = this.gen;
    this.userRow(prompt, this.modern ? { rowSource: 'recorded' } : {});
    if (!this.modern) return;
    for (const kind of SUBAGENT_STARTUP) this.attachment(startupAttachment(kind, big, this.model, this.env.cwd));
    for (const a of contextAttachments(new Date(this.clock).toISOString().slice(0, 10))) this.attachment(a);
    this.attachment(promptSnapshot(big, false));
    this.pendingBlobs.push({ role: 'user', content: [{ type: 'text', text: prompt }] }, systemBlobMessage(big));
  }

  /** The rows a 2.1 process writes before each model request; returns the request's id (requestRef). */
  private beforeRequest(): string {
    const { rng, big } = this.gen;
    const id = rng.uuid();
    if (!this.modern) return id;
    const { sessionId, style, agentId } = this.env;
    const agent = agentId === undefined ? {} : { agentId };
    const timestamp = this.tick(5, 40);
    if (this.file.once.shapeHash === '') {
      this.file.once.shapeHash = rng.hex(64);
      this.sessionRow(apiRequestShape(big, sessionId, agent, this.file.once.shapeHash, timestamp, style.version));
    }
    const tail: string[] = [];
    for (const message of this.pendingBlobs) {
      const hash = rng.hex(64);
      tail.push(hash);
      this.sessionRow({ type: 'api-request-blob', sessionId, ...agent, hash, message });
    }
    this.pendingBlobs = [];
    const querySource = this.agent ? `agent:builtin:${this.agent.type}` : 'sdk';
    this.sessionRow(apiRequest(sessionId, agent, id, timestamp, style.version, querySource, this.file.once.shapeHash, this.model, tail, rng.hex(64)));
    if (this.isMain) this.sessionRow({ type: 'tools-used', tools: ['Bash'], sessionId });
    return id;
  }

  // ---- assistant messages ----

  private usage(): Usage {
    const { rng } = this.gen;
    return {
      input_tokens: rng.int(1, 60),
      cache_creation_input_tokens: rng.chance(0.6) ? rng.int(0, 30000) : 0,
      cache_read_input_tokens: rng.int(0, 180000),
      output_tokens: rng.int(8, 4000),
    };
  }

  /**
   * One API response, written as one row per content block sharing message.id and requestId. Each
   * row repeats usage: either the final one on every row (as recorded with the scripted server), or
   * a smaller streaming output_tokens and no stop_reason on the earlier rows; the last row is complete.
   */
  private assistant(blocks: Row[], stopReason: string | null): Row {
    const { rng, tally } = this.gen;
    const requestRef = this.beforeRequest();
    const messageId = rng.apiId('msg_01');
    const requestId = rng.chance(this.env.style.missingRequestId) ? undefined : rng.apiId('req_011C');
    const usage = this.usage();
    const streamed = rng.chance(0.5);
    let last: Row = {};
    blocks.forEach((block, i) => {
      const final = i === blocks.length - 1 || !streamed;
      const u = final ? usage : { ...usage, output_tokens: Math.max(1, Math.floor((usage.output_tokens * (i + 1)) / (blocks.length + 1))) };
      const message: Row = {
        id: messageId, type: 'message', role: 'assistant', model: this.model, content: [block],
        stop_reason: final ? stopReason : null, stop_sequence: null, usage: usageObject(u, this.modern),
      };
      const request = requestId ? { requestId } : {};
      const timestamp = this.tick(50, 4000);
      const body: Row = this.modern
        ? {
          message: { ...message, stop_details: null },
          ...(block.type === 'tool_use' ? { toolInputStreamMs: rng.int(1, 900) } : {}),
          apiBlockIndex: i, ...request, requestRef, requestedModel: this.model, promptCacheRequested: '5m',
          ...(this.agent ? { attributionAgent: this.agent.type } : {}),
          type: 'assistant', uuid: rng.uuid(), timestamp, effort: 'medium', perTurnEffort: 'medium', madeBy: 'model',
        }
        : { message, ...request, type: 'assistant', uuid: rng.uuid(), timestamp };
      last = this.conversationRow(body, true);
    });
    tally.chat(this.env.sessionId, relative(this.gen.root, this.file.path), this.model, {
      input: usage.input_tokens, output: usage.output_tokens,
      cacheRead: usage.cache_read_input_tokens, cacheCreation: usage.cache_creation_input_tokens,
    });
    this.lastAssistantUuid = last.uuid as string;
    return last;
  }

  private textBlocks(withThinking: boolean): Row[] {
    const { rng, text } = this.gen;
    const blocks: Row[] = [];
    if (withThinking) blocks.push({ type: 'thinking', thinking: text.text(rng, rng.int(100, 800)), signature: rng.hex(96) });
    blocks.push({ type: 'text', text: text.text(rng, rng.int(20, 700)) });
    return blocks;
  }

  answer(): void {
    this.assistant(this.textBlocks(this.gen.rng.chance(0.4)), 'end_turn');
  }

  /** An assistant message that starts to answer and is cut off by the user. */
  interruptedAnswer(): void {
    this.assistant([{ type: 'text', text: this.gen.text.text(this.gen.rng, 80) }], null);
    this.marker(INTERRUPT);
  }

  apiError(): void {
    const { rng } = this.gen;
    const status = rng.pick(['500 {"type":"error","error":{"type":"api_error","message":"Internal server error"}}', '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}']);
    const zero = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    this.conversationRow({
      message: {
        id: rng.uuid(), container: null, model: '<synthetic>', role: 'assistant', stop_reason: 'stop_sequence', stop_sequence: '', type: 'message',
        usage: usageObject(zero, false), content: [{ type: 'text', text: `API Error: ${status}` }],
      },
      type: 'assistant', uuid: rng.uuid(), timestamp: this.tick(1000, 30000), isApiErrorMessage: true,
    }, true);
  }

  marker(text: string): void {
    this.userRow([{ type: 'text', text }]);
  }

  /** The end of a turn that got an answer: 2.1 writes its Stop hook summary and the last prompt. */
  private endOfTurn(): void {
    if (!this.modern || !this.isMain) return;
    const { rng } = this.gen;
    if (this.hooks) {
      this.conversationRow({
        type: 'system', subtype: 'stop_hook_summary', hookCount: 1, hookInfos: [{ command: 'ccotel hook', durationMs: rng.int(1, 40) }],
        hookErrors: [], failedHookErrorIndexes: [], hookAdditionalContext: [], preventedContinuation: false, stopReason: '', hasOutput: false,
        level: 'suggestion', timestamp: this.tick(5, 30), uuid: rng.uuid(), toolUseID: rng.uuid(),
      }, true);
    }
    this.sessionRow({ type: 'last-prompt', lastPrompt: this.lastPromptText.slice(0, 200), leafUuid: this.parentUuid, sessionId: this.env.sessionId });
  }

  // ---- tools ----

  /**
   * One model request that calls 1–3 tools in parallel, then their results in shuffled order.
   * `forced` makes the first call end a given way (all of them for an interrupt); others succeed or
   * fail at random.
   */
  toolStep(forced?: ForcedOutcome, toolNames?: string[]): void {
    const { rng, tally, big } = this.gen;
    const count = toolNames?.length ?? (rng.chance(0.3) ? rng.int(2, 3) : 1);
    const calls: ToolCall[] = Array.from({ length: count }, (_, i) => {
      const name = toolNames?.[i] ?? (i === 0 && forced?.kind === 'deny' ? rng.pick(GUARDED_TOOLS) : rng.pick(TOOL_NAMES));
      return { id: rng.apiId('toolu_01'), name, input: toolInput(this.kit, name) };
    });
    const blocks: Row[] = rng.chance(0.5) ? [{ type: 'text', text: this.gen.text.text(rng, rng.int(20, 300)) }] : [];
    for (const c of calls) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: c.input });
    const assistantRow = this.assistant(blocks, 'tool_use');
    if (this.modern && this.isMain && this.stepsThisTurn === 0) {
      this.sessionRow({ type: 'last-prompt', lastPrompt: this.lastPromptText.slice(0, 200), leafUuid: assistantRow.uuid, sessionId: this.env.sessionId });
      this.sessionRow({ type: 'atis-latch', atis: '', sessionId: this.env.sessionId });
    }
    this.stepsThisTurn++;

    if (forced?.kind === 'unanswered') {
      for (const c of calls) tally.tool(c.name, 'unanswered');
      return;
    }
    const results = calls.map((c, i): [ToolCall, ToolResult] => {
      if (forced?.kind === 'interrupt') return [c, toolInterrupted(this.kit, c.name)];
      if (i === 0 && forced?.kind === 'deny') return [c, toolDenial(this.kit, forced.denial, c.name, c.input)];
      if ((i === 0 && forced?.kind === 'error') || rng.chance(0.08)) return [c, toolFailure(this.kit, c.name, c.input)];
      return [c, toolSuccess(this.kit, c.name, c.input)];
    });
    for (const [call, result] of rng.shuffle(results)) {
      this.toolResult(call, result, assistantRow.uuid as string);
      tally.tool(call.name, result.outcome);
    }
    if (forced?.kind === 'interrupt') {
      this.marker(INTERRUPT_FOR_TOOL);
      return;
    }
    if (this.modern && !this.file.once.fullSnapshot) {
      this.file.once.fullSnapshot = true;
      this.attachment(promptSnapshot(big, true));
      if (this.agent) {
        this.attachment(startupAttachment('agent_listing_delta', big, this.model, this.env.cwd));
        this.pendingBlobs.push({ role: 'system', content: [{ type: 'text', text: `Available agent types for the Agent tool:\n${big.agentListing.join('\n')}` }] });
      }
    }
    if (this.modern && this.isMain && this.stepsThisTurn === 5) {
      const text = "The user hasn't heard from you in a while. As you continue, keep them updated when there's something to tell.";
      this.attachment({ attachment: { type: 'silent_turn_reminder', text }, rendered: [{ content: `<system-reminder>\n${text}\n</system-reminder>` }], renderedRole: 'system' });
      this.pendingBlobs.push({ role: 'user', content: [{ type: 'text', text: `<system-reminder>\n${text}\n</system-reminder>` }] });
    }
  }

  /** A tool_result row, with the block field order and row fields each version writes for each outcome. */
  private toolResult(call: ToolCall, result: ToolResult, sourceUuid: string): void {
    const success = result.outcome === 'success';
    let block: Row;
    if (!this.modern) {
      block = { tool_use_id: call.id, type: 'tool_result', content: result.content, ...(result.isError ? { is_error: true } : {}) };
      this.userRow([block], {}, { toolUseResult: result.toolUseResult });
      return;
    }
    if (success) block = { tool_use_id: call.id, type: 'tool_result', content: result.content, ...(call.name === 'Bash' ? { is_error: false } : {}) };
    else block = { type: 'tool_result', content: result.content, is_error: true, tool_use_id: call.id };
    // 2.1 keeps the structured result on the main thread only.
    const after: Row = this.isMain ? { toolUseResult: result.toolUseResult } : {};
    if (call.name === 'Bash' && result.outcome !== 'denied') after.sandboxed = false;
    if (result.outcome === 'denied') after.toolDenialKind = 'user-rejected';
    after.sourceToolAssistantUUID = sourceUuid;
    after.permissionDecision = result.outcome === 'denied' ? { decision: 'reject', source: 'config', reasonCode: 'unknown' } : ACCEPTED;
    this.userRow([block], {}, after);
  }

  /** The main thread calls Task/Agent; the subagent runs in its own thread; its result carries agentId. */
  subagentCall(): void {
    const { rng, text, tally } = this.gen;
    const layout: SubagentLayout = this.env.style.layout;
    const agentType = rng.pick(AGENT_TYPES);
    const prompt = text.text(rng, rng.int(60, 600));
    const call: ToolCall = {
      id: rng.apiId('toolu_01'), name: this.env.style.agentTool,
      input: { description: text.phrase(rng, 4), prompt, subagent_type: agentType },
    };
    const assistantRow = this.assistant([{ type: 'tool_use', id: call.id, name: call.name, input: call.input }], 'tool_use');
    const agentId = layout === 'nested' ? `a${rng.hex(16)}` : rng.hex(8);
    const agentEnv: Envelope = { ...this.env, agentId };
    const startMs = this.clock;
    let agentFile = this.file;
    if (layout !== 'inline') {
      const path = layout === 'legacy'
        ? join(this.projectDir, `agent-${agentId}.jsonl`)
        : join(this.projectDir, this.env.sessionId, 'subagents', `agent-${agentId}.jsonl`);
      agentFile = new TranscriptFile(this.gen, path, false);
    }
    const agent = new Thread(this.gen, agentFile, agentEnv, this.clock, this.projectDir, { type: agentType, promptId: this.promptId });
    agent.agentStart(prompt);
    const steps = rng.int(0, 3);
    const toolsUsed = new Set<string>();
    for (let i = 0; i < steps; i++) {
      const name = rng.pick(['Read', 'Grep', 'Glob', 'Bash']);
      toolsUsed.add(name);
      agent.toolStep(undefined, [name]);
    }
    agent.answer();
    if (agentFile !== this.file) agentFile.close(agent.clock);
    if (layout === 'nested') {
      const meta = JSON.stringify({
        agentType, isBuiltIn: true, description: call.input.description, toolUseId: call.id, spawnDepth: 1, requestShape: 'foreground',
        requestNonInteractive: true, model: agent.model, modelNotNamed: true, pickedEffortModel: agent.model, finished: true,
      });
      const metaPath = join(this.projectDir, this.env.sessionId, 'subagents', `agent-${agentId}.meta.json`);
      writeFileSync(metaPath, meta);
      utimesSync(metaPath, new Date(agent.clock), new Date(agent.clock));
      tally.bytes += Buffer.byteLength(meta);
    }
    this.clock = agent.clock;
    tally.subagent(agentType, layout);
    const report = text.text(rng, rng.int(100, 1200));
    const totalTokens = rng.int(1000, 90000);
    const content: ToolResultContent = this.modern
      ? [{ type: 'text', text: `  <tools-used-before-summary>${[...toolsUsed].join(', ')}</tools-used-before-summary>\n  \n[Subagent hand-back] The text below is the final report of a subagent.\n  ${report}\nagentId: ${agentId} (use SendMessage with to: '${agentId}' to continue this agent)\n<usage>subagent_tokens: ${totalTokens}\ntool_uses: ${steps}\nduration_ms: ${this.clock - startMs}</usage>` }]
      : [{ type: 'text', text: report }];
    const toolUseResult = this.modern
      ? {
        status: 'completed', prompt, agentId, agentType, toolsUsed: [...toolsUsed], content: [{ type: 'text', text: report }], resolvedModel: agent.model,
        totalDurationMs: this.clock - startMs, totalTokens, totalToolUseCount: steps, canContinueAgent: true,
      }
      : { status: 'completed', prompt, agentId, content: [{ type: 'text', text: report }], totalDurationMs: this.clock - startMs, totalTokens, totalToolUseCount: steps };
    this.toolResult(call, { outcome: 'success', content, isError: false, toolUseResult }, assistantRow.uuid as string);
    tally.tool(call.name, 'success');
  }

  // ---- rows that are not prompts ----

  compaction(legacyMarker: boolean): void {
    const { rng, text } = this.gen;
    const boundary = stamp(this.env, null, {
      logicalParentUuid: this.parentUuid, type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted', isMeta: false,
      timestamp: this.tick(1000, 60000), uuid: rng.uuid(), level: 'info', compactMetadata: { trigger: rng.pick(['auto', 'manual']), preTokens: rng.int(90000, 190000) },
    });
    this.file.row(boundary, true);
    this.parentUuid = boundary.uuid as string;
    const summary = `This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\n${text.text(rng, rng.int(500, 4000))}`;
    this.userRow(summary, legacyMarker ? {} : { isCompactSummary: true, isVisibleInTranscriptOnly: true });
    this.gen.tally.compactions++;
  }

  /** Rows that look like user input but are not prompts. */
  metaRows(kind: 'command' | 'reminder' | 'task-notification' | 'skill'): void {
    const { rng, text } = this.gen;
    switch (kind) {
      case 'command':
        this.userRow('<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.</local-command-caveat>', { isMeta: true });
        this.userRow('<command-name>/model</command-name>\n            <command-message>model</command-message>\n            <command-args></command-args>');
        this.userRow(`<local-command-stdout>Set model to ${rng.pick(MAIN_MODELS)}</local-command-stdout>`);
        break;
      case 'reminder':
        this.userRow(`<system-reminder>\n${text.text(rng, 200)}\n</system-reminder>`, { isMeta: true });
        break;
      case 'task-notification':
        this.userRow(`<task-notification>\n<task-id>${rng.hex(8)}</task-id>\n<status>completed</status>\n<summary>${text.phrase(rng, 6)}</summary>\n</task-notification>`);
        break;
      case 'skill':
        this.userRow([{ type: 'text', text: `Base directory for this skill: ${this.env.cwd}/.claude/skills/review\n\n${text.text(rng, 400)}` }], { isMeta: true });
        break;
    }
  }

  /** Rows a reader must skip: unknown types, broken JSON, non-objects, rows missing required fields. */
  noise(kind: 'unknown-type' | 'malformed' | 'not-object' | 'missing-fields'): void {
    const { rng, tally } = this.gen;
    const timestamp = this.tick(1, 50);
    switch (kind) {
      case 'unknown-type':
        this.file.badLine(JSON.stringify({ type: rng.pick(['future-widget-state', 'x-experimental-sync']), sessionId: this.env.sessionId, uuid: rng.uuid(), timestamp, payload: { n: rng.int(0, 99) } }));
        tally.skippedLines.unknown_type++;
        break;
      case 'malformed': {
        const json = JSON.stringify(stamp(this.env, this.parentUuid, { type: 'user', message: { role: 'user', content: 'lost' }, uuid: rng.uuid(), timestamp }));
        this.file.badLine(json.slice(0, rng.int(10, json.length - 2)));
        tally.skippedLines.malformed_json++;
        break;
      }
      case 'not-object':
        this.file.badLine(rng.pick(['[]', '"a string"', '42', 'null', '[{"type":"user"}]']));
        tally.skippedLines.not_object++;
        break;
      case 'missing-fields': {
        const row = rng.chance(0.5)
          ? stamp(this.env, this.parentUuid, { type: 'assistant', uuid: rng.uuid(), timestamp })
          : { uuid: rng.uuid(), timestamp, sessionId: this.env.sessionId, message: { role: 'user', content: 'no type' } };
        this.file.badLine(JSON.stringify(row));
        tally.skippedLines.missing_fields++;
        break;
      }
    }
  }

  /** What a process writes when it exits. */
  endOfProcess(): void {
    const { rng, text } = this.gen;
    const sessionId = this.env.sessionId;
    if (this.modern) {
      if (rng.chance(0.3)) this.sessionRow({ type: 'ai-title', aiTitle: text.phrase(rng, 5), sessionId });
      if (this.resumed) this.sessionRow({ type: 'mode', mode: 'normal', sessionId });
      const cacheCreation = rng.int(0, 90000);
      this.sessionRow({
        type: 'cost-state', sessionId, totalCostUSD: rng.int(1, 90000) / 10000, totalAPIDuration: rng.int(1000, 900000),
        totalAPIDurationWithoutRetries: rng.int(1000, 900000), totalToolDuration: rng.int(0, 300000), totalLinesAdded: rng.int(0, 400),
        totalLinesRemoved: rng.int(0, 200), totalDuration: rng.int(1000, 3600000), startTime: this.clock - rng.int(1000, 3600000),
        modelUsage: {
          [this.model]: {
            inputTokens: rng.int(100, 5000), outputTokens: rng.int(100, 90000), thinkingTokens: 0, cacheReadInputTokens: rng.int(0, 900000),
            cacheCreationInputTokens: cacheCreation, cacheCreationEphemeral5mInputTokens: cacheCreation, cacheCreationEphemeral1hInputTokens: 0,
            webSearchRequests: 0, costUSD: rng.int(1, 90000) / 10000,
          },
        },
        hasUnknownModelCost: false,
      });
    } else {
      this.sessionRow({ type: 'summary', summary: text.phrase(rng, 5), leafUuid: this.lastAssistantUuid || this.parentUuid });
      if (this.env.style.version.startsWith('2.')) {
        const messageId = rng.uuid();
        this.sessionRow({ type: 'file-history-snapshot', messageId, snapshot: { messageId, trackedFileBackups: {}, timestamp: new Date(this.clock).toISOString() }, isSnapshotUpdate: false });
      }
    }
  }

  /**
   * A later process continuing this session in the same file (2.1 `claude --resume`). Nothing marks it
   * but a time gap and the next prompt's turnPosition: promptIndex back to 0 while turnIndex goes on.
   */
  resumeProcess(gapMs: number): void {
    this.clock += gapMs;
    this.promptIndex = 0;
    this.resumed = true;
  }

  // ---- turns ----

  turn(kind: TurnKind): void {
    const { rng, text, tally } = this.gen;
    this.prompt(text.text(rng, rng.int(15, 400)).trim() || 'continue');
    // Turn kinds that end with an answer (or a result the user sees) get the end-of-turn rows.
    const answered = (): void => this.endOfTurn();
    const preamble = (): void => {
      if (rng.chance(0.5)) this.toolStep();
    };
    let outcome: TurnOutcome = 'completed';
    switch (kind) {
      case 'answer':
        this.answer();
        answered();
        break;
      case 'tools': {
        const steps = rng.int(1, rng.chance(0.1) ? 8 : 4);
        for (let i = 0; i < steps; i++) this.toolStep();
        this.answer();
        answered();
        break;
      }
      case 'parallel-tools':
        this.toolStep(undefined, ['Read', 'Grep', 'Bash']);
        this.answer();
        answered();
        break;
      case 'deny-interactive':
      case 'deny-rule':
      case 'deny-print-mode':
        preamble();
        this.toolStep({ kind: 'deny', denial: kind.slice('deny-'.length) as DenialKind });
        this.answer();
        answered();
        break;
      case 'tool-error':
        this.toolStep({ kind: 'error' });
        this.answer();
        answered();
        break;
      case 'interrupt-answer':
        preamble();
        this.interruptedAnswer();
        outcome = 'interrupted';
        break;
      case 'interrupt-tool':
        preamble();
        this.toolStep({ kind: 'interrupt' }, rng.chance(0.5) ? ['Bash'] : [rng.pick(TOOL_NAMES), 'Bash']);
        outcome = 'interrupted';
        break;
      case 'api-error':
        preamble();
        this.apiError();
        answered();
        outcome = 'error';
        break;
      case 'abandon-tool':
        preamble();
        this.toolStep({ kind: 'unanswered' });
        outcome = 'abandoned';
        break;
      case 'abandon-silent':
        outcome = 'abandoned';
        break;
      case 'subagent':
        preamble();
        this.subagentCall();
        this.answer();
        answered();
        break;
    }
    tally.turn(outcome);
  }
}

export const TURN_KINDS = [
  'answer', 'tools', 'parallel-tools', 'deny-interactive', 'deny-rule', 'deny-print-mode', 'tool-error',
  'interrupt-answer', 'interrupt-tool', 'api-error', 'abandon-tool', 'abandon-silent', 'subagent',
] as const;
export type TurnKind = (typeof TURN_KINDS)[number];
/** Turn kinds that only make sense as the last turn before a process stopped. */
export const LAST_TURN_KINDS: readonly TurnKind[] = ['abandon-tool', 'abandon-silent'];
