// Hook spool + shell log for the sessions of a generated transcript corpus, and what a correct reader of all
// three must report. Built by reading the corpus files (not from the generator's internals), so it works on
// any tree `generateCorpus` wrote. Semantics: docs/HOOKS.md, "The generated hooks and shell log".
//
// Hooks and shell logs are written only for 2.1-style sessions (user rows with `promptId` / `turnPosition`):
// older Claude Code had no tool_use_id / prompt_id in its hooks and no CLAUDE_CODE_SESSION_ID in the Bash tool.
// The expected answer still covers the whole corpus (tool outcomes and transcript-derived blocks and starts of
// the older sessions too), since the store holds all of it.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rng } from './random.js';

export interface HooksShellOptions {
  seed: number;
  /** The corpus config dirs (`Expected.configDirs`). */
  configDirs: string[];
  spoolDir: string;
  shellLogDir: string;
}

export interface HooksShellExpected {
  /** Spool files written (one per hook event). */
  hookEvents: number;
  /** Shell log lines written. */
  shellLines: number;
  /** Sessions that got hooks (2.1-style, plus the one whose transcript is gone). */
  sessionsWithHooks: number;
  /** Session starts by source, transcript and hooks together, each start once. */
  sessionStarts: Record<string, number>;
  /** SessionStart hooks written: every one of them is a start whose record says `ccotel.start.origin` = hook. */
  hookSessionStarts: number;
  resumeFrequency: number;
  sessionEnds: Record<string, number>;
  /** `tool|source` → blocks: one per denied call, whoever (transcript or hooks) tells it. */
  permissionBlocks: Record<string, number>;
  toolCallsByOutcome: Record<string, number>;
  toolSuccessRate: number;
  /** tool_use_id → hook events on its execute_tool span, in firing order (2.1 sessions only). */
  toolHookEvents: Record<string, string[]>;
  /** Bash tool_use_id → the exit status of its one shell command (`null`: it never ended). */
  shellCommands: Record<string, number | null>;
  /** Shell commands of the session with no transcript: spans with no Bash span to go under. */
  shellWithoutToolSpan: number;
  /** Turns (prompt ids) that get a UserPromptSubmit. */
  promptIds: string[];
  /** The session whose transcript is gone (hooks and shell log only). */
  hookOnlySessionId: string;
}

type Json = Record<string, unknown>;

interface Row extends Json {
  type?: string;
  uuid?: string;
  timestamp?: string;
  sessionId?: string;
  promptId?: string;
  cwd?: string;
  isSidechain?: boolean;
  isMeta?: boolean;
  isCompactSummary?: boolean;
  isApiErrorMessage?: boolean;
  subtype?: string;
  turnPosition?: { promptIndex?: number; turnIndex?: number };
  forkedFrom?: unknown;
  toolUseResult?: unknown;
  permissionDecision?: { decision?: string; source?: string };
  toolDenialKind?: string;
  compactMetadata?: { trigger?: string };
  message?: { model?: string; content?: unknown };
}

interface Block {
  type?: string;
  id?: string;
  name?: string;
  input?: unknown;
  text?: string;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
}

interface TranscriptFile {
  path: string;
  rows: Row[];
  firstMs: number;
  /** Under `<session>/subagents/`, or a legacy `agent-*.jsonl`. */
  subagent: boolean;
}

type Outcome = 'success' | 'error' | 'denied' | 'interrupted' | 'unanswered';

interface ToolCall {
  id: string;
  name: string;
  input: unknown;
  useMs: number;
  result?: { row: Row; block: Block; ms: number };
}

const SYNTHETIC_PREFIXES = [
  '<command-name>', '<local-command-stdout>', '<local-command-caveat>', '<system-reminder>', '<task-notification>',
  '[Request interrupted by user', 'This session is being continued from a previous conversation',
];
const INTERRUPT_FOR_TOOL = '[Request interrupted by user for tool use]';
const USER_DENIAL = [/^The user doesn't want to (proceed with|take) this/, /^User rejected tool use/];
const DENIAL_TEXT = [/has been denied\./, /needs approval/, /requires approval/, /haven't granted it yet/];

// ---- reading the corpus ----------------------------------------------------------------------------------

function readTranscript(path: string, subagent: boolean): TranscriptFile {
  const rows: Row[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) rows.push(value as Row);
    } catch {
      // broken and half-written lines: not rows
    }
  }
  const times = rows.map((row) => Date.parse(row.timestamp ?? '')).filter((ms) => !Number.isNaN(ms));
  return { path, rows, firstMs: Math.min(...times), subagent };
}

