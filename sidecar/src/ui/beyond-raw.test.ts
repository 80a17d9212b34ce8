// Detections and session events older than the raw window (the raw TTL drops whole days of otel_logs) still
// show on the failure-modes and session pages, from the event facts, once each; those the raw rows hold keep
// their detail (tool call, pid, port, command).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTempChdb, runAll, type TempChdb } from '../../../schemas/chdb-testing.js';
import { otelTablesDdl } from '../../../schemas/clickhouse.js';
import { chTime } from '../../../schemas/corpus.js';
import { USAGE_TABLES, usageTablesDdl } from '../../../schemas/usage.js';
import { UiData } from './data.js';

const OLD = Date.UTC(2026, 7, 1, 10);
const RECENT = Date.UTC(2026, 9, 5, 10);

describe('the web view beyond the raw window', () => {
  let store: TempChdb;
  const GAP_DETAIL = '2 of 3 requests of the transcript not exported (from 2026-11-20T10:01:00.000Z)';
  let data: UiData;

  beforeAll(async () => {
    store = openTempChdb();
    await runAll(store.client, [...otelTablesDdl({ database: 'default', rawTtlDays: 0 }), ...usageTablesDdl({ database: 'default' })]);
    const record = (atMs: number, event: string, session: string, attributes: Record<string, string>, body = '') => ({
      Timestamp: chTime(atMs), EventName: event, TraceId: `trace-${session}`, Body: body,
      LogAttributes: { 'ccotel.record.id': `${event}-${session}-${atMs}`, 'session.id': session, ...attributes },
    });
    const detected = (atMs: number, session: string) => record(atMs, 'ccotel.failure_mode.detected', session, {
      mode: 'orphan_process', tool_use_id: `toolu_${session}`, 'process.pid': '4242', 'network.local.port': '8080', 'process.command_line': 'python -m http.server',
    });
    const values = [
      record(OLD, 'ccotel.session.started', 'old', { source: 'startup' }), detected(OLD + 1000, 'old'), record(OLD + 2000, 'ccotel.session.ended', 'old', { reason: 'exit' }),
      record(RECENT, 'ccotel.session.started', 'recent', { source: 'resume' }), detected(RECENT + 1000, 'recent'),
      record(RECENT + 3000, 'ccotel.failure_mode.detected', 'recent', { mode: 'telemetry_gap', cause: 'not_exported' }, GAP_DETAIL),
    ];
    // Twice: a repeat (at-least-once delivery) is one record.
    for (let copy = 0; copy < 2; copy++) await store.client.insert({ table: 'otel_logs', values, format: 'JSONEachRow' });
    // What the raw TTL does to the old day (ttl_only_drop_parts): its rows are gone, the facts stay.
    await store.client.command({ query: `ALTER TABLE otel_logs DROP PARTITION '2026-08-01'` });
    // The old session's turns as the span facts keep them (its spans in otel_traces expired with their day): turn1 as
    // facts before version 3 kept it (naming no agent), turn2 naming its agent.
    const fact = (id: string, kind: string, name: string, outcome: string, startMs: number, endMs: number) => ({
      SpanId: id, Timestamp: chTime(startMs), EndTime: chTime(endMs), SessionId: 'old', Project: '/src/app', Kind: kind, Name: name, Outcome: outcome, InputTokens: kind === 'chat' ? 12 : 0,
    });
    await store.client.insert({ table: USAGE_TABLES.spans, format: 'JSONEachRow', values: [
      fact('turn1', 'turn', '', 'completed', OLD, OLD + 60_000), fact('chat1', 'chat', 'claude-opus-5-5', '', OLD + 1000, OLD + 5000),
      fact('tool1', 'tool', 'Bash', 'error', OLD + 6000, OLD + 9000), fact('turn2', 'turn', 'codex', 'interrupted', OLD + 120_000, OLD + 130_000),
      fact('tool2', 'tool', 'Read', 'success', OLD + 125_000, OLD + 126_000),
    ] });
    data = new UiData(store.client);
  });

  afterAll(async () => {
    await store?.close();
  });

  it('lists every detection: the old one from the facts, the recent one with its detail', async () => {
    const failures = await data.failures({});
    expect(failures).toEqual([
      { time_ms: RECENT + 3000, mode: 'telemetry_gap', session: 'recent', tool_use_id: '', pid: '', command_line: '', port: '', cause: 'not_exported', detail: GAP_DETAIL, trace_id: 'trace-recent' },
      { time_ms: RECENT + 1000, mode: 'orphan_process', session: 'recent', tool_use_id: 'toolu_recent', pid: '4242', command_line: 'python -m http.server', port: '8080', cause: '', detail: '', trace_id: 'trace-recent' },
      { time_ms: OLD + 1000, mode: 'orphan_process', session: 'old', tool_use_id: '', pid: '', command_line: '', port: '', cause: '', detail: '', trace_id: '' },
    ]);
    expect(await data.failures({ toMs: RECENT })).toHaveLength(1);
  });

  it("shows an old session's starts, ends and detections from the facts", async () => {
    const old = await data.session('old');
    expect(old.logs.map((log) => [log.time_ms, log.event, log.attributes])).toEqual([
      [OLD, 'ccotel.session.started', { 'session.id': 'old', source: 'startup' }],
      [OLD + 1000, 'ccotel.failure_mode.detected', { 'session.id': 'old', mode: 'orphan_process' }],
      [OLD + 2000, 'ccotel.session.ended', { 'session.id': 'old', reason: 'exit' }],
    ]);
    const recent = await data.session('recent');
    expect(recent.logs.map((log) => [log.event, log.trace_id, log.attributes.tool_use_id ?? '', log.attributes.detail ?? ''])).toEqual([
      ['ccotel.session.started', 'trace-recent', '', ''],
      ['ccotel.failure_mode.detected', 'trace-recent', 'toolu_recent', ''],
      ['ccotel.failure_mode.detected', 'trace-recent', '', GAP_DETAIL], // what differs, on the session page
    ]);
  });

  it("shows an old session's turns from the span facts, each tool call and API response under its turn", async () => {
    const old = await data.session('old');
    expect(old.fromFacts).toBe(true);
    expect(old.spans.map((span) => [span.trace_id, span.span_id, span.parent_span_id, span.name, span.start_ms, span.duration_ms])).toEqual([
      ['facts-turn1', 'turn1', '', 'invoke_agent claude-code', OLD, 60_000],
      ['facts-turn1', 'chat1', 'turn1', 'chat claude-opus-5-5', OLD + 1000, 4000],
      ['facts-turn1', 'tool1', 'turn1', 'execute_tool Bash', OLD + 6000, 3000],
      ['facts-turn2', 'turn2', '', 'invoke_agent codex', OLD + 120_000, 10_000],
      ['facts-turn2', 'tool2', 'turn2', 'execute_tool Read', OLD + 125_000, 1000],
    ]);
    expect(old.spans[0].attributes).toEqual({ 'ccotel.cwd': '/src/app', 'ccotel.turn.outcome': 'completed', 'gen_ai.agent.name': 'claude-code' });
    expect(old.spans[3].attributes['gen_ai.agent.name']).toBe('codex');
    expect(old.spans[2]).toMatchObject({ status: 'Error', attributes: { 'gen_ai.tool.name': 'Bash', 'ccotel.tool.outcome': 'error' } });
    expect(old.spans[1].attributes['ccotel.usage.uncached.input_tokens']).toBe('12');
    // A session with neither spans nor facts has nothing to show.
    expect(await data.session('recent')).toMatchObject({ spans: [], fromFacts: false });
  });
});
