// Sessions that hold every pattern `report insights` finds (docs/REPORT.md "Insights"), each beside a twin that
// must not be found, written as Claude Code 2.1 transcripts (and, for the calls the user was asked to allow, the
// hook spool's PreToolUse + PermissionRequest events), with the exact answer: counts, sessions, turns, and the
// tokens, cost and time of the affected turns, computed here from the plan, never from the store.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { priceChat } from '../../sidecar/src/processors/price-chats.js';
import type { Insight } from '../../sidecar/src/report/insight-types.js';

export const MODEL = 'claude-sonnet-4-5';

export interface PlannedCall {
  tool: string;
  input: Record<string, unknown>;
  /** The tool_result text; an error when `error` is set. */
  output?: string;
  error?: boolean;
  /** A refusal by a permission rule (its wording). */
  deniedByRule?: boolean;
  /** The user was asked to allow it (hooks: PreToolUse + PermissionRequest) and allowed it. */
  asked?: boolean;
  /** From its tool_use row to its result row. */
  ms: number;
}

export interface PlannedTurn {
  calls: PlannedCall[];
  /** The user stopped the answer: no final response, an interrupt marker instead. */
  interrupted?: boolean;
  /** A compaction at the turn's start: the context size Claude Code compacted. */
  compactedFrom?: number;
  /** Cache reads of each of the turn's responses (default 0: nothing read from the cache). */
  cacheRead?: number;
  /** Time between the previous turn's last row and this turn's prompt, beyond the usual second. */
  gapMs?: number;
}

export interface PlannedSession {
  name: string;
  cwd: string;
  turns: PlannedTurn[];
}

interface Tokens { input: number; output: number; cacheRead: number; cacheCreation: number }
const tokensOf = (turn: PlannedTurn): Tokens => ({ input: 100, output: 20, cacheRead: turn.cacheRead ?? 0, cacheCreation: 50 });

const uuidOf = (label: string) => {
  const hex = createHash('sha256').update(label).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};

const read = (path: string, range?: { offset: number; limit: number }) => ({ tool: 'Read', input: { file_path: path, ...range }, output: `     1\tcontents of ${path}`, ms: 40 });
const bash = (command: string, more: Partial<PlannedCall> = {}): PlannedCall => ({ tool: 'Bash', input: { command, description: 'Run it' }, output: 'ok', ms: 500, ...more });
export const failing = (command: string, output: string): PlannedCall => bash(command, { output, error: true });

/**
 * The plan. Found: a loop of one failing build (3 calls, blanks aside), 2 repeated reads, 2 not-found errors, a rule
 * asked for 3 times, an interrupted turn, a session compacting twice, 2 slow calls, a project reading little from
 * the cache. Twins not found: a command failing twice, one run 3 times without failing, a file read again after an
 * edit, other ranges of one file, the same file read in another session, another error, a rule asked twice, one
 * compaction in a session, a call just under the slow threshold, a project reading most of its input from the cache.
 */
export const INSIGHT_SESSIONS: PlannedSession[] = [
  { name: 'retry', cwd: '/work/alpha', turns: [
    { calls: [failing('npm run build', 'Exit code 1\nbuild failed'), failing('npm  run build', 'Exit code 1\nbuild failed'), failing('npm test', 'Exit code 1\n2 failing')], cacheRead: 2000 },
    { calls: [failing('npm run build ', 'Exit code 1\nbuild failed'), failing('npm test', 'Exit code 1\n2 failing'), bash('make'), bash('make'), bash('make')], cacheRead: 2000 },
  ] },
  { name: 'reads', cwd: '/work/alpha', turns: [
    { calls: [read('/work/alpha/a.ts'), read('/work/alpha/a.ts'), { tool: 'Edit', input: { file_path: '/work/alpha/a.ts', old_string: 'a', new_string: 'b' }, output: 'updated', ms: 30 }, read('/work/alpha/a.ts')], cacheRead: 2000 },
    { calls: [read('/work/alpha/a.ts'), read('/work/alpha/b.ts', { offset: 1, limit: 100 }), read('/work/alpha/b.ts', { offset: 101, limit: 100 })], cacheRead: 2000 },
  ] },
  { name: 'elsewhere', cwd: '/work/alpha', turns: [
    { calls: [read('/work/alpha/a.ts'), { tool: 'Read', input: { file_path: '/work/alpha/missing.ts' }, output: '<tool_use_error>File does not exist.</tool_use_error>', error: true, ms: 20 },
      failing('frobnicate --all', 'Exit code 127\n/bin/bash: line 1: frobnicate: command not found'), failing('npm run lint', 'Exit code 2\nlint errors')], cacheRead: 2000 },
  ] },
  { name: 'asks', cwd: '/work/beta', turns: [
    { calls: [bash('git push origin main', { asked: true }), bash('git push origin fix', { asked: true }), bash('rm -rf build', { asked: true })], cacheRead: 2000 },
    { calls: [bash('git push --force-with-lease', { asked: true }), bash('rm -rf dist', { asked: true }),
      bash('touch /etc/x', { deniedByRule: true, error: true, output: 'Permission to use Bash with command touch /etc/x has been denied.' })], cacheRead: 2000 },
  ] },
  { name: 'interrupted', cwd: '/work/beta', turns: [
    { calls: [bash('sleep 29', { ms: 29_999 })], interrupted: true, cacheRead: 2000 },
    { calls: [bash('npm run e2e', { ms: 45_000 }), bash('npm run bench', { ms: 31_000 })], cacheRead: 2000 },
  ] },
  { name: 'churn', cwd: '/work/gamma', turns: [
    { calls: [], compactedFrom: 150_000 },
    { calls: [], compactedFrom: 160_000 },
    { calls: [] },
  ] },
  { name: 'calm', cwd: '/work/beta', turns: [{ calls: [], compactedFrom: 120_000, cacheRead: 2000 }] },
];

