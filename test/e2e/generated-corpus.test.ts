// Generated corpus (every quirk of the formats spec, with its exact expected answer) → `ccotel backfill` →
// SQL on the store must give exactly the generator's counts; a second backfill adds no rows.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateCorpus, type Expected } from '../generator/corpus.js';
import { storeCli } from './store-cli.js';


const spans = (where: string) => `(SELECT * FROM otel_traces WHERE ${where} LIMIT 1 BY SpanId)`;
const logs = (where: string) => `(SELECT * FROM otel_logs WHERE ${where} LIMIT 1 BY LogAttributes['ccotel.record.id'])`;
const toRecord = (rows: { key: string; n: number }[]) => Object.fromEntries(rows.map((row) => [row.key, row.n]));
const nonZero = (record: Record<string, number>) => Object.fromEntries(Object.entries(record).filter(([, n]) => n > 0));

// The CLI runs in child processes, so each corpus gets its own embedded store (one chdb directory per process).
describe.each([
  { seed: 20261129, sessions: 12 },
  { seed: 5, sessions: 60 },
])('generated corpus (seed $seed, $sessions sessions) → backfill → store', ({ seed, sessions }) => {
  const root = mkdtempSync(join(tmpdir(), 'ccotel-corpus-'));
  const storeDir = join(root, 'store');
  let expected: Expected;
  let env: NodeJS.ProcessEnv;

  const { ccotel, query } = storeCli(storeDir, () => env);

  beforeAll(async () => {
    expected = await generateCorpus({ seed, root: join(root, 'corpus'), sessions, hostLayout: 'multi-root' });
    env = {
      ...process.env,
      HOME: join(root, 'corpus', 'home'),
      CLAUDE_CONFIG_DIR: expected.configDirs.join(','),
      CCOTEL_RAW_TTL_DAYS: '0',
    };
    await ccotel('backfill', '--no-progress');
  });

  it('has the expected sessions and turns by outcome', async () => {
    // A session is known by its turns or by its start (a copied history may add no turn of its own).
    const [{ sessions }] = await query<{ sessions: number }>(
      `SELECT uniqExact(id) AS sessions FROM (
         SELECT SpanAttributes['session.id'] AS id FROM otel_traces WHERE SpanName = 'invoke_agent claude-code'
         UNION ALL SELECT LogAttributes['session.id'] FROM otel_logs WHERE EventName = 'ccotel.session.started')`,
    );
    expect(sessions).toBe(expected.sessions);
    const byOutcome = toRecord(await query(`SELECT SpanAttributes['ccotel.turn.outcome'] AS key, count() AS n FROM ${spans(`SpanName = 'invoke_agent claude-code'`)} GROUP BY key`));
    expect(byOutcome).toEqual(nonZero(expected.turnsByOutcome));
  });

  it('has one chat span per API response and the deduplicated token sums', async () => {
    const [row] = await query<{ chats: number; input: number; output: number; cacheRead: number; cacheCreation: number }>(
      `SELECT count() AS chats,
         sum(toUInt64(SpanAttributes['ccotel.usage.uncached.input_tokens'])) AS input,
         sum(toUInt64(SpanAttributes['gen_ai.usage.output_tokens'])) AS output,
         sum(toUInt64(SpanAttributes['gen_ai.usage.cache_read.input_tokens'])) AS cacheRead,
         sum(toUInt64(SpanAttributes['gen_ai.usage.cache_creation.input_tokens'])) AS cacheCreation
       FROM ${spans(`startsWith(SpanName, 'chat ')`)}`,
    );
    expect(row).toEqual({ chats: expected.chatSpans, ...expected.tokens });
  });

  it('attributes tokens to their session', async () => {
    const rows = await query<{ session: string; input: number; output: number; cacheRead: number; cacheCreation: number }>(
      `SELECT SpanAttributes['session.id'] AS session,
         sum(toUInt64(SpanAttributes['ccotel.usage.uncached.input_tokens'])) AS input,
         sum(toUInt64(SpanAttributes['gen_ai.usage.output_tokens'])) AS output,
         sum(toUInt64(SpanAttributes['gen_ai.usage.cache_read.input_tokens'])) AS cacheRead,
         sum(toUInt64(SpanAttributes['gen_ai.usage.cache_creation.input_tokens'])) AS cacheCreation
       FROM ${spans(`startsWith(SpanName, 'chat ')`)} GROUP BY session`,
    );
    const ours = Object.fromEntries(rows.map(({ session, ...tokens }) => [session, tokens]));
    // Sessions holding copies of another's messages are attributed by read order; every other one is exact.
    const sharing = new Set(expected.sessionsSharingMessages);
    const comparable = Object.entries(expected.perSessionTokens).filter(([session]) => !sharing.has(session));
    expect(comparable.length).toBeGreaterThan(0);
    for (const [session, tokens] of comparable) expect(ours[session], session).toEqual(tokens);
  });

  it('has every tool call with its outcome', async () => {
    const byOutcome = toRecord(await query(`SELECT SpanAttributes['ccotel.tool.outcome'] AS key, count() AS n FROM ${spans(`startsWith(SpanName, 'execute_tool ')`)} GROUP BY key`));
    expect(byOutcome).toEqual(nonZero(expected.toolCallsByOutcome));
  });

  it('has every subagent under a tool call, and the compactions', async () => {
    const bytype = toRecord(await query(`SELECT SpanAttributes['gen_ai.agent.name'] AS key, count() AS n FROM ${spans(`startsWith(SpanName, 'invoke_agent ') AND SpanName != 'invoke_agent claude-code'`)} GROUP BY key`));
    expect(bytype).toEqual(expected.subagentsByType);
    const [{ orphans }] = await query<{ orphans: number }>(`SELECT count() AS orphans FROM ${spans(`startsWith(SpanName, 'invoke_agent ') AND SpanName != 'invoke_agent claude-code' AND ParentSpanId = ''`)}`);
    expect(orphans).toBe(0);
    const [{ compactions }] = await query<{ compactions: number }>(`SELECT count() AS compactions FROM ${logs(`EventName = 'ccotel.compaction.occurred'`)}`);
    expect(compactions).toBe(expected.compactions);
  });

  it('counts resume starts and the skipped lines by reason', async () => {
    const [{ resumes }] = await query<{ resumes: number }>(`SELECT count() AS resumes FROM ${logs(`EventName = 'ccotel.session.started' AND LogAttributes['source'] = 'resume'`)}`);
    expect(resumes).toBe(expected.resumeStarts);
    const skipped = toRecord(await query(`SELECT LogAttributes['reason'] AS key, count() AS n FROM ${logs(`EventName = 'ccotel.record.skipped'`)} GROUP BY key`));
    expect(skipped).toEqual(nonZero(expected.skippedLines));
  });

  it('adds no rows when run again', async () => {
    const count = async () => (await query<{ n: number }>(`SELECT (SELECT count() FROM otel_traces) + (SELECT count() FROM otel_logs) + (SELECT count() FROM otel_metrics_sum) + (SELECT count() FROM otel_metrics_histogram) AS n`))[0].n;
    const before = await count();
    await ccotel('backfill', '--no-progress');
    expect(await count()).toBe(before);
  });
});
