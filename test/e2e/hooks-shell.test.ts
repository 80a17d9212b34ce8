// Generated transcripts + spooled hooks + shell log for the same sessions → `ccotel backfill` (the CLI, in a
// child process) → the store: one trace per turn, each Bash tool span with its shell span and its hook events,
// and resume frequency, permission blocks and tool success rate by SQL equal to the generator's answer, with
// no start or block counted twice by the transcript-derived and the hook-derived paths.
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateCorpus, type Expected } from '../generator/corpus.js';
import { generateHooksAndShell, type HooksShellExpected } from '../generator/hooks-shell.js';
import { storeCli } from './store-cli.js';


const spans = (where: string) => `(SELECT * FROM otel_traces WHERE ${where} LIMIT 1 BY SpanId)`;
const logs = (where: string) => `(SELECT * FROM otel_logs WHERE ${where} LIMIT 1 BY LogAttributes['ccotel.record.id'])`;
/** Metric points once each (their id rides in the exemplar). */
const points = (name: string) => `(SELECT * FROM otel_metrics_sum WHERE MetricName = '${name}' LIMIT 1 BY Exemplars.FilteredAttributes)`;
const toRecord = (rows: { key: string; n: number }[]) => Object.fromEntries(rows.map((row) => [row.key, Number(row.n)]));

