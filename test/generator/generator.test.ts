import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCorpus, type Expected } from './corpus.js';
import { KNOWN_ROW_TYPES, TOOL_OUTCOMES, TURN_OUTCOMES, type SkipReason, type TokenSums, type ToolOutcome, type TurnOutcome } from './expected.js';

// The generator's counts are checked against a re-count of the written files done here, by plain
// code that follows README.md's semantics and knows nothing of how the generator chose its rows.

type Row = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function walk(dir: string): string[] {
  let out: string[] = [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out = out.concat(walk(p));
    else out.push(p);
  }
  return out;
}

interface ParsedFile {
  path: string;
  isSubagentFile: boolean;
  rows: Row[];
  /** Raw text of each parsed row (same index as rows). */
  lines: string[];
  firstTimestamp: string;
}

const REQUIRED: Record<string, string[]> = { user: ['uuid', 'timestamp', 'sessionId'], assistant: ['uuid', 'timestamp', 'sessionId'], system: ['uuid', 'timestamp'] };

function parseFile(path: string, skipped: Record<SkipReason, number>): ParsedFile {
  const text = readFileSync(path, 'utf8');
  const pieces = text.split('\n');
  const last = pieces.pop() as string;
  if (last !== '') skipped.partial_last_line++;
  const rows: Row[] = [];
  const lines: string[] = [];
  for (const line of pieces) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      skipped.malformed_json++;
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      skipped.not_object++;
      continue;
    }
    const row = value as Row;
    if (typeof row.type !== 'string') {
      skipped.missing_fields++;
      continue;
    }
    if (!KNOWN_ROW_TYPES.includes(row.type)) {
      skipped.unknown_type++;
      continue;
    }
    const needsMessage = row.type === 'user' || row.type === 'assistant';
    if ((REQUIRED[row.type] ?? []).some((f) => typeof row[f] !== 'string') || (needsMessage && typeof row.message !== 'object')) {
      skipped.missing_fields++;
      continue;
    }
    rows.push(row);
    lines.push(line);
  }
  const stamps = rows.map((r) => r.timestamp).filter((t): t is string => typeof t === 'string').sort();
  const name = path.split('/').pop() as string;
  return { path, isSubagentFile: name.startsWith('agent-'), rows, lines, firstTimestamp: stamps[0] ?? '' };
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b) => (b && typeof b.text === 'string' ? b.text : '')).join('');
  return '';
}

const NOT_PROMPT_PREFIXES = [
  '<command-name>', '<local-command-stdout>', '<local-command-caveat>', '<system-reminder>', '<task-notification>',
  '[Request interrupted by user', 'This session is being continued from a previous conversation',
];
const DENIAL = /^The user doesn't want to (proceed|take this action)|has been denied\.|needs approval|requires approval|haven't granted it yet/;

function isPrompt(row: Row, file: ParsedFile): boolean {
  if (row.type !== 'user' || file.isSubagentFile || row.isSidechain || row.isMeta || row.isCompactSummary) return false;
  const content = row.message.content;
  if (Array.isArray(content) && !content.every((b: Row) => b.type === 'text')) return false;
  const text = contentText(content);
  return !NOT_PROMPT_PREFIXES.some((p) => text.startsWith(p));
}

function toolOutcome(block: Row, row: Row): Exclude<ToolOutcome, 'unanswered'> {
  const text = contentText(block.content);
  const tur = row.toolUseResult;
  if ((tur && typeof tur === 'object' && tur.interrupted === true) || text.startsWith('[Request interrupted by user for tool use]')) return 'interrupted';
  if (block.is_error === true && (row.toolDenialKind !== undefined || tur === 'User rejected tool use' || DENIAL.test(text))) return 'denied';
  if (block.is_error === true) return 'error';
  return 'success';
}

interface Turn {
  interrupted: boolean;
  lastAssistant: Row | null;
  /** tool_use ids of the last assistant message of the turn */
  lastToolUses: string[];
}

