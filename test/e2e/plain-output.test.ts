// Issue 31: what the commands print into a pipe or a file holds no colour codes (`status` printed cli-table3's
// red keys and grey borders whatever its output was), and a pipe closed early ends a command without a stack trace.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { generateCorpus } from '../generator/corpus.js';
import { assertBuilt, CLI, cliEnv, runCli, runProcess, startRun } from '../reliability/cli.js';
import { waitFor } from '../reliability/transcripts.js';

const home = mkdtempSync(join(tmpdir(), 'ccotel-plain-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

it('status and report print no escape codes into a pipe', async () => {
  assertBuilt();
  // A terminal type as a user's shell has it: without one the colour library would stay plain anyway.
  const env = cliEnv(home, { TERM: 'xterm-256color' });
  const store = join(home, 'store');
  const run = startRun(['--store', store], env);
  await waitFor('run to follow', () => run.output().includes('following transcripts'), 90_000);
  run.child.kill('SIGTERM');
  await run.exited;
  const status = await runCli(['status', '--store', store], env);
  expect(status.stdout).toContain('sidecar');
  const report = await runCli(['report', '--store', store], env);
  for (const output of [status.stdout, report.stdout]) expect(output).not.toContain('\u001b[');
});

it('a reader that stops early (`| head`) ends the command quietly', async () => {
  assertBuilt();
  const corpus = await generateCorpus({ seed: 7, root: join(home, 'claude'), hostLayout: 'single-root', sessions: 150 });
  const env = cliEnv(home, { CLAUDE_CONFIG_DIR: corpus.configDirs.join(',') });
  const store = join(home, 'store-head');
  expect((await runCli(['backfill', '--store', store, '--no-progress'], env)).status).toBe(0);
  // A shell's pipe (a child's stdio from Node is a socket, where the write fails otherwise), and more than it holds
  // (64 kB): the command writes on after `head` has gone. The report twice: made, then printed from its kept output.
  const commands = [
    ['query', '--store', store, "SELECT number, repeat('x', 100) FROM numbers(20000)"],
    ['report', 'session', '--json', '--timezone', 'UTC', '--store', store],
    ['report', 'session', '--json', '--timezone', 'UTC', '--store', store],
  ];
  for (const args of commands) {
    const piped = await runProcess('bash', ['-c', 'set -o pipefail; "$0" "$@" | head -c 100 > /dev/null', process.execPath, CLI, ...args], env);
    expect([args.join(' '), piped.stderr, piped.status]).toEqual([args.join(' '), '', 0]);
  }
  const whole = await runCli(commands[1], env);
  expect(whole.stdout.length).toBeGreaterThan(65_536);
}, 120_000);