function listTranscripts(configDirs: string[]): TranscriptFile[] {
  const files: TranscriptFile[] = [];
  for (const configDir of configDirs) {
    const projects = join(configDir, 'projects');
    let names: string[];
    try {
      names = readdirSync(projects);
    } catch {
      continue;
    }
    for (const project of names) {
      for (const entry of readdirSync(join(projects, project), { withFileTypes: true })) {
        const path = join(projects, project, entry.name);
        if (entry.isFile() && entry.name.endsWith('.jsonl')) files.push(readTranscript(path, entry.name.startsWith('agent-')));
        if (!entry.isDirectory()) continue;
        const subagents = join(path, 'subagents');
        let agentFiles: string[] = [];
        try {
          agentFiles = readdirSync(subagents).filter((name) => name.endsWith('.jsonl'));
        } catch {
          // a session dir without subagents
        }
        for (const name of agentFiles) files.push(readTranscript(join(subagents, name), true));
      }
    }
  }
  // README: "first" means the file whose rows start earliest.
  return files.sort((a, b) => a.firstMs - b.firstMs || (a.path < b.path ? -1 : 1));
}

const ms = (row: Row) => Date.parse(row.timestamp ?? '');
const blocksOf = (row: Row): Block[] => (Array.isArray(row.message?.content) ? (row.message.content as Block[]) : []);

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Block[]).map((block) => (typeof block?.text === 'string' ? block.text : '')).join('\n');
}

/** The prompt text of a real prompt (README "turns"), else undefined. */
function promptText(row: Row): string | undefined {
  if (row.type !== 'user' || row.isSidechain || row.isMeta || row.isCompactSummary) return undefined;
  const content = row.message?.content;
  const onlyText = typeof content === 'string' || (Array.isArray(content) && content.length > 0 && (content as Block[]).every((b) => b?.type === 'text'));
  if (!onlyText) return undefined;
  const text = textOf(content);
  return SYNTHETIC_PREFIXES.some((prefix) => text.startsWith(prefix)) ? undefined : text;
}

function isInterruptMarker(row: Row): boolean {
  return row.type === 'user' && !blocksOf(row).some((b) => b.type === 'tool_result') && textOf(row.message?.content).startsWith('[Request interrupted by user');
}

/** README "tool calls": the outcome of a call from its first result. */
function outcomeOf(call: ToolCall): Outcome {
  if (!call.result) return 'unanswered';
  const { row, block } = call.result;
  const text = textOf(block.content);
  const structured = typeof row.toolUseResult === 'object' && row.toolUseResult !== null ? (row.toolUseResult as { interrupted?: unknown }) : undefined;
  if (structured?.interrupted === true || text.startsWith(INTERRUPT_FOR_TOOL)) return 'interrupted';
  if (block.is_error !== true) return 'success';
  const denied = row.toolDenialKind !== undefined || row.toolUseResult === 'User rejected tool use' || USER_DENIAL.some((re) => re.test(text)) || DENIAL_TEXT.some((re) => re.test(text));
  return denied ? 'denied' : 'error';
}

/**
 * Who refused a denied call, as the transcript tells it: the structured decision of 2.1 (`source` hook → hook,
 * user… → user, anything else — config, a rule — → rule), else the wording (interactive rejection → user,
 * the rule and print-mode wordings → rule).
 */
function transcriptBlockSource(call: ToolCall): string {
  const decision = call.result!.row.permissionDecision;
  if (decision?.decision === 'reject') return decision.source === 'hook' ? 'hook' : decision.source?.startsWith('user') ? 'user' : 'rule';
  const text = textOf(call.result!.block.content).replace(/^Error:\s*/, '');
  return call.result!.row.toolUseResult === 'User rejected tool use' || USER_DENIAL.some((re) => re.test(text)) ? 'user' : 'rule';
}

