import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExpectedTally, SubagentLayout, TurnOutcome } from './expected.js';
import type { Rng } from './random.js';
import {
  apiRequest, apiRequestShape, promptSnapshot, stamp, startupAttachments, usageObject,
  type BigContent, type Envelope, type Row, type Usage,
} from './rows.js';
import type { TextPool } from './text.js';
import {
  GUARDED_TOOLS, INTERRUPT, INTERRUPT_FOR_TOOL, TOOL_NAMES, toolDenial, toolFailure, toolInput, toolInterrupted,
  toolSuccess, type DenialKind, type ToolKit, type ToolResult,
} from './tools.js';
import { LineWriter } from './writer.js';

// Writes conversations: turns of prompts, API responses (one row per content block), tool calls and
// their results, subagents, compactions, meta rows and noise. Every writer bumps the expected tally
// for exactly what it wrote; copies (replays, forks) are written elsewhere and bump nothing.

export interface Gen {
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

  constructor(private readonly gen: Gen, path: string, keepHistory: boolean) {
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

  close(): void {
    this.writer.close();
    this.gen.tally.bytes += this.writer.bytes;
  }
}

interface ToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

type ForcedOutcome = { kind: 'deny'; denial: DenialKind } | { kind: 'error' } | { kind: 'interrupt' } | { kind: 'unanswered' };

/** A thread of rows written by one process: the main conversation, or one subagent. */
export class Thread {
  parentUuid: string | null = null;
  private requestShape: string | null = null;
  private pendingBlobs: Row[] = [];
  private promptIndex = 0;
  private promptId = '';
  private lastAssistantUuid = '';
  private lastPromptText = '';
  readonly model: string;
  readonly kit: ToolKit;

  constructor(
    readonly gen: Gen,
    readonly file: TranscriptFile,
    readonly env: Envelope,
    public clock: number,
    readonly projectDir: string,
  ) {
    this.model = env.agentId ? gen.rng.pick(SUBAGENT_MODELS) : gen.rng.pick(MAIN_MODELS);
    this.kit = { rng: gen.rng, text: gen.text, cwd: env.cwd };
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

  private userRow(content: unknown, extra: Row = {}, prompt = false): Row {
    const timestamp = this.tick(5, 900);
    const modernPrompt = this.modern && prompt
      ? { permissionMode: 'default', promptSource: 'user', sentAtMs: this.clock - 2, rowSource: 'local', turnOrigin: 'user', turnPosition: { promptIndex: this.promptIndex, turnIndex: this.promptIndex + 1 } }
      : {};
    const promptId = this.modern && this.isMain ? { promptId: this.promptId } : {};
    const { isMeta, isCompactSummary, isVisibleInTranscriptOnly, ...after } = extra;
    const flags: Row = {};
    if (isMeta !== undefined) flags.isMeta = isMeta;
    if (isCompactSummary !== undefined) flags.isCompactSummary = isCompactSummary;
    if (isVisibleInTranscriptOnly !== undefined) flags.isVisibleInTranscriptOnly = isVisibleInTranscriptOnly;
    return this.conversationRow(
      { ...promptId, type: 'user', message: { role: 'user', content }, ...flags, uuid: this.gen.rng.uuid(), timestamp, ...after, ...modernPrompt },
      true,
    );
  }

  private sessionRow(row: Row): void {
    this.file.row(row);
  }

  // ---- prompts and the rows around requests ----

  /** A real user prompt, with what a 2.1 process writes around it. */
  prompt(text: string): void {
    const { rng } = this.gen;
    this.promptId = rng.uuid();
    this.lastPromptText = text;
    if (this.modern && this.isMain) {
      this.sessionRow({ type: 'queue-operation', operation: 'enqueue', timestamp: this.tick(1, 3), sessionId: this.env.sessionId, content: text });
      this.sessionRow({ type: 'queue-operation', operation: 'dequeue', timestamp: this.tick(1, 3), sessionId: this.env.sessionId });
    }
    const content = this.modern || rng.chance(0.7) ? text : [{ type: 'text', text }];
    this.userRow(content, {}, true);
    this.promptIndex++;
    if (this.modern) {
      const attachments = this.requestShape === null && this.isMain
        ? startupAttachments(this.gen.big, this.model, new Date(this.clock).toISOString().slice(0, 10))
        : [];
      for (const a of [...attachments, promptSnapshot(this.gen.big)]) this.conversationRow({ ...a, type: 'attachment', uuid: rng.uuid(), timestamp: this.tick(0, 2) }, false);
      this.sessionRow({ type: 'atis-latch', atis: '', sessionId: this.env.sessionId });
      this.pendingBlobs.push({ role: 'user', content: [{ type: 'text', text }] });
    }
  }

  /** The api-request* rows a 2.1 process writes before each model request. */
  private beforeRequest(): void {
    if (!this.modern) return;
    const { rng } = this.gen;
    const timestamp = this.tick(5, 40);
    if (this.requestShape === null) {
      this.requestShape = rng.hex(64);
      this.sessionRow(apiRequestShape(this.gen.big, this.env.sessionId, this.requestShape, timestamp, this.env.style.version));
    }
    const tail: string[] = [];
    for (const message of this.pendingBlobs) {
      const hash = rng.hex(64);
      tail.push(hash);
      this.sessionRow({ type: 'api-request-blob', sessionId: this.env.sessionId, hash, message });
    }
    this.pendingBlobs = [];
    this.sessionRow(apiRequest(this.env.sessionId, rng.uuid(), timestamp, this.env.style.version, this.requestShape, this.model, tail, rng.hex(64)));
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

  /** One API response, written as one row per content block; usage repeated, complete on the last row. */
  private assistant(blocks: Row[], stopReason: string | null): Row {
    const { rng, tally } = this.gen;
    this.beforeRequest();
    const messageId = rng.apiId('msg_01');
    const requestId = rng.chance(this.env.style.missingRequestId) ? undefined : rng.apiId('req_011C');
    const usage = this.usage();
    let last: Row = {};
    blocks.forEach((block, i) => {
      const final = i === blocks.length - 1;
      const u = final ? usage : { ...usage, output_tokens: Math.max(1, Math.floor((usage.output_tokens * (i + 1)) / (blocks.length + 1))) };
      const message = {
        model: this.model, id: messageId, type: 'message', role: 'assistant', content: [block],
        stop_reason: final ? stopReason : null, stop_sequence: null, usage: usageObject(u, this.modern),
      };
      const modernExtra = this.modern
        ? { requestedModel: this.model, effort: 'medium', apiBlockIndex: i }
        : {};
      last = this.conversationRow(
        { message, ...(requestId ? { requestId } : {}), type: 'assistant', uuid: rng.uuid(), timestamp: this.tick(50, 4000), ...modernExtra },
        true,
      );
    });
    tally.chat(this.env.sessionId, this.model, {
      input: usage.input_tokens, output: usage.output_tokens,
      cacheRead: usage.cache_read_input_tokens, cacheCreation: usage.cache_creation_input_tokens,
    });
    this.lastAssistantUuid = last.uuid as string;
    if (this.modern) this.pendingBlobs.push({ role: 'assistant', content: blocks });
    return last;
  }

  private textBlocks(withThinking: boolean): Row[] {
    const { rng, text } = this.gen;
    const blocks: Row[] = [];
    if (withThinking) blocks.push({ type: 'thinking', thinking: text.text(rng, rng.int(100, 1500)), signature: rng.hex(96) });
    blocks.push({ type: 'text', text: text.text(rng, rng.int(40, 1800)) });
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
        usage: usageObject(zero, this.modern), content: [{ type: 'text', text: `API Error: ${status}` }],
      },
      type: 'assistant', uuid: rng.uuid(), timestamp: this.tick(1000, 30000), isApiErrorMessage: true,
    }, true);
  }

