import { afterAll, beforeAll, expect, it } from 'vitest';
import { openTempChdb, rows, runAll, type TempChdb } from './chdb-testing.js';
import { otelTablesDdl } from './clickhouse.js';
import { chTime } from './corpus.js';
import { USAGE_TABLES, usageTablesDdl } from './usage.js';

const DAY = 86_400_000;
let store: TempChdb;

beforeAll(async () => {
  store = openTempChdb();
  await runAll(store.client, otelTablesDdl({ rawTtlDays: 30 }));
  await runAll(store.client, usageTablesDdl());
});
afterAll(async () => {
  await store?.close();
});

const chat = (spanId: string, atMs: number) => ({
  Timestamp: chTime(atMs), SpanId: spanId, TraceId: 't', SpanName: 'chat claude-opus-5-5', Duration: 2_000_000_000,
  ResourceAttributes: { 'host.name': 'h1', 'user.name': 'u1' },
  SpanAttributes: { 'session.id': 's1', 'gen_ai.request.model': 'claude-opus-5-5', 'gen_ai.usage.input_tokens': '7',
    'gen_ai.usage.cache_creation.input_tokens': '50', 'ccotel.usage.cache_creation_1h.input_tokens': '20', 'ccotel.cost.usd': '0.25' },
});
const insert = (table: string, values: object[]) =>
  store.client.command({ query: `INSERT INTO default.${table} FORMAT JSONEachRow\n${values.map((v) => JSON.stringify(v)).join('\n')}` });

it('keeps the facts of rows the raw TTL drops as they arrive, once per id however often they arrive', async () => {
  const old = Date.now() - 300 * DAY;
  const recent = Date.now() - DAY;
  await insert('otel_traces', [chat('old', old), chat('new', recent)]);
  await insert('otel_traces', [chat('old', old)]); // a repeat: a second backfill
  await insert('otel_logs', [{
    Timestamp: chTime(old), EventName: 'ccotel.cost.reported',
    LogAttributes: { 'session.id': 's1', 'ccotel.record.id': 'r1', 'ccotel.cost.reported_usd': '0.5',
      'ccotel.cost.reported_by_model': '{"claude-opus-5-5":0.5}', 'ccotel.lines.added': '12' },
  }]);
  // The TTL drops the old row at insert or at the latest at a merge; a merge makes that certain.
  await store.client.command({ query: 'OPTIMIZE TABLE default.otel_traces FINAL' });
  expect(await rows(store.client, 'SELECT SpanId FROM otel_traces')).toEqual([{ SpanId: 'new' }]);
  expect(await rows(store.client, `SELECT SpanId, Kind, Name, Host, InputTokens, CacheCreationTokens, CacheCreation1hTokens, CostUsd
    FROM ${USAGE_TABLES.spans} FINAL ORDER BY SpanId`)).toEqual([
    { SpanId: 'new', Kind: 'chat', Name: 'claude-opus-5-5', Host: 'h1', InputTokens: 7, CacheCreationTokens: 50, CacheCreation1hTokens: 20, CostUsd: 0.25 },
    { SpanId: 'old', Kind: 'chat', Name: 'claude-opus-5-5', Host: 'h1', InputTokens: 7, CacheCreationTokens: 50, CacheCreation1hTokens: 20, CostUsd: 0.25 },
  ]);
  expect(await rows(store.client, `SELECT RecordId, ReportedCostUsd, ReportedCostByModel, LinesAdded FROM ${USAGE_TABLES.events} FINAL`))
    .toEqual([{ RecordId: 'r1', ReportedCostUsd: 0.5, ReportedCostByModel: { 'claude-opus-5-5': 0.5 }, LinesAdded: 12 }]);
});

