// Tokens and cost per Codex session equal ccusage's (`ccusage codex session`, the project's ccusage) on the same
// recorded rollouts — except for a fork, which ccusage leaves out: the server's log shows it answered the fork's
// own requests (a fork's rollout holds only its own responses; its cumulative total goes on from its parent's), so
// ccotel counting them is right and ccusage under-counts by exactly those responses.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexFixtures } from '../harness/codex-fixtures.js';
import { assertBuilt, cliEnv } from '../reliability/cli.js';
import { storeCli } from './store-cli.js';

const CCUSAGE = join(import.meta.dirname, '..', '..', 'node_modules', 'ccusage', 'src', 'cli.js');

interface TheirSession { sessionFile: string; inputTokens: number; cacheReadTokens: number; cacheCreationTokens: number; outputTokens: number; costUSD: number }
interface OurRow { period: string; input_tokens: number; cache_read_tokens: number; cache_creation_tokens: number; output_tokens: number; cost_usd: number }

describe.each(codexFixtures())('Codex $version: ccotel and ccusage', (fixture) => {
  it('agree on every session’s tokens and cost but a fork’s, whose responses ccusage drops', async () => {
    assertBuilt();
    const home = mkdtempSync(join(tmpdir(), 'ccotel-codex-ccusage-'));
    const { ccotel } = storeCli(join(home, 'store'), () => cliEnv(home));
    await ccotel('backfill', '--json', '--codex-home', fixture.home);
    const ours = (JSON.parse(await ccotel('report', 'session', '--json', '--agent', 'codex')) as { rows: OurRow[] }).rows;
    const theirs = (JSON.parse(execFileSync(process.execPath, [CCUSAGE, 'codex', 'session', '--json', '--offline'], {
      env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: fixture.home, TZ: 'UTC' }, encoding: 'utf8',
    })) as { sessions: TheirSession[] }).sessions;
    const theirsById = new Map(theirs.map((session) => [session.sessionFile.slice(-36), session]));
    const forks = new Set(fixture.threads.filter((_, n) => fixture.runs[n].forks !== undefined));
    // Every rollout is a session: each run's thread, and a spawned subagent's.
    expect(ours.map((row) => row.period).sort()).toEqual(fixture.rollouts.map((path) => path.slice(-'.jsonl'.length - 36, -'.jsonl'.length)).sort());
    for (const row of ours) {
      const them = theirsById.get(row.period);
      if (forks.has(row.period)) {
        expect(them).toBeUndefined();
        // What the server answered in the fork's runs is what ccotel has.
        const answered = fixture.runs.filter((_, n) => fixture.threads[n] === row.period).flatMap((run) => run.steps);
        expect(row.input_tokens + row.cache_read_tokens).toBe(answered.reduce((n, step) => n + step.usage.input_tokens, 0));
        continue;
      }
      expect([row.input_tokens, row.cache_read_tokens, row.cache_creation_tokens, row.output_tokens], row.period)
        .toEqual([them!.inputTokens, them!.cacheReadTokens, them!.cacheCreationTokens, them!.outputTokens]);
      expect(row.cost_usd).toBeCloseTo(them!.costUSD, 9);
    }
    expect(theirs).toHaveLength(ours.length - forks.size);
  }, 180_000);
});
