import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installHooks } from '../../sidecar/src/install/hooks.js';
import { installShell } from '../../sidecar/src/install/shell.js';
import { statePaths } from '../../sidecar/src/paths.js';
import { startModelServer, type ModelServer } from '../harness/model-server.js';

// The real Claude Code 2.1.332 binary, offline against the scripted model server: install-hooks
// and install-shell into a temp HOME, one prompt with two Bash calls, then read what was spooled
// and logged.
const CLAUDE = fileURLToPath(new URL('../../node_modules/@anthropic-ai/claude-code-linux-x64/claude', import.meta.url));
const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
const FIRST = `printf '%s\\n' "it's \\"quoted\\" ✓"; echo to-stderr >&2`;
const SECOND = 'ls /definitely/not/here | cat; exit 3';

let home: string;
let server: ModelServer;
let claudeOutput = '';

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'ccotel-claude-'));
  const env = { HOME: home };
  installHooks({ env });
  installShell({ env });
  server = await startModelServer([
    { toolCalls: [{ name: 'Bash', input: { command: FIRST, description: 'first' } }], usage },
    { toolCalls: [{ name: 'Bash', input: { command: SECOND, description: 'second' } }], usage },
    { text: 'done', usage },
  ]);
  const child = spawn(CLAUDE, ['-p', 'run two commands', '--allowedTools', 'Bash', '--output-format', 'json'], {
    cwd: home,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (d: Buffer) => (claudeOutput += d.toString()));
  const exited = new Promise((resolve) => child.on('close', resolve));
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  await exited;
  clearTimeout(timer);
});

afterAll(async () => {
  await server?.close();
  rmSync(home, { recursive: true, force: true });
});

function spooled(): { name: string; event: Record<string, unknown> }[] {
  const spool = statePaths({ HOME: home }).spoolDir;
  return readdirSync(spool)
    .sort()
    .map((name) => ({ name, event: JSON.parse(readFileSync(join(spool, name), 'utf8')) as Record<string, unknown> }));
}

describe('with the real Claude Code', () => {
  it('spools the hook events of the session in firing order', () => {
    expect(JSON.parse(claudeOutput).is_error).toBe(false);
    const events = spooled();
    const names = events.map((e) => e.event.hook_event_name);
    for (const expected of ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Stop', 'SessionEnd']) {
      expect(names).toContain(expected);
    }
    expect(names[0]).toBe('SessionStart');
    expect(names.at(-1)).toBe('SessionEnd');
    expect(names.indexOf('PreToolUse')).toBeLessThan(names.indexOf('PostToolUse'));
    expect(new Set(events.map((e) => e.event.session_id)).size).toBe(1);
  });

  it("logs each Bash tool command with its exit status, leaving the tool's output as it was", () => {
    const sessionId = spooled()[0].event.session_id as string;
    const log = join(statePaths({ HOME: home }).shellLogDir, `${sessionId}.jsonl`);
    const records = readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    const starts = records.filter((r) => r.ev === 'start');
    expect(starts.map((r) => r.cmd)).toEqual([FIRST, SECOND]);
    const ends = records.filter((r) => r.ev === 'end');
    expect(ends.map((r) => [r.pid, r.status])).toEqual(starts.map((r, i) => [r.pid, i === 0 ? 0 : 3]));
    expect(starts.every((r) => r.sid === sessionId && r.psid === r.pid)).toBe(true); // Claude Code runs each in its own session

    const failure = spooled().find((e) => e.event.hook_event_name === 'PostToolUseFailure')!.event;
    expect(failure.error).toMatch(/^Exit code 3/);
    const success = spooled().find((e) => e.event.hook_event_name === 'PostToolUse')!.event;
    // Claude Code hands the command one output file for both streams.
    expect(success.tool_response).toMatchObject({ stdout: `it's "quoted" ✓\nto-stderr`, stderr: '', interrupted: false });
  });
});
