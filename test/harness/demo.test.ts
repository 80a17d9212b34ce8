// `npm run demo` (issue 31): the same script, run as the README tells a newcomer to (less the build, which the
// suite has done: a second tsc writing dist/ would race the other test files reading it), into a store of its
// own. It must finish, name each failure mode with the scenario it came from, and leave every headline figure
// in the store: before, it failed at once (jsonc-parser under vite-node), and once started showed 3 turns for
// 17 sessions (a turn that had ended waited for the idle time).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, runProcess } from '../reliability/cli.js';
import { claudeBinaryProblem } from './run-claude.js';
import { skipWithout } from '../helpers/real-parts.js';

const DEMO = resolve(import.meta.dirname, 'demo.ts');
const dir = mkdtempSync(join(tmpdir(), 'ccotel-demo-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Rows = Record<string, number | string>[];

describe.skipIf(skipWithout(claudeBinaryProblem()))('npm run demo', () => {
  it('runs every scenario, names each failure mode with its scenario, and stores every headline figure', async () => {
    const store = join(dir, 'store');
    const demo = await runProcess('npx', ['vite-node', DEMO, '--', '--store', store], process.env, 240_000);
    expect(demo.stderr).not.toMatch(/ccotel demo:/);
    expect(demo.status).toBe(0);
    const found = demo.stdout.slice(demo.stdout.indexOf('Failure modes found'), demo.stdout.indexOf('Overview'));
    for (const [mode, scenario] of [
      ['orphan_process', 'server-left-running'],
      ['approval_scope', 'server-left-running'],
      ['signal_propagation', 'interrupt-escaped-child'],
      ['replay_divergence', 'resume-with-process-left'],
      ['abandoned_session', 'agent-killed'],
    ]) {
      expect(found).toMatch(new RegExp(`${mode}\\s+${scenario}\\s+\\S`));
    }
    expect(found).not.toContain('not seen within a minute');

    const report = await runCli(['report', '--store', store, '--json'], process.env);
    expect(report.status).toBe(0);
    const figures = JSON.parse(report.stdout) as Record<string, Rows>;
    const [overview] = figures.overview;
    // Every scenario session had a prompt, and each turn is told once it has ended, not after the idle time.
    expect(Number(overview.turns)).toBeGreaterThanOrEqual(Number(overview.sessions));
    expect(Number(overview.tool_calls)).toBeGreaterThan(0);
    expect(Number(overview.cost_usd)).toBeGreaterThan(0);
    expect(figures.permissionBlocks.length).toBeGreaterThan(0);
    expect(Number(figures.sessionStarts[0].resumes)).toBeGreaterThan(0);
    expect(figures.tokens.length).toBeGreaterThan(0);
    expect(new Set(figures.failureModes.map((row) => row.mode))).toEqual(
      new Set(['orphan_process', 'approval_scope', 'signal_propagation', 'replay_divergence', 'abandoned_session']),
    );
  });
});
