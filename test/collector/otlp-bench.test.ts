// The gateway benchmark (bench/otlp.ts) runs to its end, each of its gateway variants accepting every span: it once
// crashed for sessions unseen (an earlier gateway run with this tree's test overlay, which names a pipeline the
// earlier one lacks), and with it the one measure of the gateway's throughput goal. Its figures are not checked here.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SUMMARY_ENV, type GoalFigure } from '../../bench/goals.js';
import { runProcess } from '../reliability/cli.js';
import { requireCollectorBinary } from './binary.js';

const dir = mkdtempSync(join(tmpdir(), 'ccotel-otlp-bench-'));
const VITE_NODE = join('node_modules', '.bin', 'vite-node');

beforeAll(() => {
  requireCollectorBinary();
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

it('runs every gateway variant of the throughput benchmark, an earlier commit beside this tree', async () => {
  const summary = join(dir, 'summary.jsonl');
  // Its earlier commit as `npm run bench` runs it (from the clone's history): a gateway from before the facts pipeline.
  const run = await runProcess(VITE_NODE, ['bench/otlp.ts', '2000'], { ...process.env, [SUMMARY_ENV]: summary }, 240_000);
  expect(run.status, run.stderr).toBe(0);
  const [{ bench, figures }] = readFileSync(summary, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { bench: string; figures: GoalFigure[] });
  expect(bench).toBe('otlp gateway');
  expect(figures[0].measured).toBeGreaterThan(0);
  expect(run.stdout).toMatch(/'gateway\.yaml at \w+'/);
}, 300_000);