function zero(): TokenSums {
  return { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 };
}

function recount(root: string, configDirs: string[]): Omit<Expected, 'seed' | 'bytes' | 'configDirs' | 'sessionsSharingMessages' | 'ccusageTokens'> {
  const skippedLines: Record<SkipReason, number> = { malformed_json: 0, not_object: 0, missing_fields: 0, unknown_type: 0, partial_last_line: 0 };
  const paths = configDirs.flatMap((d) => walk(join(d, 'projects'))).filter((p) => p.endsWith('.jsonl'));
  const files = paths.map((p) => parseFile(p, skippedLines));
  // "First file" order: the file whose rows start earliest holds the originals.
  files.sort((a, b) => (a.firstTimestamp < b.firstTimestamp ? -1 : a.firstTimestamp > b.firstTimestamp ? 1 : a.path < b.path ? -1 : 1));

  const rowsByType: Record<string, number> = {};
  const sessions = new Set<string>();
  const promptSeenIn = new Map<string, string>();
  const turns: Turn[] = [];
  const messages = new Map<string, { usage: Row; model: string; session: string; file: string }>();
  const toolNames = new Map<string, string>();
  const results = new Map<string, Exclude<ToolOutcome, 'unanswered'>>();
  const agentIds = new Set<string>();
  const agentTypeById = new Map<string, string>();
  let compactions = 0;
  let sameFile = 0;
  let newFile = 0;
  let forks = 0;

  for (const file of files) {
    let turn: Turn | null = null;
    let inReplay = false;
    let firstPromptWasReplay: boolean | null = null;
    let forked = false;
    for (const row of file.rows) {
      rowsByType[row.type] = (rowsByType[row.type] ?? 0) + 1;
      if (row.forkedFrom) forked = true;
      if (row.agentId) agentIds.add(row.agentId);
      const mainThread = !file.isSubagentFile && !row.isSidechain;
      if (mainThread && (row.type === 'user' || row.type === 'assistant')) sessions.add(row.sessionId);

      if (row.type === 'assistant') {
        const m = row.message;
        for (const b of m.content ?? []) if (b.type === 'tool_use' && !toolNames.has(b.id)) toolNames.set(b.id, b.name);
        if (m.model !== '<synthetic>' && !row.isApiErrorMessage) {
          const key = `${m.id}|${row.requestId ?? ''}`;
          const seen = messages.get(key);
          messages.set(key, { usage: m.usage, model: m.model, session: seen?.session ?? row.sessionId, file: seen?.file ?? relative(root, file.path) });
        }
      }
      if (row.type === 'user' && Array.isArray(row.message.content)) {
        for (const b of row.message.content) {
          if (b.type !== 'tool_result') continue;
          if (!results.has(b.tool_use_id)) results.set(b.tool_use_id, toolOutcome(b, row));
          const agentId = row.toolUseResult?.agentId;
          const name = toolNames.get(b.tool_use_id);
          if (agentId && name) {
            const use = file.rows.find((r) => r.type === 'assistant' && r.message.content?.some((c: Row) => c.id === b.tool_use_id));
            if (use) agentTypeById.set(agentId, use.message.content[0].input.subagent_type);
          }
        }
      }
      if (!mainThread) continue;

      if (isPrompt(row, file)) {
        const key = `${row.timestamp}\u0000${contentText(row.message.content)}`;
        const seenIn = promptSeenIn.get(key);
        inReplay = seenIn !== undefined && seenIn !== file.path;
        if (!seenIn) promptSeenIn.set(key, file.path);
        firstPromptWasReplay ??= inReplay;
        turn = inReplay ? null : { interrupted: false, lastAssistant: null, lastToolUses: [] };
        if (turn) turns.push(turn);
        if (turn && row.turnPosition?.promptIndex === 0 && row.turnPosition.turnIndex > 1) sameFile++;
        continue;
      }
      if (inReplay) continue;
      if (row.type === 'system' && row.subtype === 'compact_boundary' && turn) compactions++;
      if (!turn) continue;
      if (row.type === 'user') {
        const text = contentText(row.message.content);
        if (text.startsWith('[Request interrupted by user')) turn.interrupted = true;
        for (const b of Array.isArray(row.message.content) ? row.message.content : []) {
          if (b.type === 'tool_result' && toolOutcome(b, row) === 'interrupted') turn.interrupted = true;
        }
      }
      if (row.type === 'assistant') {
        const sameMessage = turn.lastAssistant?.message.id === row.message.id;
        turn.lastAssistant = row;
        const ids = (row.message.content ?? []).filter((b: Row) => b.type === 'tool_use').map((b: Row) => b.id);
        turn.lastToolUses = sameMessage ? turn.lastToolUses.concat(ids) : ids;
      }
    }
    if (forked) forks++;
    else if (firstPromptWasReplay) newFile++;
  }

  const turnsByOutcome = Object.fromEntries(TURN_OUTCOMES.map((o) => [o, 0])) as Record<TurnOutcome, number>;
  for (const t of turns) {
    let outcome: TurnOutcome = 'completed';
    if (t.interrupted) outcome = 'interrupted';
    else if (t.lastAssistant?.isApiErrorMessage) outcome = 'error';
    else if (!t.lastAssistant || t.lastToolUses.some((id) => !results.has(id))) outcome = 'abandoned';
    turnsByOutcome[outcome]++;
  }

  const tokens = zero();
  const tokensByModel: Record<string, TokenSums> = {};
  const perSessionTokens: Record<string, TokenSums> = {};
  const perFileTokens: Record<string, TokenSums> = {};
  const perSessionModelTokens: Record<string, Record<string, { standard: TokenSums; over200k: TokenSums }>> = {};
  for (const { usage, model, session, file } of messages.values()) {
    const byPrompt = ((perSessionModelTokens[session] ??= {})[model] ??= { standard: zero(), over200k: zero() });
    const promptTokens = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    const bySize = promptTokens > 200_000 ? byPrompt.over200k : byPrompt.standard;
    for (const into of [tokens, (tokensByModel[model] ??= zero()), (perSessionTokens[session] ??= zero()), (perFileTokens[file] ??= zero()), bySize]) {
      into.input += usage.input_tokens;
      into.output += usage.output_tokens;
      into.cacheRead += usage.cache_read_input_tokens;
      into.cacheCreation += usage.cache_creation_input_tokens;
    }
  }

  const toolCallsByName: Record<string, Record<ToolOutcome, number>> = {};
  const toolCallsByOutcome = Object.fromEntries(TOOL_OUTCOMES.map((o) => [o, 0])) as Record<ToolOutcome, number>;
  for (const [id, name] of toolNames) {
    const outcome = results.get(id) ?? 'unanswered';
    (toolCallsByName[name] ??= Object.fromEntries(TOOL_OUTCOMES.map((o) => [o, 0])) as Record<ToolOutcome, number>)[outcome]++;
    toolCallsByOutcome[outcome]++;
  }

  const subagentsByType: Record<string, number> = {};
  for (const id of agentIds) subagentsByType[agentTypeById.get(id) ?? '?'] = (subagentsByType[agentTypeById.get(id) ?? '?'] ?? 0) + 1;
  const layouts = { inline: 0, legacy: 0, nested: 0 };
  for (const f of files) {
    if (f.path.includes('/subagents/')) layouts.nested++;
    else if (f.isSubagentFile) layouts.legacy++;
  }
  layouts.inline = new Set(files.filter((f) => !f.isSubagentFile).flatMap((f) => f.rows.filter((r) => r.isSidechain).map((r) => r.agentId))).size;

  const sorted = <V,>(o: Record<string, V>): Record<string, V> => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
  return {
    files: files.length,
    sessions: sessions.size,
    turns: turns.length,
    turnsByOutcome,
    chatSpans: messages.size,
    tokens,
    tokensByModel: sorted(tokensByModel),
    perSessionTokens: sorted(perSessionTokens),
    perFileTokens: sorted(perFileTokens),
    perSessionModelTokens: sorted(perSessionModelTokens),
    toolCalls: toolNames.size,
    toolCallsByOutcome,
    toolCallsByName: sorted(toolCallsByName),
    subagents: agentIds.size,
    subagentsByType: sorted(subagentsByType),
    subagentsByLayout: layouts,
    compactions,
    resumeStarts: sameFile + newFile,
    resumeStartsByStyle: { sameFile, newFile },
    forks,
    skippedLines,
    rowsByType: sorted(rowsByType),
  };
}

