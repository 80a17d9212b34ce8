// Real Claude Code 2.1.332 transcripts (test/fixtures/real, made by test/harness) → backfill → SQL on the
// store must match what each scenario script implies (expectations.json, written from the script, not from
// ccotel's output).
import { mkdtempSync, readdirSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfill } from '../../sidecar/src/commands/backfill.js';
import { openStore, type Store } from '../../sidecar/src/store/open-store.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'real');

interface ExpectedSession {
  sessionId: string;
  turns: string[];
  toolCalls: { tool: string; outcome: string; subagent: boolean }[];
  tokens: { input: number; output: number; cacheRead: number; cacheCreation: number };
  resumes: number;
  denials: number;
  subagents: number;
}

const scenarios = readdirSync(FIXTURES).filter((name) => existsSync(join(FIXTURES, name, 'expectations.json')));
const expectations = scenarios.map((name) => ({
  name,
  sessions: (JSON.parse(readFileSync(join(FIXTURES, name, 'expectations.json'), 'utf8')) as { sessions: ExpectedSession[] }).sessions,
}));

let store: Store;
const storeDir = mkdtempSync(join(tmpdir(), 'ccotel-real-'));

async function rows<T>(sql: string, params: Record<string, unknown>): Promise<T[]> {
  const result = await store.client.query({ query: sql, query_params: params, format: 'JSONEachRow' });
  return result.json<T>();
}

beforeAll(async () => {
  process.env.HOME = mkdtempSync(join(tmpdir(), 'ccotel-home-'));
  process.env.CLAUDE_CONFIG_DIR = scenarios.map((name) => join(FIXTURES, name)).join(',');
  process.env.CCOTEL_RAW_TTL_DAYS = '0';
  await backfill({ store: storeDir });
  store = await openStore(storeDir, { command: 'test', access: 'read' });
});

afterAll(async () => {
  await store?.close();
});

describe.each(expectations)('real transcripts: $name', ({ sessions }) => {
  it.each(sessions)('session $sessionId matches the scenario', async (session) => {
    const sid = { sid: session.sessionId };
    const turns = await rows<{ outcome: string }>(
      `SELECT SpanAttributes['ccotel.turn.outcome'] AS outcome FROM otel_traces
       WHERE SpanName = 'invoke_agent claude-code' AND SpanAttributes['session.id'] = {sid:String}
       ORDER BY Timestamp LIMIT 1 BY SpanId`,
      sid,
    );
    expect(turns.map((t) => t.outcome)).toEqual(session.turns);

    const tools = await rows<{ tool: string; outcome: string; subagent: number }>(
      `SELECT SpanAttributes['gen_ai.tool.name'] AS tool, SpanAttributes['ccotel.tool.outcome'] AS outcome,
              SpanAttributes['ccotel.agent.id'] != '' AS subagent
       FROM otel_traces WHERE startsWith(SpanName, 'execute_tool ') AND SpanAttributes['session.id'] = {sid:String}
       LIMIT 1 BY SpanId`,
      sid,
    );
    const sortKey = (t: { tool: string; outcome: string }) => `${t.tool}/${t.outcome}`;
    expect(tools.map((t) => ({ tool: t.tool, outcome: t.outcome, subagent: Boolean(t.subagent) })).sort((a, b) => sortKey(a).localeCompare(sortKey(b))))
      .toEqual([...session.toolCalls].sort((a, b) => sortKey(a).localeCompare(sortKey(b))));

    const [tokens] = await rows<Record<string, number>>(
      `SELECT sum(toUInt64(SpanAttributes['ccotel.usage.uncached.input_tokens'])) AS input,
              sum(toUInt64(SpanAttributes['gen_ai.usage.output_tokens'])) AS output,
              sum(toUInt64(SpanAttributes['gen_ai.usage.cache_read.input_tokens'])) AS cacheRead,
              sum(toUInt64(SpanAttributes['gen_ai.usage.cache_creation.input_tokens'])) AS cacheCreation
       FROM (SELECT * FROM otel_traces WHERE startsWith(SpanName, 'chat ') AND SpanAttributes['session.id'] = {sid:String} LIMIT 1 BY SpanId)
       SETTINGS output_format_json_quote_64bit_integers = 0`,
      sid,
    );
    expect(tokens).toEqual(session.tokens);

    const [events] = await rows<{ resumes: number; denials: number; subagents: number }>(
      `SELECT
         (SELECT count() FROM (SELECT 1 FROM otel_logs WHERE EventName = 'ccotel.session.started' AND LogAttributes['source'] = 'resume'
            AND LogAttributes['session.id'] = {sid:String} LIMIT 1 BY LogAttributes['ccotel.record.id'])) AS resumes,
         (SELECT count() FROM (SELECT 1 FROM otel_logs WHERE EventName = 'ccotel.permission.blocked'
            AND LogAttributes['session.id'] = {sid:String} LIMIT 1 BY LogAttributes['ccotel.record.id'])) AS denials,
         (SELECT count() FROM (SELECT 1 FROM otel_traces WHERE startsWith(SpanName, 'invoke_agent ') AND SpanName != 'invoke_agent claude-code'
            AND SpanAttributes['session.id'] = {sid:String} LIMIT 1 BY SpanId)) AS subagents
       SETTINGS output_format_json_quote_64bit_integers = 0`,
      sid,
    );
    expect(events).toEqual({ resumes: session.resumes, denials: session.denials, subagents: session.subagents });
  });
});