it('keeps the facts forever by default, and has a cluster variant: views on each shard\'s local tables, Distributed facts', async () => {
  const [facts] = await rows<{ engine_full: string }>(store.client,
    `SELECT engine_full FROM system.tables WHERE database = 'default' AND name = '${USAGE_TABLES.spans}'`);
  expect(facts.engine_full).not.toContain('TTL');
  expect(usageTablesDdl({ summaryTtlDays: 2000 })[0]).toContain('TTL toDateTime(Timestamp) + toIntervalDay(2000)');
  const ddl = usageTablesDdl({ cluster: 'prod', database: 'otel' });
  expect(ddl).toHaveLength(12);
  for (const statement of ddl) {
    expect(statement.split('\n')[0]).toContain('ON CLUSTER `prod`');
    await store.client.query({ query: `EXPLAIN AST ${statement}` });
  }
  expect(ddl.find((s) => s.includes('MATERIALIZED VIEW'))).toContain('TO `otel`.`ccotel_span_facts_local`');
  expect(ddl.join('\n')).toContain('FROM `otel`.`otel_traces_local`');
  // The feed is sharded as otel_traces is, so a span's two copies of facts land on one shard and replace each other.
  expect(ddl.join('\n')).toContain("ENGINE = Distributed('prod', 'otel', 'ccotel_span_feed_local', cityHash64(TraceId))");
  expect(ddl.join('\n')).toContain('FROM `otel`.`ccotel_span_feed_local`');
  expect(ddl.join('\n')).toContain('FROM `otel`.`ccotel_event_feed_local`');
});

it('makes the facts of every span sent to the feed (what a gateway sends before tail sampling), storing none of its rows', async () => {
  const at = Date.now() - DAY;
  await insert(USAGE_TABLES.spanFeed, [chat('unsampled', at), chat('sampled', at)]);
  await insert('otel_traces', [chat('sampled', at)]); // the kept trace's detail: the same facts again
  expect(await rows(store.client, `SELECT count() AS n FROM ${USAGE_TABLES.spanFeed}`)).toEqual([{ n: 0 }]);
  expect(await rows(store.client, `SELECT SpanId, count() AS n, sum(CostUsd) AS cost FROM ${USAGE_TABLES.spans} FINAL
    WHERE SpanId IN ('unsampled', 'sampled') GROUP BY SpanId ORDER BY SpanId`)).toEqual([{ SpanId: 'sampled', n: 1, cost: 0.25 }, { SpanId: 'unsampled', n: 1, cost: 0.25 }]);
});

it('keeps where a span came from: repository, branch, ticket and the resource attributes given beyond host, user and service', async () => {
  const at = Date.now() - DAY;
  await insert('otel_traces', [{
    ...chat('attributed', at),
    ResourceAttributes: { 'host.name': 'h2', 'host.id': 'ab12', 'user.name': 'u2', 'service.name': 'ccotel', 'ccotel.content.level': 'masked', team: 'payments', cost_center: 'cc-42' },
    SpanAttributes: { ...chat('x', at).SpanAttributes, 'ccotel.cwd': '/src/app', 'vcs.repository.url.full': 'https://h/acme/app', 'vcs.ref.head.name': 'feature/ABC-7', 'ccotel.ticket': 'ABC-7' },
  }]);
  expect(await rows(store.client, `SELECT Host, User, Project, Repository, Branch, Ticket, Resource FROM ${USAGE_TABLES.spans} FINAL WHERE SpanId = 'attributed'`)).toEqual([{
    Host: 'h2', User: 'u2', Project: '/src/app', Repository: 'https://h/acme/app', Branch: 'feature/ABC-7', Ticket: 'ABC-7',
    Resource: { cost_center: 'cc-42', team: 'payments' },
  }]);
  await insert('otel_logs', [{
    Timestamp: chTime(at), EventName: 'ccotel.permission.blocked', ResourceAttributes: { 'host.name': 'h2', team: 'payments' },
    LogAttributes: { 'session.id': 's1', 'ccotel.record.id': 'attributed-block', 'vcs.repository.url.full': 'https://h/acme/app', 'vcs.ref.head.name': 'main' },
  }]);
  expect(await rows(store.client, `SELECT Repository, Branch, Ticket, Resource FROM ${USAGE_TABLES.events} FINAL WHERE RecordId = 'attributed-block'`))
    .toEqual([{ Repository: 'https://h/acme/app', Branch: 'main', Ticket: '', Resource: { team: 'payments' } }]);
});