/** What each pattern must report. */
export type ExpectedInsight = Pick<Insight, 'count' | 'sessions' | 'turns' | 'tokens' | 'cost_usd' | 'time_ms'>;

interface Written {
  sessionId: string;
  /** Per turn: its start, end, and its responses' tokens and cost. */
  turns: { startMs: number; endMs: number; tokens: number; cost: number }[];
}

/** Writes the plan's transcripts under `configDir` and its hook events into `spoolDir`; returns each session's ids and turns. */
export function writeInsightSessions(configDir: string, spoolDir: string, startMs: number, plans = INSIGHT_SESSIONS): Map<string, Written> {
  mkdirSync(spoolDir, { recursive: true, mode: 0o700 });
  const written = new Map<string, Written>();
  plans.forEach((plan, n) => {
    const sessionId = uuidOf(`insights/${plan.name}`);
    const path = join(configDir, 'projects', plan.cwd.replace(/[^a-zA-Z0-9]/g, '-'), `${sessionId}.jsonl`);
    mkdirSync(join(path, '..'), { recursive: true });
    const rows: object[] = [];
    let clock = startMs + n * 3_600_000;
    let parent: string | null = null;
    let rowIndex = 0;
    const row = (body: Record<string, unknown>, advanceMs = 1000) => {
      clock += advanceMs;
      const uuid = uuidOf(`${sessionId}/${rowIndex++}`);
      rows.push({ parentUuid: parent, isSidechain: false, userType: 'external', cwd: plan.cwd, sessionId, version: '2.1.114', gitBranch: 'main', ...body, uuid, timestamp: new Date(clock).toISOString() });
      parent = uuid;
      return uuid;
    };
    const session: Written = { sessionId, turns: [] };
    plan.turns.forEach((turn, t) => {
      const promptId = uuidOf(`${sessionId}/prompt/${t}`);
      clock += turn.gapMs ?? 0;
      const tokens = tokensOf(turn);
      let chats = 0;
      const assistant = (content: object[], stopReason: string | null) => {
        chats++;
        return row({ type: 'assistant', requestId: `req_${uuidOf(`${sessionId}/${rowIndex}/r`).slice(0, 13)}`, message: {
          id: `msg_${uuidOf(`${sessionId}/${rowIndex}/m`).replace(/-/g, '').slice(0, 20)}`, type: 'message', role: 'assistant', model: MODEL, content, stop_reason: stopReason, stop_sequence: null,
          usage: { input_tokens: tokens.input, output_tokens: tokens.output, cache_read_input_tokens: tokens.cacheRead, cache_creation_input_tokens: tokens.cacheCreation },
        } });
      };
      const startMs = clock + 1000;
      row({ type: 'user', promptId, message: { role: 'user', content: `task ${t} of ${plan.name}` } });
      if (turn.compactedFrom !== undefined) {
        row({ type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted', isMeta: false, level: 'info', compactMetadata: { trigger: 'auto', preTokens: turn.compactedFrom } });
      }
      turn.calls.forEach((call, c) => {
        const toolUseId = `toolu_${uuidOf(`${sessionId}/${t}/${c}`).replace(/-/g, '').slice(0, 24)}`;
        const use = assistant([{ type: 'tool_use', id: toolUseId, name: call.tool, input: call.input }], 'tool_use');
        const useMs = clock;
        if (call.asked) {
          const head = { session_id: sessionId, transcript_path: path, cwd: plan.cwd, prompt_id: promptId, permission_mode: 'default', tool_name: call.tool, tool_input: call.input };
          spool(spoolDir, useMs + 100, { ...head, hook_event_name: 'PreToolUse', tool_use_id: toolUseId });
          spool(spoolDir, useMs + 200, { ...head, hook_event_name: 'PermissionRequest', permission_suggestions: [] });
        }
        const text = call.output ?? '';
        // Allowed, it ran: Claude Code tells its end too (a request with no end is a refusal).
        if (call.asked) spool(spoolDir, useMs + call.ms - 100, { session_id: sessionId, transcript_path: path, cwd: plan.cwd, prompt_id: promptId, permission_mode: 'default',
          tool_name: call.tool, tool_input: call.input, tool_use_id: toolUseId, tool_response: { stdout: text, stderr: '', interrupted: false }, hook_event_name: 'PostToolUse' });
        row({ type: 'user', sourceToolAssistantUUID: use, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: text, is_error: call.error === true }] },
          toolUseResult: call.error ? `Error: ${text}` : call.tool === 'Bash' ? { stdout: text, stderr: '', interrupted: false, isImage: false } : text }, call.ms);
      });
      if (turn.interrupted) {
        assistant([{ type: 'text', text: 'Let me look at' }], null);
        row({ type: 'user', message: { role: 'user', content: [{ type: 'text', text: '[Request interrupted by user]' }] } });
      } else {
        assistant([{ type: 'text', text: 'done' }], 'end_turn');
      }
      const cost = priceChat(MODEL, { ...tokens, cacheCreation1h: 0 }, startMs).usd * chats;
      session.turns.push({ startMs, endMs: clock, tokens: chats * (tokens.input + tokens.output + tokens.cacheRead + tokens.cacheCreation), cost });
    });
    writeFileSync(path, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
    written.set(plan.name, session);
  });
  return written;
}

