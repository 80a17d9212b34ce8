// The gateway's real clickhouse exporter (collector-config/gateway.yaml as shipped, only its ClickHouse endpoint
// changed) writing into a real ClickHouse: the test front over the embedded engine (test/helpers/
// clickhouse-http-front.ts), its tables, views and summaries made by schemas/sql as the Kubernetes schema Job
// makes them. Until this test the exporter never wrote a row in any test (issue 32).
//   - a generated corpus through the sidecar's backfill path → every span, log record and metric point the
//     sidecar delivered is a row, exactly once, and the summaries' views filled their tables from those rows;
//   - the exporter's three body encodings over HTTP (compress: lz4, the default; zstd; none) all land;
//   - the front checks the compressed frames' checksums as ClickHouse does.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POINT_ID_KEY, RECORD_ID_KEY } from '../../sidecar/src/semconv.js';
import { generateCorpus } from '../generator/corpus.js';
import { ClickHouseFrontProcess } from '../helpers/clickhouse-front-process.js';
import { encodeFrames } from '../helpers/clickhouse-compressed-block.js';
import { Gateway } from './otlp-gateway.js';
import { backfillAll, otlpOnlySidecar, type SidecarUnderTest } from './otlp-sidecar.js';

let dir: string;
let front: ClickHouseFrontProcess;
let client: ClickHouseClient;
const gateways: Gateway[] = [];
let sidecar: SidecarUnderTest;

const rows = async <T>(query: string): Promise<T[]> => (await client.query({ query, format: 'JSONEachRow' })).json<T>();

/** Every id in the fleet's store with how often it is there. */
async function storedIds(): Promise<Map<string, number>> {
  const found = await rows<{ id: string; n: string }>(`
    SELECT id, count() AS n FROM (
      SELECT SpanId AS id FROM otel_traces
      UNION ALL SELECT LogAttributes['${RECORD_ID_KEY}'] FROM otel_logs
      UNION ALL SELECT arrayJoin(Exemplars.FilteredAttributes)['${POINT_ID_KEY}'] FROM otel_metrics_sum
      UNION ALL SELECT arrayJoin(Exemplars.FilteredAttributes)['${POINT_ID_KEY}'] FROM otel_metrics_histogram
    ) GROUP BY id`);
  return new Map(found.map((row) => [row.id, Number(row.n)]));
}

async function waitForIds(ids: string[], timeoutMs = 60_000): Promise<Map<string, number>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stored = await storedIds();
    const missing = ids.filter((id) => !stored.has(id));
    if (missing.length === 0) return stored;
    if (Date.now() > deadline) throw new Error(`${missing.length} of ${ids.length} ids not stored after ${timeoutMs} ms\n${gateways.map((g) => g.logProblems()).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function startGateway(name: string, query = ''): Promise<Gateway> {
  const gateway = new Gateway({ dir: join(dir, name), clickhouseEndpoint: `${front.url}${query}` });
  gateways.push(gateway);
  await gateway.start();
  return gateway;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ccotel-clickhouse-exporter-'));
  front = new ClickHouseFrontProcess(join(dir, 'clickhouse'));
  await front.start();
  client = createClient({ url: front.url });
  const gateway = await startGateway('gateway-lz4');
  // Recent sessions: the shipped schema drops raw rows older than its 30-day TTL at insert.
  const corpus = await generateCorpus({ seed: 32, root: join(dir, 'claude'), hostLayout: 'single-root', startMs: Date.now() - 3 * 86_400_000 });
  sidecar = await otlpOnlySidecar(gateway, join(dir, 'state'));
  await backfillAll(sidecar, corpus.configDirs);
  await sidecar.sink.close();
}, 300_000);

afterAll(async () => {
  await client?.close();
  for (const gateway of gateways) await gateway.stop('SIGKILL');
  await front?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the real clickhouse exporter → ClickHouse (test front over the embedded engine)', () => {
  it('stores every span, log record and metric point the sidecar delivered, as often as it was delivered', async () => {
    const { spans, logs, metrics } = sidecar.recorder.batch;
    const delivered = new Map<string, number>();
    for (const id of [...spans.map((s) => s.spanId), ...logs.map((l) => l.id), ...metrics.map((p) => p.id)]) delivered.set(id, (delivered.get(id) ?? 0) + 1);
    expect(delivered.size).toBeGreaterThan(1000);
    expect(sidecar.sink.stats.dropped).toEqual({ traces: 0, logs: 0, metrics: 0 });
    const stored = await waitForIds([...delivered.keys()]);
    expect([...delivered].filter(([id, times]) => stored.get(id) !== times)).toEqual([]);
    expect(stored.size).toBe(delivered.size);
  }, 120_000);

  it('fills the summaries from the exporter\'s rows (the views schemas/ made)', async () => {
    const spans = sidecar.recorder.batch.spans;
    const [facts] = await rows<{ n: string }>(`SELECT count() AS n FROM ccotel_span_facts`);
    const [raw] = await rows<{ n: string }>(`SELECT count() AS n FROM otel_traces WHERE SpanName LIKE 'chat %'`);
    expect(Number(raw!.n)).toBe(spans.filter((span) => span.name.startsWith('chat ')).length);
    expect(Number(facts!.n)).toBeGreaterThan(0);
  });

  it.each([['zstd'], ['none']])('takes the exporter\'s inserts with compress=%s', async (method) => {
    const gateway = await startGateway(`gateway-${method}`, `?compress=${method}`);
    const id = `compress-${method}-${Date.now()}`;
    const response = await fetch(`${gateway.url}/v1/logs`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${gateway.token}` },
      body: JSON.stringify({
        resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ logRecords: [{ timeUnixNano: `${Date.now()}000000`, severityNumber: 9, eventName: 'probe', body: { stringValue: 'probe' }, attributes: [{ key: RECORD_ID_KEY, value: { stringValue: id } }] }] }] }],
      }),
    });
    expect(response.status).toBe(200);
    expect((await waitForIds([id])).get(id)).toBe(1);
  }, 60_000);

  it('refuses a compressed body whose checksum does not match, as ClickHouse does', async () => {
    const framed = encodeFrames(Buffer.from('SELECT 1'));
    framed[framed.length - 1] ^= 0xff;
    const response = await fetch(`${front.url}/?decompress=1`, { method: 'POST', body: new Uint8Array(framed) });
    expect(response.status).toBe(500);
    expect(await response.text()).toMatch(/checksum mismatch/);
    const intact = await fetch(`${front.url}/?decompress=1`, { method: 'POST', body: new Uint8Array(encodeFrames(Buffer.from('SELECT 41 + 1'))) });
    expect(await intact.text()).toBe('42\n');
  });
});