describe.each([
  { seed: 20261129, sessions: 30 },
  { seed: 7, sessions: 40 },
])('transcripts + hook spool + shell log (seed $seed, $sessions sessions) → backfill → store', ({ seed, sessions }) => {
  const root = mkdtempSync(join(tmpdir(), 'ccotel-hooks-shell-'));
  const stateDir = join(root, 'state');
  const storeDir = join(root, 'store');
  let corpus: Expected;
  let expected: HooksShellExpected;
  let env: NodeJS.ProcessEnv;
  let summary: { hookEvents: { read: number; deadLettered: number } };

  const { ccotel, query } = storeCli(storeDir, () => env);

  beforeAll(async () => {
    corpus = await generateCorpus({ seed, root: join(root, 'corpus'), sessions, hostLayout: 'multi-root' });
    expected = generateHooksAndShell({ seed, configDirs: corpus.configDirs, spoolDir: join(stateDir, 'spool'), shellLogDir: join(stateDir, 'shell') });
    env = {
      ...process.env,
      HOME: join(root, 'corpus', 'home'),
      CLAUDE_CONFIG_DIR: corpus.configDirs.join(','),
      CCOTEL_STATE_DIR: stateDir,
      CCOTEL_RAW_TTL_DAYS: '0',
    };
    summary = JSON.parse(await ccotel('backfill', '--no-progress', '--json')) as typeof summary;
  });

  it('reads the generator the same way the corpus answer counts (sanity of the generator)', async () => {
    const nonZero = Object.fromEntries(Object.entries(corpus.toolCallsByOutcome).filter(([, n]) => n > 0));
    expect(expected.toolCallsByOutcome).toEqual(nonZero);
    expect(expected.sessionStarts.resume).toBe(corpus.resumeStarts);
    expect(expected.sessionStarts.fork ?? 0).toBe(corpus.forks);
    expect(Object.keys(expected.shellCommands).length).toBeGreaterThan(10);
  });

  it('consumes every spool file, none kept aside, and makes one hook log record per hook event', async () => {
    expect(summary.hookEvents).toMatchObject({ read: expected.hookEvents, deadLettered: 0 });
    expect(readdirSync(join(stateDir, 'spool')).filter((name) => name.endsWith('.json'))).toEqual([]);
    const [{ n }] = await query<{ n: number }>(`SELECT count() AS n FROM ${logs(`startsWith(EventName, 'ccotel.hook.')`)}`);
    expect(n).toBe(expected.hookEvents);
  });

  it('has one trace per turn, and every prompt of a hooked session carries its UserPromptSubmit', async () => {
    const [turns] = await query<{ roots: number; traces: number }>(
      `SELECT count() AS roots, uniqExact(TraceId) AS traces FROM ${spans(`SpanName = 'invoke_agent claude-code'`)}`,
    );
    expect(turns).toEqual({ roots: corpus.turns, traces: corpus.turns });
    const withPrompt = await query<{ promptId: string }>(
      `SELECT SpanAttributes['prompt.id'] AS promptId FROM ${spans(`SpanName = 'invoke_agent claude-code' AND has(Events.Name, 'UserPromptSubmit')`)}`,
    );
    expect(withPrompt.map((row) => row.promptId).sort()).toEqual([...expected.promptIds].sort());
  });

  it('puts each Bash command under its Bash tool span, in the same trace, with the exit status of the call', async () => {
    const rows = await query<{ toolUseId: string; exit: string; ended: string; sameTrace: number }>(
      `SELECT b.SpanAttributes['tool_use_id'] AS toolUseId, s.SpanAttributes['process.exit.code'] AS exit,
         s.SpanAttributes['ccotel.shell.ended'] AS ended, s.TraceId = b.TraceId AS sameTrace
       FROM ${spans(`startsWith(SpanName, 'shell ')`)} AS s
       INNER JOIN ${spans(`SpanName = 'execute_tool Bash'`)} AS b ON s.ParentSpanId = b.SpanId`,
    );
    expect(rows.every((row) => row.sameTrace === 1)).toBe(true);
    const got = Object.fromEntries(rows.map((row) => [row.toolUseId, row.ended === 'false' ? null : Number(row.exit)]));
    expect(rows.length).toBe(Object.keys(got).length); // one command per call
    expect(got).toEqual(expected.shellCommands);
    // The session whose transcript is gone: its command has no Bash span, and a trace of its own.
    const [{ alone }] = await query<{ alone: number }>(
      `SELECT count() AS alone FROM ${spans(`startsWith(SpanName, 'shell ') AND ParentSpanId = '' AND SpanAttributes['session.id'] = '${expected.hookOnlySessionId}'`)}`,
    );
    expect(alone).toBe(expected.shellWithoutToolSpan);
    const [{ shells }] = await query<{ shells: number }>(`SELECT count() AS shells FROM ${spans(`startsWith(SpanName, 'shell ')`)}`);
    expect(shells).toBe(Object.keys(expected.shellCommands).length + expected.shellWithoutToolSpan);
  });

  it('has the hook events of each tool call on its execute_tool span, in firing order', async () => {
    const rows = await query<{ toolUseId: string; events: string[] }>(
      `SELECT SpanAttributes['tool_use_id'] AS toolUseId, Events.Name AS events FROM ${spans(`startsWith(SpanName, 'execute_tool ') AND length(Events.Name) > 0`)}`,
    );
    expect(Object.fromEntries(rows.map((row) => [row.toolUseId, row.events]))).toEqual(expected.toolHookEvents);
  });

  it('counts session starts once each, by source; resume frequency by SQL equals the generator', async () => {
    const starts = toRecord(await query(`SELECT LogAttributes['source'] AS key, count() AS n FROM ${logs(`EventName = 'ccotel.session.started'`)} GROUP BY key`));
    expect(starts).toEqual(expected.sessionStarts);
    const metricStarts = toRecord(await query(`SELECT Attributes['source'] AS key, sum(Value) AS n FROM ${points('ccotel.session.starts')} GROUP BY key`));
    expect(metricStarts).toEqual(expected.sessionStarts);
    const [{ fromHooks }] = await query<{ fromHooks: number }>(`SELECT count() AS fromHooks FROM ${logs(`EventName = 'ccotel.session.started' AND LogAttributes['ccotel.start.origin'] = 'hook'`)}`);
    expect(fromHooks).toBe(expected.hookSessionStarts);
    const [{ resumeFrequency }] = await query<{ resumeFrequency: number }>(
      `SELECT sumIf(Value, Attributes['source'] = 'resume') / sum(Value) AS resumeFrequency FROM ${points('ccotel.session.starts')}`,
    );
    expect(resumeFrequency).toBeCloseTo(expected.resumeFrequency, 12);
    const ends = toRecord(await query(`SELECT Attributes['reason'] AS key, sum(Value) AS n FROM ${points('ccotel.session.ends')} GROUP BY key`));
    expect(ends).toEqual(expected.sessionEnds);
  });

  it('counts one permission block per refused call, by tool and source, in the records and the metric', async () => {
    const blocked = toRecord(await query(
      `SELECT concat(LogAttributes['gen_ai.tool.name'], '|', LogAttributes['source']) AS key, count() AS n FROM ${logs(`EventName = 'ccotel.permission.blocked'`)} GROUP BY key`,
    ));
    expect(blocked).toEqual(expected.permissionBlocks);
    const metric = toRecord(await query(
      `SELECT concat(Attributes['gen_ai.tool.name'], '|', Attributes['source']) AS key, sum(Value) AS n FROM ${points('ccotel.permission.blocks')} GROUP BY key`,
    ));
    expect(metric).toEqual(expected.permissionBlocks);
    const [{ calls, blocks }] = await query<{ calls: number; blocks: number }>(
      `SELECT uniqExact(LogAttributes['tool_use_id']) AS calls, count() AS blocks FROM ${logs(`EventName = 'ccotel.permission.blocked'`)}`,
    );
    expect(blocks).toBe(calls);
  });

  it('has the tool success rate of the generator, from the spans and from the metric', async () => {
    const [{ rate }] = await query<{ rate: number }>(
      `SELECT countIf(SpanAttributes['ccotel.tool.outcome'] = 'success') / count() AS rate FROM ${spans(`startsWith(SpanName, 'execute_tool ')`)}`,
    );
    expect(rate).toBeCloseTo(expected.toolSuccessRate, 12);
    const [{ metricRate }] = await query<{ metricRate: number }>(
      `SELECT sumIf(Value, Attributes['outcome'] = 'success') / sum(Value) AS metricRate FROM ${points('ccotel.tool.calls')}`,
    );
    expect(metricRate).toBeCloseTo(expected.toolSuccessRate, 12);
  });
});
