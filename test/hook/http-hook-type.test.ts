import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SPOOLED_EVENTS } from '../../sidecar/src/install/hook-events.js';
import { startModelServer } from '../harness/model-server.js';
import { claudeBinaryProblem, runClaude } from '../harness/run-claude.js';
import { usage } from '../harness/script-steps.js';
import { skipWithout } from '../helpers/real-parts.js';

// Why ccotel spools with a command hook and does not offer Claude Code's own `http` hook type
// (docs/HOOKS.md): the real CLI never posts SessionStart, and with the receiver down every event shows
// an error to the user and leaves a row in the transcript. If a release changes either, this fails.

const problem = claudeBinaryProblem();
const root = mkdtempSync(join(tmpdir(), 'ccotel-http-hook-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function runWithHttpHook(name: string, url: string): Promise<{ exitCode: number | null; stderr: string; rows: Record<string, unknown>[] }> {
  const home = join(root, name, 'home');
  const projectDir = join(root, name, 'project');
  mkdirSync(join(home, '.claude'), { recursive: true });
  mkdirSync(projectDir, { recursive: true });
  const hooks = Object.fromEntries(SPOOLED_EVENTS.map((event) => [event, [{ hooks: [{ type: 'http', url, timeout: 5 }] }]]));
  writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ hooks }));
  const model = await startModelServer([
    { toolCalls: [{ name: 'Bash', input: { command: 'true', description: 'a call' } }], usage: usage(10, 5) },
    { text: 'done', usage: usage(12, 3) },
  ]);
  try {
    const result = await runClaude({ home, projectDir, prompt: 'run it', modelUrl: model.url, allowedTools: ['Bash'] });
    const projects = join(home, '.claude', 'projects');
    const rows = readdirSync(projects, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.jsonl'))
      .flatMap((file) => readFileSync(join(projects, file), 'utf8').split('\n').filter(Boolean))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    return { exitCode: result.exitCode, stderr: result.stderr, rows };
  } finally {
    await model.close();
  }
}

describe.skipIf(skipWithout(problem))('Claude Code 2.1.332 `http` hooks (slow: the real CLI)', () => {
  it('posts every event but SessionStart to a listening receiver', async () => {
    const events: string[] = [];
    const receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        events.push((JSON.parse(body) as { hook_event_name: string }).hook_event_name);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const run = await runWithHttpHook('listening', `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`);
      expect(run.exitCode).toBe(0);
      expect(events).toEqual(expect.arrayContaining(['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'SessionEnd']));
      expect(events).not.toContain('SessionStart');
    } finally {
      receiver.close();
    }
  }, 120_000);

  it('with the receiver down: the run succeeds, but each event leaves an error row and SessionEnd an error line', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const run = await runWithHttpHook('down', `http://127.0.0.1:${port}/hook`);
    expect(run.exitCode).toBe(0);
    const failed = run.rows.flatMap((row) => {
      const attachment = row.attachment as { type?: string; hookEvent?: string; stderr?: string } | undefined;
      return attachment?.type === 'hook_non_blocking_error' ? [attachment] : [];
    });
    expect(failed.map((attachment) => attachment.hookEvent)).toEqual(expect.arrayContaining(['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop']));
    expect(failed.every((attachment) => attachment.stderr?.includes('ECONNREFUSED'))).toBe(true);
    expect(run.stderr).toContain('SessionEnd hook');
  }, 120_000);
});