let spooled = 0;
/** One spool file, named as ccotel-hook.sh names it: `<fired-at ns, 20 digits>-<pid>-<8 hex>.json`. */
function spool(dir: string, atMs: number, payload: object): void {
  const name = `${(BigInt(atMs) * 1_000_000n + BigInt(spooled++)).toString().padStart(20, '0')}-4242-${createHash('sha256').update(String(spooled)).digest('hex').slice(0, 8)}.json`;
  writeFileSync(join(dir, name), JSON.stringify(payload), { mode: 0o600 });
}

/** A pattern's expected figures out of the affected (session, turn) pairs, their count and time. */
function figures(written: Map<string, Written>, affected: [string, number][], count: number, timeMs: number): ExpectedInsight {
  const turns = new Map(affected.map(([name, t]) => [`${name}/${t}`, written.get(name)!.turns[t]]));
  return {
    count,
    sessions: new Set(affected.map(([name]) => name)).size,
    turns: turns.size,
    tokens: [...turns.values()].reduce((sum, turn) => sum + turn.tokens, 0),
    cost_usd: Math.round([...turns.values()].reduce((sum, turn) => sum + turn.cost, 0) * 1e9) / 1e9,
    time_ms: timeMs,
  };
}

/** The answer for the plan: what each pattern must report (thresholds at their defaults). */
export function expectedInsights(written: Map<string, Written>): Record<string, ExpectedInsight> {
  const interrupted = written.get('interrupted')!.turns[0];
  return {
    // `npm run build` failed 3 times (twice in turn 0, blanks aside, once in turn 1); `npm test` only twice.
    retry_loop: figures(written, [['retry', 0], ['retry', 1]], 3, 1500),
    // a.ts read twice before its edit (the second a repeat), once after it and again in the next turn (a repeat).
    repeated_read: figures(written, [['reads', 0], ['reads', 1]], 2, 80),
    not_found: figures(written, [['elsewhere', 0]], 2, 20 + 500),
    // Bash(git push:*) asked 3 times; Bash(rm:*) only twice. No time blocked on the user known (no native telemetry).
    permission_friction: figures(written, [['asks', 0], ['asks', 1]], 3, 0),
    interrupted_work: figures(written, [['interrupted', 0]], 1, interrupted.endMs - interrupted.startMs),
    compaction_churn: figures(written, [['churn', 0], ['churn', 1]], 2, 0),
    slow_tools: figures(written, [['interrupted', 1]], 2, 45_000 + 31_000),
    // gamma's responses read nothing from the cache (3 turns, a response each); the others read most of their input.
    cache_efficiency: figures(written, [['churn', 0], ['churn', 1], ['churn', 2]], 3, 0),
  };
}