/** Hash of every transcript file (expected.json names the root, so it is left out). */
function treeHash(root: string): string {
  const hash = createHash('sha256');
  for (const p of walk(root).filter((f) => !f.endsWith('expected.json')).sort()) hash.update(relative(root, p)).update('\0').update(readFileSync(p)).update('\0');
  return hash.digest('hex');
}

function allLines(configDirs: string[]): { path: string; line: string }[] {
  return configDirs
    .flatMap((d) => walk(join(d, 'projects')))
    .filter((p) => p.endsWith('.jsonl'))
    .flatMap((path) => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((line) => ({ path, line })));
}

function parsedRows(configDirs: string[]): Row[] {
  return allLines(configDirs).flatMap(({ line }) => {
    try {
      const v = JSON.parse(line);
      return v && typeof v === 'object' && !Array.isArray(v) ? [v as Row] : [];
    } catch {
      return [];
    }
  });
}

describe('generateCorpus', () => {
  let dir: string;
  let small: Expected;
  let larger: Expected;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ccotel-gen-'));
    small = await generateCorpus({ seed: 7, root: join(dir, 'small') });
    larger = await generateCorpus({ seed: 11, root: join(dir, 'larger'), targetBytes: 4_000_000, contentScale: 0.2 });
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is deterministic: the same seed gives a byte-identical tree, another seed a different one', async () => {
    const again = await generateCorpus({ seed: 7, root: join(dir, 'again') });
    const other = await generateCorpus({ seed: 8, root: join(dir, 'other') });
    expect(again).toEqual({ ...small, configDirs: again.configDirs });
    expect(other.tokens).not.toEqual(small.tokens);
    expect(treeHash(join(dir, 'again'))).toBe(treeHash(join(dir, 'small')));
    expect(treeHash(join(dir, 'other'))).not.toBe(treeHash(join(dir, 'small')));
  });

  it('returns the answer it writes to expected.json', () => {
    expect(JSON.parse(readFileSync(join(dir, 'small', 'expected.json'), 'utf8'))).toEqual(small);
  });

  it.each([['small', () => small], ['larger', () => larger]])('%s corpus: expected answer equals an independent re-count of the files', (name, get) => {
    const expected = get();
    const counted = recount(join(dir, name), expected.configDirs);
    const { seed, bytes, configDirs, sessionsSharingMessages, ccusageTokens, ...comparable } = expected;
    expect(counted).toEqual(comparable);
    expect(bytes).toBeGreaterThan(0);
    expect(seed).toBeTypeOf('number');
    expect(configDirs.length).toBe(3);
    expect(sessionsSharingMessages.length).toBeGreaterThanOrEqual(4);
    expect(ccusageTokens.input).toBeGreaterThanOrEqual(expected.tokens.input);
  });

  it('writes compact JSON, as Claude Code does (ccusage skips anything else)', () => {
    for (const { line } of allLines(larger.configDirs)) {
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        continue; // the deliberately broken lines
      }
      expect(JSON.stringify(value)).toBe(line);
    }
  });

  it('covers every quirk even in the smallest corpus', () => {
    const e = small;
    for (const o of TURN_OUTCOMES) expect(e.turnsByOutcome[o], `turn outcome ${o}`).toBeGreaterThan(0);
    for (const o of TOOL_OUTCOMES) expect(e.toolCallsByOutcome[o], `tool outcome ${o}`).toBeGreaterThan(0);
    for (const [reason, n] of Object.entries(e.skippedLines)) expect(n, reason).toBeGreaterThan(0);
    expect(e.subagentsByLayout).toEqual({ inline: expect.any(Number), legacy: expect.any(Number), nested: expect.any(Number) });
    for (const n of Object.values(e.subagentsByLayout)) expect(n).toBeGreaterThan(0);
    expect(e.compactions).toBeGreaterThan(0);
    expect(e.resumeStartsByStyle.sameFile).toBeGreaterThan(0);
    expect(e.resumeStartsByStyle.newFile).toBeGreaterThan(0);
    expect(e.forks).toBeGreaterThan(0);
    expect(new Set(allLines(e.configDirs).map(({ path }) => e.configDirs.find((d) => path.startsWith(d + '/projects/'))))).toHaveProperty('size', 3);

    const rows = parsedRows(e.configDirs);
    const userTexts = rows.filter((r) => r.type === 'user' && r.message).map((r) => contentText(r.message.content));
    const results = rows.filter((r) => r.type === 'user' && Array.isArray(r.message?.content)).flatMap((r) => r.message.content.filter((b: Row) => b.type === 'tool_result'));
    const resultTexts = results.map((b: Row) => contentText(b.content));

    // one response written as several rows sharing message.id, output_tokens growing to the final row
    const outputsById = new Map<string, number[]>();
    for (const r of rows.filter((r) => r.type === 'assistant' && r.message)) outputsById.set(r.message.id, [...(outputsById.get(r.message.id) ?? []), r.message.usage.output_tokens]);
    expect([...outputsById.values()].some((o) => o.length > 1 && o[0] < o[o.length - 1])).toBe(true);
    // parallel calls answered out of order
    const outOfOrder = rows.some((r, i) => {
      const uses = r.type === 'assistant' ? r.message?.content?.filter((b: Row) => b.type === 'tool_use').map((b: Row) => b.id) : [];
      if (!uses?.length) return false;
      const siblings = rows.filter((x) => x.type === 'assistant' && x.message?.id === r.message.id).flatMap((x) => x.message.content.filter((b: Row) => b.type === 'tool_use').map((b: Row) => b.id));
      const order = rows.slice(i).flatMap((x) => (x.type === 'user' && Array.isArray(x.message?.content) ? x.message.content.filter((b: Row) => b.type === 'tool_result').map((b: Row) => b.tool_use_id) : [])).filter((id: string) => siblings.includes(id));
      return siblings.length > 1 && order.join() !== siblings.join() && order.length === siblings.length;
    });
    expect(outOfOrder).toBe(true);
    // the three denial wordings and the structured rejection
    expect(resultTexts.some((t) => t.startsWith("The user doesn't want to proceed with this tool use"))).toBe(true);
    expect(resultTexts.some((t) => /^Permission to use \w+( with command .*)? has been denied\.$/.test(t))).toBe(true);
    expect(resultTexts.some((t) => /needs approval|This command requires approval|haven't granted it yet/.test(t))).toBe(true);
    expect(rows.some((r) => r.toolUseResult === 'User rejected tool use')).toBe(true);
    expect(rows.some((r) => r.toolDenialKind === 'user-rejected')).toBe(true);
    // interrupts, tool errors, API errors
    expect(userTexts).toContain('[Request interrupted by user]');
    expect(userTexts).toContain('[Request interrupted by user for tool use]');
    expect(rows.some((r) => r.toolUseResult?.interrupted === true)).toBe(true);
    expect(resultTexts.some((t) => t.startsWith('<tool_use_error>'))).toBe(true);
    expect(resultTexts.some((t) => /^Exit code \d/.test(t))).toBe(true);
    expect(rows.some((r) => r.isApiErrorMessage === true && r.message?.model === '<synthetic>')).toBe(true);
    // compaction and meta rows
    expect(rows.some((r) => r.type === 'system' && r.subtype === 'compact_boundary')).toBe(true);
    expect(rows.some((r) => r.isCompactSummary === true)).toBe(true);
    for (const prefix of NOT_PROMPT_PREFIXES) expect(userTexts.some((t) => t.startsWith(prefix)), prefix).toBe(true);
    expect(rows.some((r) => r.isMeta === true && !contentText(r.message?.content).startsWith('<'))).toBe(true);
    // copies: old-style resume (fresh uuids, same message ids) and fork (forkedFrom)
    expect(rows.some((r) => r.forkedFrom?.sessionId)).toBe(true);
    const sessionsByMessage = new Map<string, Set<string>>();
    for (const r of rows.filter((r) => r.type === 'assistant' && r.message)) sessionsByMessage.set(r.message.id, (sessionsByMessage.get(r.message.id) ?? new Set()).add(r.sessionId));
    expect([...sessionsByMessage.values()].some((s) => s.size > 1)).toBe(true);
    // subagents: rows carry agentId and the parent session; nested ones have a meta file
    const nested = walk(e.configDirs[0]).filter((p) => p.endsWith('.meta.json'));
    expect(nested.length).toBeGreaterThan(0);
    expect(JSON.parse(readFileSync(nested[0], 'utf8')).agentType).toBeTypeOf('string');
    const mainSessions = new Set(rows.filter((r) => r.type === 'user' && !r.isSidechain).map((r) => r.sessionId));
    expect(rows.filter((r) => r.agentId).every((r) => mainSessions.has(r.sessionId))).toBe(true);
    // an assistant message without requestId (old versions)
    expect(rows.some((r) => r.type === 'assistant' && r.message && r.requestId === undefined && r.message.model !== '<synthetic>')).toBe(true);
    // the large non-conversation rows 2.1 writes
    for (const type of ['api-request-shape', 'api-request-blob', 'api-request', 'queue-operation', 'atis-latch', 'tools-used', 'last-prompt', 'cost-state', 'summary', 'file-history-snapshot']) {
      expect(e.rowsByType[type], type).toBeGreaterThan(0);
    }
    expect(rows.some((r) => r.attachment?.type === 'prompt_snapshot' && r.attachment.tools)).toBe(true);
  });

  it('has a fork older (by file time) than its original, which was resumed after the fork', () => {
    const files = walk(small.configDirs[0]).concat(walk(small.configDirs[1]), walk(small.configDirs[2])).filter((p) => p.endsWith('.jsonl'));
    const inverted = files.some((path) => {
      const from = /"forkedFrom":\{"sessionId":"([^"]+)"/.exec(readFileSync(path, 'utf8'))?.[1];
      const original = from && files.find((p) => p.endsWith(`/${from}.jsonl`));
      return original !== undefined && original !== '' && statSync(path).mtimeMs < statSync(original).mtimeMs;
    });
    expect(inverted).toBe(true);
  });

  it('dates each file like Claude Code does: modified at its last row', () => {
    for (const path of walk(larger.configDirs[0]).filter((p) => p.endsWith('.jsonl'))) {
      const stamps = readFileSync(path, 'utf8').split('\n').flatMap((line) => /"timestamp":"([^"]+)"/.exec(line)?.[1] ?? []);
      const latest = Math.max(...stamps.map((t) => Date.parse(t)));
      expect(Math.round(statSync(path).mtimeMs)).toBe(latest);
    }
  });

  // Its speed is measured by bench/gen-corpus.ts, not here (no timed tests).
  it('generates at least the bytes asked for', async () => {
    const e = await generateCorpus({ seed: 3, root: join(dir, 'speed'), targetBytes: 20_000_000 });
    expect(e.bytes).toBeGreaterThanOrEqual(20_000_000);
  });
});
