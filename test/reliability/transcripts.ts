// Small, exact transcripts for the tailing and reliability tests: each turn is a prompt, an assistant
// message with one tool call, its result, and a final answer — so each turn yields a known set of span
// ids (turn root, two chat spans, one execute_tool span).
import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Deterministic uuid-shaped id from a label. */
export function uuidOf(label: string): string {
  const hex = createHash('sha256').update(label).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export interface TurnOptions {
  sessionId: string;
  /** Index of the turn in its session: ids and times derive from it. */
  index: number;
  /** Epoch ms of the session's first turn. */
  startMs: number;
  /** The rows' working directory and branch (default /home/dev/project on main; '' writes none). */
  cwd?: string;
  gitBranch?: string;
}

/** The JSONL lines of one complete turn (compact JSON, as Claude Code writes it). */
export function turnLines({ sessionId, index, startMs, cwd = '/home/dev/project', gitBranch = 'main' }: TurnOptions): string[] {
  const at = (second: number) => new Date(startMs + index * 60_000 + second * 1000).toISOString();
  const id = (what: string) => uuidOf(`${sessionId}/${index}/${what}`);
  const base = { sessionId, cwd, version: '2.1.0', gitBranch, isSidechain: false, userType: 'external' };
  const toolUseId = `toolu_${id('tool').replace(/-/g, '').slice(0, 24)}`;
  const usage = { input_tokens: 10 + index, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  return [
    { ...base, type: 'user', uuid: id('prompt'), parentUuid: null, timestamp: at(0), message: { role: 'user', content: `please do step ${index}` } },
    {
      ...base,
      type: 'assistant',
      uuid: id('call'),
      parentUuid: id('prompt'),
      timestamp: at(1),
      requestId: `req_${id('r1').slice(0, 8)}`,
      message: { id: `msg_${id('m1').slice(0, 12)}`, role: 'assistant', model: 'claude-sonnet-4-5', stop_reason: 'tool_use', usage, content: [{ type: 'tool_use', id: toolUseId, name: 'Bash', input: { command: `echo ${index}` } }] },
    },
    {
      ...base,
      type: 'user',
      uuid: id('result'),
      parentUuid: id('call'),
      timestamp: at(2),
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content: `${index}`, is_error: false }] },
      toolUseResult: { stdout: `${index}`, stderr: '', interrupted: false },
    },
    {
      ...base,
      type: 'assistant',
      uuid: id('answer'),
      parentUuid: id('result'),
      timestamp: at(3),
      requestId: `req_${id('r2').slice(0, 8)}`,
      message: { id: `msg_${id('m2').slice(0, 12)}`, role: 'assistant', model: 'claude-sonnet-4-5', stop_reason: 'end_turn', usage, content: [{ type: 'text', text: `done ${index}` }] },
    },
  ].map((row) => JSON.stringify(row));
}

/** Append turns `from`..`to`-1 of a session to `path`. */
export function appendTurns(path: string, sessionId: string, from: number, to: number, startMs: number): void {
  mkdirSync(dirname(path), { recursive: true });
  const lines: string[] = [];
  for (let index = from; index < to; index++) lines.push(...turnLines({ sessionId, index, startMs }));
  appendFileSync(path, lines.map((line) => line + '\n').join(''));
}

/** `<root>/projects/<project>/<session>.jsonl`, the main transcript layout. */
export function sessionPath(configDir: string, sessionId: string, project = '-home-dev-project'): string {
  return join(configDir, 'projects', project, `${sessionId}.jsonl`);
}

/** Session i of a busy host: spread over 100 project directories. */
export function manyFilesPath(configDir: string, i: number): string {
  return sessionPath(configDir, `session-${i}`, `-home-dev-project-${i % 100}`);
}

/**
 * Sessions `from`..`to`-1 in `manyFilesPath` files: one in `turnEvery` holds a complete turn (at
 * `startMs`), the others only a summary row (a file that is followed but holds no conversation).
 */
export function writeManyTranscripts(configDir: string, from: number, to: number, turnEvery: number, startMs: number): void {
  for (let i = from; i < to; i++) {
    const path = manyFilesPath(configDir, i);
    if (i % turnEvery === 0) {
      appendTurns(path, `session-${i}`, 0, 1, startMs);
    } else {
      mkdirSync(dirname(path), { recursive: true });
      appendFileSync(path, JSON.stringify({ type: 'summary', summary: `conversation ${i}`, leafUuid: uuidOf(`leaf/${i}`) }) + '\n');
    }
  }
}

/** Poll `check` until it holds; fail with `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolveDelay) => setTimeout(resolveDelay, 50));
  }
}
