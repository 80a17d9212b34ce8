import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OTEL_TABLES, hasFullTextSearch, otelTablesDdl } from './clickhouse.js';
import { openTempChdb, rows, runAll, type TempChdb } from './chdb-testing.js';

const METRIC_TABLES = [
  OTEL_TABLES.gauge,
  OTEL_TABLES.sum,
  OTEL_TABLES.histogram,
  OTEL_TABLES.expHistogram,
  OTEL_TABLES.summary,
];

let store: TempChdb;

beforeAll(() => {
  store = openTempChdb();
});
afterAll(async () => {
  await store?.close();
});

describe('otelTablesDdl on a real ClickHouse (chdb)', () => {
  it('creates every exporter table, and running it again changes nothing', async () => {
    const ddl = otelTablesDdl({ database: 'otel' });
    await runAll(store.client, ddl);
    await runAll(store.client, ddl);
    const tables = await rows<{ name: string; engine: string }>(
      store.client,
      `SELECT name, engine FROM system.tables WHERE database = 'otel' ORDER BY name`,
    );
    expect(tables).toEqual(
      Object.values(OTEL_TABLES)
        .sort()
        .map((name) => ({ name, engine: name === OTEL_TABLES.traceIdTsMv ? 'MaterializedView' : 'MergeTree' })),
    );
  });

  it('stores and returns a row in every table; the view fills the trace-id lookup', async () => {
    // Recent times: rows older than the 14-day TTL are dropped as soon as they are written.
    const second = new Date(Date.now() - 3600_000).toISOString().slice(0, 19).replace('T', ' ');
    const now = `${second}.123456789`;
    await store.client.insert({
      table: `otel.${OTEL_TABLES.logs}`,
      format: 'JSONEachRow',
      values: [{ Timestamp: now, EventName: 'ccotel.session.started', LogAttributes: { source: 'startup' },
        ResourceAttributes: { 'deployment.environment.name': 'test' } }],
    });
    await store.client.insert({
      table: `otel.${OTEL_TABLES.traces}`,
      format: 'JSONEachRow',
      values: [{ Timestamp: now, TraceId: 'aa'.repeat(16), SpanId: 'bb'.repeat(8), SpanName: 'invoke_agent claude-code',
        Duration: 1_500_000_000, SpanAttributes: { 'session.id': 's-1' },
        'Events.Name': ['PreToolUse'], 'Events.Timestamp': [now], 'Events.Attributes': [{ k: 'v' }] }],
    });
    for (const table of METRIC_TABLES) {
      await store.client.insert({
        table: `otel.${table}`,
        format: 'JSONEachRow',
        values: [{ MetricName: 'ccotel.turns', TimeUnix: second, Attributes: { outcome: 'completed' } }],
      });
    }

    const [log] = await rows(store.client,
      `SELECT EventName, LogAttributes['source'] AS source, \`__otel_materialized_deployment.environment.name\` AS env,
              toString(Timestamp) AS ts FROM otel.otel_logs`);
    expect(log).toEqual({ EventName: 'ccotel.session.started', source: 'startup', env: 'test', ts: now });

    const [span] = await rows(store.client,
      `SELECT SpanName, toString(Duration) AS Duration, SpanAttributeItems AS items, Events.Name AS events FROM otel.otel_traces`);
    expect(span).toEqual({ SpanName: 'invoke_agent claude-code', Duration: '1500000000', items: ['session.id=s-1'],
      events: ['PreToolUse'] });

    const lookup = await rows(store.client,
      `SELECT TraceId, toString(min(Start)) AS start FROM otel.otel_traces_trace_id_ts GROUP BY TraceId`);
    expect(lookup).toEqual([{ TraceId: 'aa'.repeat(16), start: second }]);

    for (const table of METRIC_TABLES) {
      expect(await rows(store.client, `SELECT MetricName, Attributes['outcome'] AS outcome FROM otel.${table}`))
        .toEqual([{ MetricName: 'ccotel.turns', outcome: 'completed' }]);
    }
  });

  it('renders the raw TTL on every table the way the exporter does, and none when 0', async () => {
    await runAll(store.client, otelTablesDdl({ database: 'ttl7', rawTtlDays: 7 }));
    await runAll(store.client, otelTablesDdl({ database: 'nottl', rawTtlDays: 0 }));
    const engines = async (database: string) =>
      rows<{ name: string; engine_full: string }>(store.client,
        `SELECT name, engine_full FROM system.tables WHERE database = '${database}' AND engine = 'MergeTree'`);
    const ttl7 = await engines('ttl7');
    expect(ttl7).toHaveLength(8);
    for (const { name, engine_full } of ttl7) {
      const field = name === OTEL_TABLES.traceIdTs ? 'Start' : name.startsWith('otel_metrics') ? 'TimeUnix' : 'Timestamp';
      expect(engine_full, name).toContain(`TTL toDateTime(${field}) + toIntervalDay(7)`);
    }
    for (const { engine_full } of await engines('nottl')) expect(engine_full).not.toContain('TTL');
    expect(otelTablesDdl().join('\n')).toContain('toIntervalDay(30)');
  });

  it('rejects a TTL that is not a whole number of days', () => {
    expect(() => otelTablesDdl({ rawTtlDays: 1.5 })).toThrow(/rawTtlDays/);
    expect(() => otelTablesDdl({ rawTtlDays: -1 })).toThrow(/rawTtlDays/);
  });
});

describe('cluster variant', () => {
  const ddl = otelTablesDdl({ cluster: 'prod', database: 'otel' });

  it('puts ON CLUSTER on every statement and replicates every local table', () => {
    for (const statement of ddl) expect(statement.split('\n')[0]).toContain('ON CLUSTER `prod`');
    const locals = ddl.filter((s) => /^CREATE TABLE IF NOT EXISTS `otel`\.`\w+_local`/.test(s));
    expect(locals).toHaveLength(8);
    for (const s of locals) {
      expect(s).toContain("ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')");
    }
  });

  it('fronts each local table with a Distributed table under the plain name', () => {
    for (const name of Object.values(OTEL_TABLES).filter((n) => n !== OTEL_TABLES.traceIdTsMv)) {
      const distributed = ddl.find((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS \`otel\`.\`${name}\` `));
      expect(distributed, name).toMatch(new RegExp(`AS \`otel\`\\.\`${name}_local\`\\nENGINE = Distributed\\('prod', 'otel', '${name}_local', `));
    }
    expect(ddl.find((s) => s.includes('MATERIALIZED VIEW'))).toMatch(
      /TO `otel`\.`otel_traces_trace_id_ts_local`[\s\S]*FROM `otel`\.`otel_traces_local`/,
    );
  });

  it('parses on ClickHouse', async () => {
    for (const query of ddl) await store.client.query({ query: `EXPLAIN AST ${query}` });
  });
});

describe('hasFullTextSearch', () => {
  it('is true from ClickHouse 26.2 on', () => {
    expect(hasFullTextSearch('26.7.2.1')).toBe(true);
    expect(hasFullTextSearch('26.2.1')).toBe(true);
    expect(hasFullTextSearch('27.1')).toBe(true);
    expect(hasFullTextSearch('26.1.9.3')).toBe(false);
    expect(hasFullTextSearch('25.12.1')).toBe(false);
    expect(() => hasFullTextSearch('latest')).toThrow(/unrecognised/);
  });
});