/** Every tool call of the corpus (first tool_use of each id), with its first result. */
function toolCalls(files: TranscriptFile[]): Map<string, ToolCall> {
  const calls = new Map<string, ToolCall>();
  for (const file of files) {
    for (const row of file.rows) {
      if (row.type !== 'assistant') continue;
      for (const block of blocksOf(row)) {
        if (block.type === 'tool_use' && typeof block.id === 'string' && !calls.has(block.id)) {
          calls.set(block.id, { id: block.id, name: block.name ?? 'unknown', input: block.input, useMs: ms(row) });
        }
      }
    }
  }
  for (const file of files) {
    for (const row of file.rows) {
      if (row.type !== 'user') continue;
      for (const block of blocksOf(row)) {
        const call = block.type === 'tool_result' ? calls.get(block.tool_use_id ?? '') : undefined;
        if (call && !call.result) call.result = { row, block, ms: ms(row) };
      }
    }
  }
  return calls;
}

// ---- writing hooks and shell commands ----------------------------------------------------------------------

/** Time in microseconds since the epoch: hooks get a nanosecond name from it, shell records use it as is. */
type Micros = number;

interface SessionContext {
  sessionId: string;
  transcriptPath: string;
  cwd: string;
  /** pid of the Claude Code process (the Bash tool shell's parent). */
  claudePid: number;
}

interface Turn {
  prompt: Row;
  rows: Row[];
}

class HookWriter {
  readonly expected: HooksShellExpected;
  private readonly usedNs = new Set<bigint>();
  private readonly shellLines = new Map<string, { ts: number; line: string }[]>();

  constructor(private readonly rng: Rng, private readonly opts: HooksShellOptions) {
    this.expected = {
      hookEvents: 0, shellLines: 0, sessionsWithHooks: 0, sessionStarts: {}, hookSessionStarts: 0, resumeFrequency: 0, sessionEnds: {},
      permissionBlocks: {}, toolCallsByOutcome: {}, toolSuccessRate: 0, toolHookEvents: {}, shellCommands: {}, shellWithoutToolSpan: 0,
      promptIds: [], hookOnlySessionId: '',
    };
    mkdirSync(opts.spoolDir, { recursive: true, mode: 0o700 });
    mkdirSync(opts.shellLogDir, { recursive: true, mode: 0o700 });
  }

  /**
   * One spool file, named like ccotel-hook.sh names it: `<fired-at ns, 20 digits>-<pid>-<8 hex>.json`.
   * `toolUseId`: the call whose execute_tool span must carry this event.
   */
  hook(at: Micros, payload: Json, toolUseId?: string): void {
    let ns = BigInt(Math.round(at)) * 1000n;
    while (this.usedNs.has(ns)) ns++;
    this.usedNs.add(ns);
    const name = `${ns.toString().padStart(20, '0')}-${this.rng.int(1000, 4_000_000)}-${this.rng.hex(8)}.json`;
    writeFileSync(join(this.opts.spoolDir, name), JSON.stringify(payload), { mode: 0o600 });
    this.expected.hookEvents++;
    if (toolUseId !== undefined) (this.expected.toolHookEvents[toolUseId] ??= []).push(String(payload.hook_event_name));
  }

  /** The start (and, when it ended, the end) line of one Bash tool command, as ccotel-shell.bash writes them. */
  shell(ctx: SessionContext, command: string, start: Micros, end: { at: Micros; status: number } | undefined): void {
    const pid = this.rng.int(1000, 4_000_000);
    const lines = this.shellLines.get(ctx.sessionId) ?? [];
    this.shellLines.set(ctx.sessionId, lines);
    const startTs = Math.round(start);
    lines.push({
      ts: startTs,
      line: JSON.stringify({
        v: 1, ev: 'start', sid: ctx.sessionId, tp: '', pid, ppid: ctx.claudePid, pgid: pid, psid: pid, tty: '', cwd: ctx.cwd,
        cmd: command, cmdlen: Buffer.byteLength(command), ts: startTs, seq: 1,
      }),
    });
    if (end) lines.push({ ts: Math.round(end.at), line: JSON.stringify({ v: 1, ev: 'end', sid: ctx.sessionId, pid, seq: 1, ts: Math.round(end.at), status: end.status, cwd: ctx.cwd }) });
  }

