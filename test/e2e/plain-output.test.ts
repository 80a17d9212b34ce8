// Issue 31: what the commands print into a pipe or a file holds no colour codes (`status` printed cli-table3's
// red keys and grey borders whatever its output was).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { assertBuilt, cliEnv, runCli, startRun } from '../reliability/cli.js';
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