it('keeps of a tool call what report insights reads: a key of its normalised input, the rule that allows it, its file, its error class', async () => {
  const at = Date.now() - DAY;
  const tool = (spanId: string, name: string, input: object | string, more: { outcome?: string; status?: string; output?: string; attributes?: object; events?: string[] } = {}) => ({
    Timestamp: chTime(at), SpanId: spanId, TraceId: `trace-${spanId}`, SpanName: `execute_tool ${name}`, Duration: 1_000_000, StatusMessage: more.status ?? '',
    'Events.Name': more.events ?? [], 'Events.Timestamp': (more.events ?? []).map(() => chTime(at)), 'Events.Attributes': (more.events ?? []).map(() => ({})),
    SpanAttributes: { 'session.id': 's2', 'gen_ai.tool.name': name, 'ccotel.tool.outcome': more.outcome ?? 'success', 'ccotel.tool.input': typeof input === 'string' ? input : JSON.stringify(input),
      ...(more.output === undefined ? {} : { 'ccotel.tool.output': more.output, 'ccotel.tool.output.length': String(more.output.length) }), ...more.attributes },
  });
  await insert('otel_traces', [
    tool('b1', 'Bash', { command: 'npm  run build', description: 'Build' }, { outcome: 'error', output: 'Exit code 127\nsh: npm: command not found' }),
    tool('b2', 'Bash', { command: ' npm run build', description: 'Build it again', timeout: 60000 }, { outcome: 'error', status: 'Exit code 1', output: 'EACCES: permission denied, open x' }),
    tool('b3', 'Bash', { command: 'cat notes.txt' }, { events: ['PreToolUse', 'PermissionRequest'] }),
    tool('r1', 'Read', { file_path: '/src/a "quoted".ts' }, { outcome: 'error', output: '<tool_use_error>File does not exist.</tool_use_error>' }),
    // Cut to the configured length: no JSON any more, the path is still there.
    tool('w1', 'Write', '{"file_path":"/src/a \\"quoted\\".ts","content":"export const a = 1;\\nexport con…', { attributes: { 'ccotel.native.decision_source': 'user_temporary', 'ccotel.native.blocked_on_user_ms': '4200.5' } }),
    tool('f1', 'WebFetch', { url: 'https://docs.example.com/a/b?c=1', prompt: 'summarise' }, { outcome: 'error' }),
    tool('n1', 'Bash', '', { outcome: 'error', status: 'Command timed out after 2m' }),
  ]);
  const facts = await rows<Record<string, unknown>>(store.client, `SELECT SpanId, TraceId, InputKey, Rule, FileHash, ErrorClass, Asked, WaitedMs, ResultLength
    FROM ${USAGE_TABLES.spans} FINAL WHERE SessionId = 's2' ORDER BY SpanId`);
  // UInt64 as text, whatever the client makes of a small one.
  const of = (id: string) => Object.fromEntries(Object.entries(facts.find((f) => f.SpanId === id)!).map(([k, v]) => [k, typeof v === 'number' ? String(v) : v]));
  // Blanks and the description are not the command: the two builds are one input.
  expect(of('b1').InputKey).toBe(of('b2').InputKey);
  expect(of('b1').InputKey).not.toBe('0');
  expect(of('b3').InputKey).not.toBe(of('b1').InputKey);
  expect(of('n1').InputKey).toBe('0');
  expect(facts.map((f) => of(String(f.SpanId))).map((f) => [f.SpanId, f.Rule, f.ErrorClass, f.Asked, f.WaitedMs])).toEqual([
    ['b1', 'Bash(npm run:*)', 'not_found', '0', '0'],
    ['b2', 'Bash(npm run:*)', 'permission', '0', '0'],
    ['b3', 'Bash(cat:*)', '', '1', '0'],
    ['f1', 'WebFetch(domain:docs.example.com)', 'unknown', '0', '0'],
    ['n1', 'Bash', 'timeout', '0', '0'],
    ['r1', 'Read', 'not_found', '0', '0'],
    ['w1', 'Write', '', '1', '4200'],
  ]);
  expect(of('r1').FileHash).toBe(of('w1').FileHash);
  expect(of('r1').FileHash).not.toBe('0');
  expect(of('b1').FileHash).toBe('0');
  expect([of('b1').TraceId, of('b1').ResultLength]).toEqual(['trace-b1', String('Exit code 127\nsh: npm: command not found'.length)]);
});