  /** Shell log files: each session's lines in time order (parallel calls interleave). */
  writeShellLogs(): void {
    for (const [sessionId, lines] of this.shellLines) {
      lines.sort((a, b) => a.ts - b.ts);
      writeFileSync(join(this.opts.shellLogDir, `${sessionId}.jsonl`), lines.map((l) => l.line + '\n').join(''), { mode: 0o600 });
      this.expected.shellLines += lines.length;
    }
  }

  count(record: Record<string, number>, key: string): void {
    record[key] = (record[key] ?? 0) + 1;
  }
}

/** Common payload head in the field order of Claude Code 2.1.332. */
function head(ctx: SessionContext, promptId: string | undefined, event: string, tool?: { agent?: AgentContext }): Json {
  const payload: Json = { session_id: ctx.sessionId, transcript_path: ctx.transcriptPath, cwd: ctx.cwd };
  if (promptId !== undefined) payload.prompt_id = promptId;
  if (tool) {
    payload.permission_mode = 'default';
    if (tool.agent) Object.assign(payload, { agent_id: tool.agent.id, agent_type: tool.agent.type });
    payload.effort = { level: 'medium' };
  }
  payload.hook_event_name = event;
  return payload;
}

interface AgentContext {
  id: string;
  type: string;
}

/** What the model saw of a tool result (PostToolBatch.tool_response). */
function visibleText(call: ToolCall): string {
  return call.result ? textOf(call.result.block.content) : '';
}

class SessionHooks {
  private promptId = '';

  constructor(
    private readonly w: HookWriter,
    private readonly rng: Rng,
    private readonly ctx: SessionContext,
    private readonly calls: Map<string, ToolCall>,
    private readonly agents: Map<string, { file: TranscriptFile; type: string }>,
  ) {}

  private hook(at: Micros, payload: Json, toolUseId?: string): void {
    this.w.hook(at, payload, toolUseId);
  }

  start(at: Micros, source: string): void {
    const payload = head(this.ctx, undefined, 'SessionStart');
    payload.source = source;
    if (source === 'resume') Object.assign(payload, { seconds_since_last_response: this.rng.int(60, 7200), context_tokens: this.rng.int(1000, 90000), prompt_cache_likely_expired: true, estimated_cache_write_usd: 0.008 });
    this.hook(at, payload);
    this.w.count(this.w.expected.sessionStarts, source);
    this.w.expected.hookSessionStarts++;
  }

  end(at: Micros, reason: string): void {
    this.hook(at, { ...head(this.ctx, this.promptId || undefined, 'SessionEnd'), reason });
    this.w.count(this.w.expected.sessionEnds, reason);
  }

  turn(turn: Turn): void {
    this.promptId = turn.prompt.promptId ?? '';
    this.w.expected.promptIds.push(this.promptId);
    const promptAt = ms(turn.prompt) * 1000;
    this.hook(promptAt - 2000, { ...head(this.ctx, this.promptId, 'UserPromptSubmit'), permission_mode: 'default', prompt: promptText(turn.prompt) });
    let interrupted = false;
    let lastAssistant: Row | undefined;
    const turnCalls: ToolCall[] = [];
    for (const row of turn.rows) {
      if (isInterruptMarker(row)) interrupted = true;
      if (row.type === 'assistant') {
        lastAssistant = row;
        const ids = blocksOf(row).filter((b) => b.type === 'tool_use').map((b) => b.id!);
        turnCalls.push(...ids.map((id) => this.calls.get(id)!));
      }
      if (row.type === 'system' && row.subtype === 'compact_boundary') this.compaction(turn, row);
    }
    this.toolSteps(turnCalls);
    const outcomes = turnCalls.map(outcomeOf);
    if (interrupted || outcomes.includes('interrupted') || outcomes.includes('unanswered') || !lastAssistant) return;
    const endAt = ms(lastAssistant) * 1000 + 1000;
    if (lastAssistant.isApiErrorMessage) {
      const text = textOf(lastAssistant.message?.content);
      this.hook(endAt, { ...head(this.ctx, this.promptId, 'StopFailure'), error: text.includes('529') ? 'overloaded' : 'server_error', error_details: text, last_assistant_message: text });
      return;
    }
    this.hook(endAt, {
      ...head(this.ctx, this.promptId, 'Stop', {}), stop_hook_active: false,
      last_assistant_message: textOf(lastAssistant.message?.content).slice(0, 2000), background_tasks: [], session_crons: [],
    });
  }

