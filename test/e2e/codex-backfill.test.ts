// `ccotel backfill` of the recorded Codex rollouts (test/fixtures/codex): turns, tool calls and their outcomes,
// tokens and cost in the store and in `report session --json`, each against what this test reads from the rollout
// files itself — the turns Codex completed, the exit code each command's output states, the thread's cumulative
// usage of its last token count — and the list price typed in here.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateCorpus } from '../generator/corpus.js';
import { codexFixtures } from '../harness/codex-fixtures.js';
import { assertBuilt, cliEnv } from '../reliability/cli.js';
import { listCost } from './list-prices.js';
import { storeCli } from './store-cli.js';

interface Row { type: string; payload: Record<string, unknown> }

/** What the rollout files themselves say, per thread. */
function fromRollouts(paths: string[]) {
  return paths.map((path) => {
    const rows = readFileSync(path, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Row);
    const events = rows.filter((row) => row.type === 'event_msg').map((row) => row.payload);
    const thread = String(rows.find((row) => row.type === 'session_meta')!.payload.id);
    const turns = Object.fromEntries(events
      .filter((event) => event.type === 'task_complete' || event.type === 'turn_aborted')
      .map((event) => [String(event.turn_id), event.type === 'task_complete' ? 'completed' : 'interrupted']));
    // Each call's outcome as its output states it: its exit code, "aborted by user" (the interrupt), or neither (the
    // agent tools, which answer JSON).
    const outcomes = Object.fromEntries(rows
      .filter((row) => row.payload.type === 'function_call_output')
      .map((row) => {
        const code = /Process exited with code (-?\d+)/.exec(String(row.payload.output))?.[1];
        return [String(row.payload.call_id), code === undefined ? (String(row.payload.output).includes('aborted by user') ? 'interrupted' : 'success') : Number(code) === 0 ? 'success' : 'error'];
      }));
    const counts = events.filter((event) => event.type === 'token_count' && event.info).map((event) => event.info as Record<'total_token_usage' | 'last_token_usage', Record<string, number>>);
    // The thread's own usage: its last cumulative total less what the total held before its first response (a
    // fork's goes on from its parent's).
    const own = (key: string) => counts[counts.length - 1].total_token_usage[key] - (counts[0].total_token_usage[key] - counts[0].last_token_usage[key]);
    const tokens = { input: own('input_tokens') - own('cached_input_tokens'), output: own('output_tokens'), cacheRead: own('cached_input_tokens'), cacheCreation: 0 };
    return { thread, turns, outcomes, tokens };
  });
}