  marker(text: string): void {
    this.userRow([{ type: 'text', text }]);
  }

  // ---- tools ----

  /**
   * One model request that calls 1–3 tools in parallel, then their results in shuffled order.
   * `forced` makes the first call end a given way; others succeed or fail at random.
   */
  toolStep(forced?: ForcedOutcome, toolNames?: string[]): void {
    const { rng, tally } = this.gen;
    const guarded = forced?.kind === 'deny';
    const count = toolNames?.length ?? rng.int(1, rng.chance(0.3) ? 3 : 1);
    const calls: ToolCall[] = Array.from({ length: count }, (_, i) => {
      const name = toolNames?.[i] ?? (i === 0 && guarded ? rng.pick(GUARDED_TOOLS) : rng.pick(TOOL_NAMES));
      return { id: rng.apiId('toolu_01'), name, input: toolInput(this.kit, name) };
    });
    const blocks: Row[] = rng.chance(0.5) ? [{ type: 'text', text: this.gen.text.text(rng, rng.int(20, 300)) }] : [];
    for (const c of calls) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: c.input });
    const assistantRow = this.assistant(blocks, 'tool_use');

    if (forced?.kind === 'unanswered') {
      for (const c of calls) tally.tool(c.name, 'unanswered');
      return;
    }
    const results = calls.map((c, i): [ToolCall, ToolResult, Parameters<ExpectedTally['tool']>[1]] => {
      if (forced?.kind === 'interrupt') return [c, toolInterrupted(this.kit, c.name), 'interrupted'];
      if (i === 0 && forced?.kind === 'deny') return [c, toolDenial(this.kit, forced.denial, c.name, c.input), 'denied'];
      if ((i === 0 && forced?.kind === 'error') || rng.chance(0.08)) return [c, toolFailure(this.kit, c.name, c.input), 'error'];
      return [c, toolSuccess(this.kit, c.name, c.input), 'success'];
    });
    for (const [call, result, outcome] of rng.shuffle(results)) {
      this.toolResult(call, result, assistantRow.uuid as string);
      tally.tool(call.name, outcome);
    }
    if (forced?.kind === 'interrupt') this.marker(INTERRUPT_FOR_TOOL);
  }

  private toolResult(call: ToolCall, result: ToolResult, sourceUuid: string): void {
    const block: Row = { tool_use_id: call.id, type: 'tool_result', content: result.content };
    if (result.isError) block.is_error = true;
    this.userRow([block], { toolUseResult: result.toolUseResult, ...(this.modern ? { sourceToolAssistantUUID: sourceUuid } : {}) });
    if (this.modern) this.pendingBlobs.push({ role: 'user', content: [block] });
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
    const agent = new Thread(this.gen, agentFile, agentEnv, this.clock, this.projectDir);
    agent.userRow(prompt);
    const steps = rng.int(0, 3);
    for (let i = 0; i < steps; i++) agent.toolStep(undefined, [rng.pick(['Read', 'Grep', 'Glob', 'Bash'])]);
    agent.answer();
    if (agentFile !== this.file) {
      agentFile.close();
      if (layout === 'nested') {
        const meta = JSON.stringify({ agentType, spawnDepth: 1 });
        writeFileSync(join(this.projectDir, this.env.sessionId, 'subagents', `agent-${agentId}.meta.json`), meta);
        tally.bytes += Buffer.byteLength(meta);
      }
    }
    this.clock = agent.clock;
    tally.subagent(agentType, layout);
    const answer = text.text(rng, rng.int(100, 1200));
    this.toolResult(call, {
      content: [{ type: 'text', text: answer }],
      isError: false,
      toolUseResult: {
        status: 'completed', prompt, agentId, content: [{ type: 'text', text: answer }],
        totalDurationMs: this.clock - startMs, totalTokens: rng.int(1000, 90000), totalToolUseCount: steps,
      },
    }, assistantRow.uuid as string);
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

  /** What a 2.1 process writes when it goes idle or exits after a turn. */
  endOfProcess(): void {
    const { rng, text } = this.gen;
    const sessionId = this.env.sessionId;
    if (this.modern) {
      this.sessionRow({ type: 'last-prompt', lastPrompt: this.lastPromptText.slice(0, 200), leafUuid: this.parentUuid, sessionId });
      this.sessionRow({ type: 'ai-title', aiTitle: text.phrase(rng, 5), sessionId });
      this.sessionRow({ type: 'tools-used', tools: TOOL_NAMES.slice(0, rng.int(1, TOOL_NAMES.length)), sessionId });
      this.sessionRow({ type: 'mode', mode: 'default', sessionId });
      this.sessionRow({
        type: 'cost-state', sessionId, totalCostUSD: rng.int(1, 90000) / 10000, totalAPIDuration: rng.int(1000, 900000),
        totalToolDuration: rng.int(0, 300000), totalLinesAdded: rng.int(0, 400), totalLinesRemoved: rng.int(0, 200),
        modelUsage: { [this.model]: { inputTokens: rng.int(100, 5000), outputTokens: rng.int(100, 90000), cacheReadInputTokens: rng.int(0, 900000), cacheCreationInputTokens: rng.int(0, 90000) } },
      });
    } else {
      this.sessionRow({ type: 'summary', summary: text.phrase(rng, 5), leafUuid: this.lastAssistantUuid || this.parentUuid });
      if (this.env.style.version.startsWith('2.')) {
        const messageId = rng.uuid();
        this.sessionRow({ type: 'file-history-snapshot', messageId, snapshot: { messageId, trackedFileBackups: {}, timestamp: new Date(this.clock).toISOString() }, isSnapshotUpdate: false });
      }
    }
  }

  /** A 2.1 process resuming this session in the same file (claude --resume). */
  resumeMarker(): void {
    this.requestShape = null;
    this.sessionRow({ type: 'resume-head-vouch', sessionId: this.env.sessionId, sum: this.gen.rng.hex(16) });
  }

  // ---- turns ----

  turn(kind: TurnKind): void {
    const { rng, text, tally } = this.gen;
    this.prompt(text.text(rng, rng.int(15, 400)).trim() || 'continue');
    const preamble = (): void => {
      if (rng.chance(0.5)) this.toolStep();
    };
    let outcome: TurnOutcome = 'completed';
    switch (kind) {
      case 'answer':
        this.answer();
        break;
      case 'tools': {
        const steps = rng.int(1, 4);
        for (let i = 0; i < steps; i++) this.toolStep();
        this.answer();
        break;
      }
      case 'parallel-tools':
        this.toolStep(undefined, ['Read', 'Grep', 'Bash']);
        this.answer();
        break;
      case 'deny-interactive':
      case 'deny-rule':
      case 'deny-print-mode':
        preamble();
        this.toolStep({ kind: 'deny', denial: kind.slice('deny-'.length) as DenialKind });
        this.answer();
        break;
      case 'tool-error':
        this.toolStep({ kind: 'error' });
        this.answer();
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