  /** PreCompact before the boundary; PostCompact and SessionStart(compact) after its summary row. */
  private compaction(turn: Turn, boundary: Row): void {
    const trigger = boundary.compactMetadata?.trigger ?? 'auto';
    const at = ms(boundary) * 1000;
    const summary = turn.rows.find((row) => row.isCompactSummary && ms(row) >= ms(boundary));
    const after = (summary ? ms(summary) : ms(boundary)) * 1000;
    this.hook(at - 1000, { ...head(this.ctx, this.promptId, 'PreCompact'), trigger, custom_instructions: '' });
    this.hook(after + 1000, { ...head(this.ctx, this.promptId, 'PostCompact'), trigger, compact_summary: textOf(summary?.message?.content).slice(0, 500) });
    this.start(after + 2000, 'compact');
  }

  /**
   * The tool calls of one thread, grouped by model response (calls whose tool_use rows come before any of
   * their results): each call's own events, then PostToolBatch once the response's calls are done.
   */
  private toolSteps(calls: ToolCall[], agent?: AgentContext): void {
    let step: ToolCall[] = [];
    const flush = () => {
      if (step.length > 0) this.postToolBatch(step, agent);
      step = [];
    };
    for (const call of calls) {
      if (step.length > 0 && step.some((c) => c.result && c.result.ms <= call.useMs)) flush();
      step.push(call);
      this.toolCall(call, agent);
    }
    flush();
  }

  private postToolBatch(step: ToolCall[], agent?: AgentContext): void {
    const outcomes = step.map(outcomeOf);
    if (outcomes.includes('interrupted') || outcomes.includes('unanswered')) return;
    const at = Math.max(...step.map((c) => c.result!.ms)) * 1000 + 500;
    this.hook(at, {
      ...head(this.ctx, this.promptId, 'PostToolBatch', { agent }),
      tool_calls: step.map((c) => ({ tool_name: c.name, tool_input: c.input, tool_use_id: c.id, tool_response: visibleText(c) })),
    });
  }