describe.each(codexFixtures())('backfill of Codex $version rollouts', (fixture) => {
  const home = mkdtempSync(join(tmpdir(), 'ccotel-codex-home-'));
  const storeDir = join(home, 'store');
  const { ccotel, query } = storeCli(storeDir, () => cliEnv(home));
  const expected = fromRollouts(fixture.rollouts);

  it('stores each thread’s turns, calls with their exit code’s outcome, and its tokens and cost once', async () => {
    assertBuilt();
    const summary = JSON.parse(await ccotel('backfill', '--json', '--codex-home', fixture.home)) as { files: number; skipped: Record<string, number> };
    expect(summary.files).toBe(fixture.rollouts.length);
    expect(summary.skipped).toEqual({});
    const spans = `(SELECT * FROM otel_traces LIMIT 1 BY SpanId)`;
    const turns = await query<{ session: string; turn: string; outcome: string; agent: string; provider: string }>(
      `SELECT SpanAttributes['session.id'] AS session, SpanAttributes['message.uuid'] AS turn, SpanAttributes['ccotel.turn.outcome'] AS outcome,
         SpanAttributes['gen_ai.agent.name'] AS agent, SpanAttributes['gen_ai.provider.name'] AS provider FROM ${spans} WHERE SpanName = 'invoke_agent codex'`);
    const calls = await query<{ id: string; outcome: string }>(`SELECT SpanAttributes['gen_ai.tool.call.id'] AS id, SpanAttributes['ccotel.tool.outcome'] AS outcome FROM ${spans} WHERE startsWith(SpanName, 'execute_tool ')`);
    for (const thread of expected) {
      const mine = turns.filter((turn) => turn.session === thread.thread);
      expect(Object.fromEntries(mine.map((turn) => [turn.turn, turn.outcome]))).toEqual(thread.turns);
      expect(mine.every((turn) => turn.agent === 'codex' && turn.provider === 'openai')).toBe(true);
    }
    expect(Object.fromEntries(calls.map((call) => [call.id, call.outcome]))).toEqual(Object.assign({}, ...expected.map((thread) => thread.outcomes)));
    expect(new Set(calls.map((call) => call.outcome))).toEqual(new Set(['success', 'error', 'interrupted']));
    // The subagent a spawn_agent call started (the thread its output names) is a span under that call.
    const spawns = await query<{ span: string; trace: string; session: string; output: string }>(
      `SELECT SpanId AS span, TraceId AS trace, SpanAttributes['session.id'] AS session, SpanAttributes['ccotel.tool.output'] AS output FROM ${spans} WHERE SpanName = 'execute_tool spawn_agent'`);
    const subagents = await query<{ parent: string; trace: string; session: string; agent: string }>(
      `SELECT ParentSpanId AS parent, TraceId AS trace, SpanAttributes['session.id'] AS session, SpanAttributes['ccotel.agent.id'] AS agent FROM ${spans} WHERE SpanName = 'invoke_agent default'`);
    expect(subagents).toEqual(spawns.map((spawn) => ({ parent: spawn.span, trace: spawn.trace, session: spawn.session, agent: /"agent_id":"([^"]+)"/.exec(spawn.output)![1] })));
    expect(subagents.map((subagent) => subagent.agent).every((thread) => expected.some((t) => t.thread === thread))).toBe(true);

    const report = JSON.parse(await ccotel('report', 'session', '--json', '--timezone', 'UTC')) as { rows: { period: string; input_tokens: number; output_tokens: number; cache_read_tokens: number; cache_creation_tokens: number; cost_usd: number }[]; totals: { cost_usd: number } };
    expect(report.rows.map((row) => row.period).sort()).toEqual(expected.map((thread) => thread.thread).sort());
    for (const thread of expected) {
      const row = report.rows.find((r) => r.period === thread.thread)!;
      expect({ input: row.input_tokens, output: row.output_tokens, cacheRead: row.cache_read_tokens, cacheCreation: row.cache_creation_tokens }).toEqual(thread.tokens);
      expect(row.cost_usd).toBeCloseTo(listCost('gpt-5.1-codex', thread.tokens, false), 9);
    }
    expect(report.totals.cost_usd).toBeGreaterThan(0);
  }, 180_000);

  it('stores nothing twice when the same rollouts are read again', async () => {
    const before = await query<{ n: number }>(`SELECT count() AS n FROM (SELECT * FROM otel_traces LIMIT 1 BY SpanId)`);
    await ccotel('backfill', '--json', '--codex-home', fixture.home);
    const report = JSON.parse(await ccotel('report', 'session', '--json', '--timezone', 'UTC')) as { rows: { period: string; input_tokens: number }[] };
    for (const thread of expected) expect(report.rows.find((r) => r.period === thread.thread)!.input_tokens).toBe(thread.tokens.input);
    expect(await query<{ n: number }>(`SELECT count() AS n FROM (SELECT * FROM otel_traces LIMIT 1 BY SpanId)`)).toEqual(before);
  }, 180_000);
});

describe('one store with both agents', () => {
  const home = mkdtempSync(join(tmpdir(), 'ccotel-two-agents-'));
  const fixture = codexFixtures().at(-1)!;
  const codex = fromRollouts(fixture.rollouts);

  it('reports each agent’s sessions, their totals apart and together, and the turns of both', async () => {
    assertBuilt();
    const expected = await generateCorpus({ seed: 5, root: join(home, 'claude'), sessions: 4, hostLayout: 'single-root' });
    const env = cliEnv(home, { CLAUDE_CONFIG_DIR: expected.configDirs.join(',') });
    const { ccotel, query } = storeCli(join(home, 'store'), () => env);
    await ccotel('backfill', '--json', '--codex-home', fixture.home);
    type Figures = { input_tokens: number; output_tokens: number; cache_read_tokens: number; cache_creation_tokens: number; sessions: number };
    const report = JSON.parse(await ccotel('report', 'session', '--json')) as { rows: { period: string; agent: string }[]; totals: Figures; agents: Record<string, Figures> };
    const sum = (sums: { input: number; output: number; cacheRead: number; cacheCreation: number }[]) => ({
      input_tokens: sums.reduce((n, s) => n + s.input, 0), output_tokens: sums.reduce((n, s) => n + s.output, 0),
      cache_read_tokens: sums.reduce((n, s) => n + s.cacheRead, 0), cache_creation_tokens: sums.reduce((n, s) => n + s.cacheCreation, 0),
    });
    const claude = Object.values(expected.perSessionTokens);
    expect(report.agents.codex).toMatchObject({ ...sum(codex.map((thread) => thread.tokens)), sessions: codex.length });
    expect(report.agents['claude-code']).toMatchObject({ ...sum(claude), sessions: claude.length });
    expect(report.totals).toMatchObject({ ...sum([...claude, ...codex.map((thread) => thread.tokens)]), sessions: claude.length + codex.length });
    expect(report.rows.filter((row) => row.agent === 'codex').map((row) => row.period).sort()).toEqual(codex.map((thread) => thread.thread).sort());

    const onlyCodex = JSON.parse(await ccotel('report', 'daily', '--json', '--agent', 'codex')) as { totals: Figures };
    expect(onlyCodex.totals).toMatchObject({ ...sum(codex.map((thread) => thread.tokens)), sessions: codex.length });
    const overview = JSON.parse(await ccotel('report', '--json')) as { overview: { turns: number }[]; turns: { outcome: string; turns: number }[] };
    const codexTurns = codex.flatMap((thread) => Object.values(thread.turns));
    expect(overview.overview[0].turns).toBe(expected.turns + codexTurns.length);
    expect(overview.turns.find((row) => row.outcome === 'completed')!.turns).toBe(expected.turnsByOutcome.completed + codexTurns.filter((outcome) => outcome === 'completed').length);
    expect(new Set(overview.turns.map((row) => row.outcome)).size).toBe(overview.turns.length);

    // Every metric point of a session names its agent: the turns and tokens split as the report splits them.
    const points = await query<{ agent: string; metric: string; value: number }>(
      `SELECT Attributes['gen_ai.agent.name'] AS agent, MetricName AS metric, sum(Value) AS value FROM otel_metrics_sum
       WHERE MetricName IN ('ccotel.turns', 'ccotel.tokens') GROUP BY agent, metric ORDER BY agent, metric`);
    const costs = await query<{ agent: string; usd: number }>(`SELECT Attributes['gen_ai.agent.name'] AS agent, sum(Value) AS usd FROM otel_metrics_sum WHERE MetricName = 'ccotel.cost' GROUP BY agent ORDER BY agent`);
    const reported = JSON.parse(await ccotel('report', 'session', '--json')) as { agents: Record<string, { cost_usd: number }> };
    expect(costs.map((row) => row.agent)).toEqual(['claude-code', 'codex']);
    for (const row of costs) expect(row.usd).toBeCloseTo(reported.agents[row.agent].cost_usd, 6);
    const tokens = (sums: { input: number; output: number; cacheRead: number; cacheCreation: number }[]) => sums.reduce((n, s) => n + s.input + s.output + s.cacheRead + s.cacheCreation, 0);
    expect(points).toEqual([
      { agent: 'claude-code', metric: 'ccotel.tokens', value: tokens(claude) },
      { agent: 'claude-code', metric: 'ccotel.turns', value: expected.turns },
      { agent: 'codex', metric: 'ccotel.tokens', value: tokens(codex.map((thread) => thread.tokens)) },
      { agent: 'codex', metric: 'ccotel.turns', value: codexTurns.length },
    ]);
    const unnamed = await query<{ metric: string }>(`SELECT DISTINCT MetricName AS metric FROM otel_metrics_sum WHERE Attributes['gen_ai.agent.name'] = '' AND NOT startsWith(MetricName, 'ccotel.sidecar.') ORDER BY metric`);
    expect(unnamed).toEqual([]);
  }, 240_000);
});