  /**
   * A call's hooks inside its time window [tool_use row, tool_result row]: PreToolUse; for a denied call
   * PermissionRequest (or PermissionDenied for a rule's denial) and nothing more; for a call that ran,
   * its shell command (Bash) and PostToolUse / PostToolUseFailure. An interrupted call's command never
   * ends; an unanswered one (the agent died) has PreToolUse and a command that never ends.
   */
  private toolCall(call: ToolCall, agent?: AgentContext): void {
    const outcome = outcomeOf(call);
    const use = call.useMs * 1000;
    const window = call.result ? call.result.ms * 1000 - use : 8000;
    const step = Math.min(1000, window / 8);
    const toolHead = (event: string) => ({ ...head(this.ctx, this.promptId, event, { agent }), tool_name: call.name, tool_input: call.input });
    this.hook(use + step, { ...toolHead('PreToolUse'), tool_use_id: call.id }, call.id);
    if (outcome === 'denied') {
      const text = visibleText(call);
      if (/has been denied\./.test(text)) this.hook(use + 2 * step, { ...toolHead('PermissionDenied'), tool_use_id: call.id, reason: 'Denied by a permission rule' }, call.id);
      else {
        // No tool_use_id: the correlator pairs it with the PreToolUse just before it (same tool and input).
        this.hook(use + 2 * step, { ...toolHead('PermissionRequest'), permission_suggestions: [{ type: 'setMode', mode: 'acceptEdits', destination: 'session' }] }, call.id);
        if (USER_DENIAL.some((re) => re.test(text))) {
          this.hook(use + 3 * step, { ...head(this.ctx, this.promptId, 'Notification'), message: `Claude needs your permission to use ${call.name}`, title: 'Claude Code', notification_type: 'permission_prompt' });
        }
      }
      return;
    }
    const command = call.name === 'Bash' ? String((call.input as { command?: unknown }).command ?? '') : undefined;
    const subagent = this.agentOf(call);
    if (subagent) this.hook(use + 2 * step, { ...head(this.ctx, this.promptId, 'SubagentStart'), agent_id: subagent.id, agent_type: subagent.type });
    if (outcome === 'unanswered') {
      if (command !== undefined) this.shellCommand(call, command, use + 3 * step, undefined);
      return;
    }
    const resultAt = call.result!.ms * 1000;
    const text = visibleText(call);
    if (command !== undefined) {
      const status = outcome === 'success' ? 0 : outcome === 'error' ? Number(/^Exit code (\d+)/.exec(text)?.[1] ?? 1) : undefined;
      this.shellCommand(call, command, use + 3 * step, status === undefined ? undefined : { at: resultAt - 2 * step, status });
    }
    if (subagent) {
      const agentCalls = this.agentCalls(subagent.id);
      this.toolSteps(agentCalls, subagent);
      this.hook(resultAt - 2 * step, {
        ...head(this.ctx, this.promptId, 'SubagentStop', { agent: subagent }), stop_hook_active: false,
        agent_transcript_path: this.agents.get(subagent.id)!.file.path, last_assistant_message: '', background_tasks: [], session_crons: [],
      });
    }
    const durationMs = Math.max(0, Math.round((resultAt - use - 2 * step) / 1000));
    if (outcome === 'success') {
      this.hook(resultAt - step, { ...toolHead('PostToolUse'), tool_response: call.result!.row.toolUseResult ?? text, tool_use_id: call.id, duration_ms: durationMs }, call.id);
    } else if (outcome === 'error' || this.rng.chance(0.5)) {
      // An interrupted call reports its failure (is_interrupt) only sometimes: cancelling may fire nothing.
      this.hook(resultAt - step, { ...toolHead('PostToolUseFailure'), tool_use_id: call.id, error: outcome === 'error' ? text : 'Interrupted by user', is_interrupt: outcome === 'interrupted', duration_ms: durationMs }, call.id);
    }
  }

  private shellCommand(call: ToolCall, command: string, start: Micros, end: { at: Micros; status: number } | undefined): void {
    this.w.shell(this.ctx, command, start, end);
    this.w.expected.shellCommands[call.id] = end ? end.status : null;
  }

  /** The subagent an Agent / Task call started (its result names it). */
  private agentOf(call: ToolCall): AgentContext | undefined {
    const result = call.result?.row.toolUseResult as { agentId?: unknown } | undefined;
    const id = typeof result?.agentId === 'string' ? result.agentId : undefined;
    const agent = id ? this.agents.get(id) : undefined;
    return agent && id ? { id, type: agent.type } : undefined;
  }

  private agentCalls(agentId: string): ToolCall[] {
    const ids = this.agents.get(agentId)!.file.rows.flatMap((row) => (row.type === 'assistant' ? blocksOf(row).filter((b) => b.type === 'tool_use').map((b) => b.id!) : []));
    return ids.map((id) => this.calls.get(id)!);
  }
}

/** Real prompts of a 2.1 main file (copied rows of a fork left out), each with the rows up to the next one. */
function turnsOf(file: TranscriptFile): Turn[] {
  const turns: Turn[] = [];
  for (const row of file.rows) {
    if (row.forkedFrom !== undefined || row.isSidechain) continue;
    if (!['user', 'assistant', 'system'].includes(row.type ?? '') || Number.isNaN(ms(row))) continue;
    if (promptText(row) !== undefined) turns.push({ prompt: row, rows: [] });
    else turns.at(-1)?.rows.push(row);
  }
  return turns;
}

const isModern = (file: TranscriptFile) => file.rows.some((row) => row.turnPosition !== undefined);
const isResumePrompt = (row: Row) => row.turnPosition?.promptIndex === 0 && (row.turnPosition.turnIndex ?? 1) > 1;

/**
 * Spool files and shell logs for the 2.1 sessions under `configDirs`, plus one session whose transcript is gone;
 * returns what a correct reader of transcripts + hooks + shell logs must report. Same seed and corpus → same files.
 */
export function generateHooksAndShell(opts: HooksShellOptions): HooksShellExpected {
  const rng = new Rng(opts.seed ^ 0x5eed_4b00);
  const files = listTranscripts(opts.configDirs);
  const calls = toolCalls(files);
  const w = new HookWriter(rng, opts);
  const { expected } = w;

  // Tool outcomes and the blocks the transcripts tell, over the whole corpus.
  for (const call of calls.values()) {
    const outcome = outcomeOf(call);
    w.count(expected.toolCallsByOutcome, outcome);
    if (outcome === 'denied') w.count(expected.permissionBlocks, `${call.name}|${transcriptBlockSource(call)}`);
  }

  const agents = new Map<string, { file: TranscriptFile; type: string }>();
  for (const file of files.filter((f) => f.subagent)) {
    const agentId = /agent-([^/]+)\.jsonl$/.exec(file.path)![1];
    let type = 'subagent';
    try {
      type = String((JSON.parse(readFileSync(file.path.replace(/\.jsonl$/, '.meta.json'), 'utf8')) as { agentType?: unknown }).agentType ?? type);
    } catch {
      // legacy layout: no meta file
    }
    agents.set(agentId, { file, type });
  }

  const seenPrompts = new Set<string>();
  for (const file of files.filter((f) => !f.subagent)) {
    const turns = turnsOf(file);
    if (turns.length === 0) continue;
    const forked = file.rows.some((row) => row.forkedFrom !== undefined);
    const first = turns[0].prompt;
    const replayed = seenPrompts.has(`${first.timestamp}\u0000${promptText(first)}`);
    for (const turn of turns) seenPrompts.add(`${turn.prompt.timestamp}\u0000${promptText(turn.prompt)}`);
    if (!isModern(file)) {
      // Older sessions: starts from the transcript only (a replayed first prompt is an old-style resume).
      w.count(expected.sessionStarts, replayed ? 'resume' : 'startup');
      continue;
    }
    expected.sessionsWithHooks++;
    const ctx: SessionContext = { sessionId: String(first.sessionId), transcriptPath: file.path, cwd: String(first.cwd ?? '/'), claudePid: rng.int(1000, 4_000_000) };
    const session = new SessionHooks(w, rng, ctx, calls, agents);
    // One process per run of turns: a new one at each resumed prompt.
    const processes: Turn[][] = [];
    for (const turn of turns) {
      if (processes.length === 0 || isResumePrompt(turn.prompt)) processes.push([]);
      processes.at(-1)!.push(turn);
    }
    let ended = false;
    processes.forEach((process, i) => {
      const source = i > 0 ? 'resume' : forked ? 'fork' : 'startup';
      session.start((ms(process[0].prompt) - rng.int(200, 3000)) * 1000, source);
      for (const turn of process) session.turn(turn);
      const lastTurn = process.at(-1)!;
      const lastRow = lastTurn.rows.at(-1) ?? lastTurn.prompt;
      // A process whose last turn was cut off mid-call was killed: no SessionEnd. Others exit, most say so.
      const killed = outcomesOfTurn(lastTurn, calls).includes('unanswered') || !lastTurn.rows.some((row) => row.type === 'assistant');
      ended = !killed && rng.chance(0.7);
      if (ended) session.end((ms(lastRow) + rng.int(20, 900)) * 1000, rng.pick(['other', 'prompt_input_exit']));
    });
    // DESIGN 4: a hooked session that went silent with no SessionEnd (after its last start) ends as abandoned.
    if (!ended) w.count(expected.sessionEnds, 'abandoned');
  }

  hookOnlySession(w, rng, Math.max(...files.map((f) => Math.max(...f.rows.map(ms).filter((t) => !Number.isNaN(t))))) + 3_600_000);
  w.writeShellLogs();

  const starts = Object.values(expected.sessionStarts).reduce((a, b) => a + b, 0);
  expected.resumeFrequency = (expected.sessionStarts.resume ?? 0) / starts;
  const allCalls = Object.values(expected.toolCallsByOutcome).reduce((a, b) => a + b, 0);
  expected.toolSuccessRate = (expected.toolCallsByOutcome.success ?? 0) / allCalls;
  return expected;
}

function outcomesOfTurn(turn: Turn, calls: Map<string, ToolCall>): Outcome[] {
  return turn.rows.flatMap((row) => (row.type === 'assistant' ? blocksOf(row).filter((b) => b.type === 'tool_use').map((b) => outcomeOf(calls.get(b.id!)!)) : []));
}

/**
 * A session whose transcript is gone (cleaned up, or never found): only its hooks and shell log tell about it.
 * A Bash call asked for permission and never ran (a block by the user), a Write refused by auto mode
 * (PermissionDenied: a block by the classifier), a Read and a Bash that ran (no block; the Bash command gets a trace of its own).
 */
function hookOnlySession(w: HookWriter, rng: Rng, startMs: number): void {
  const sessionId = rng.uuid();
  w.expected.hookOnlySessionId = sessionId;
  w.expected.sessionsWithHooks++;
  const cwd = '/home/dev/src/lost-transcript';
  const ctx: SessionContext = { sessionId, transcriptPath: `/home/dev/.claude/projects/-home-dev-src-lost-transcript/${sessionId}.jsonl`, cwd, claudePid: rng.int(1000, 4_000_000) };
  const session = new SessionHooks(w, rng, ctx, new Map(), new Map());
  const promptId = rng.uuid();
  let at = startMs * 1000;
  const next = () => (at += rng.int(50, 2000) * 1000);
  session.start(at, 'startup');
  w.hook(next(), { ...head(ctx, promptId, 'UserPromptSubmit'), permission_mode: 'default', prompt: 'Clean the build and run the tests.' });
  const tool = (name: string, input: Json) => ({ id: rng.apiId('toolu_01'), name, input, head: (event: string) => ({ ...head(ctx, promptId, event, {}), tool_name: name, tool_input: input }) });
  const asked = tool('Bash', { command: 'rm -rf build', description: 'Clean the build' });
  w.hook(next(), { ...asked.head('PreToolUse'), tool_use_id: asked.id });
  w.hook(next(), { ...asked.head('PermissionRequest'), permission_suggestions: [] });
  w.count(w.expected.permissionBlocks, 'Bash|user');
  const refused = tool('Write', { file_path: `${cwd}/.env`, content: 'x' });
  w.hook(next(), { ...refused.head('PreToolUse'), tool_use_id: refused.id });
  w.hook(next(), { ...refused.head('PermissionDenied'), tool_use_id: refused.id, reason: 'Denied by auto mode' });
  w.count(w.expected.permissionBlocks, 'Write|classifier');
  const read = tool('Read', { file_path: `${cwd}/package.json` });
  w.hook(next(), { ...read.head('PreToolUse'), tool_use_id: read.id });
  w.hook(next(), { ...read.head('PostToolUse'), tool_response: { type: 'text' }, tool_use_id: read.id, duration_ms: 3 });
  const ran = tool('Bash', { command: 'npm test', description: 'Run the tests' });
  w.hook(next(), { ...ran.head('PreToolUse'), tool_use_id: ran.id });
  w.shell(ctx, 'npm test', next(), { at: next(), status: 0 });
  w.expected.shellWithoutToolSpan++;
  w.hook(next(), { ...ran.head('PostToolUse'), tool_response: { stdout: 'ok', stderr: '' }, tool_use_id: ran.id, duration_ms: 900 });
  w.hook(next(), { ...head(ctx, promptId, 'Stop', {}), stop_hook_active: false, last_assistant_message: 'Done.', background_tasks: [], session_crons: [] });
  session.end(next(), 'other');
}
