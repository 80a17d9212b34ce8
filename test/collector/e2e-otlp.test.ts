// End to end through the real collector: a generated transcript corpus → the sidecar's backfill path
// (buildPipeline + ingestFile over the discovered transcripts, as `ccotel backfill` does) with only the OTLP
// sink, no store → the gateway config as shipped, with the file-exporter overlay in place of ClickHouse →
// every span, log record and metric point the sidecar produced is in the output with its ids and attributes.
// Then a raw OTLP/JSON client, which masks nothing, sends planted secrets of every kind the sidecar masks,
// and the gateway's redaction stages must mask every one.
//
// Tail sampling: the gateway's knob CCOTEL_TRACE_SAMPLE_PERCENT is set to 100, so the probabilistic policy
// keeps every ordinary turn and every trace is expected (the other policies are as shipped).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TelemetryBatch } from '../../sidecar/src/model.js';
import { sidecarResource } from '../../sidecar/src/resource.js';
import type { OtlpSinkStats } from '../../sidecar/src/sinks/otlp-sink.js';
import { generateCorpus } from '../generator/corpus.js';
import { findLeaks, plantSecret, SECRET_KINDS, type PlantedText } from '../generators/secrets.js';
import { Gateway } from './otlp-gateway.js';
import { compareWithReference, readOutput, type Comparison } from './otlp-output.js';
import { backfillAll, deliveredIds, otlpOnlySidecar, waitForOutput } from './otlp-sidecar.js';

let dir: string;
let gateway: Gateway;
let stats: OtlpSinkStats;
let reference: TelemetryBatch;
let comparison: Comparison;

async function waitFor(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${gateway.logTail()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ccotel-e2e-otlp-'));
  gateway = new Gateway({ dir: join(dir, 'collector') });
  await gateway.start();
  const expected = await generateCorpus({ seed: 6, root: join(dir, 'claude'), hostLayout: 'single-root' });
  process.env.OTEL_SERVICE_NAME = 'ccotel-e2e';
  process.env.OTEL_RESOURCE_ATTRIBUTES = 'deployment.environment=e2e,host.name=e2e-host';
  const sidecar = await otlpOnlySidecar(gateway, join(dir, 'state'));
  await backfillAll(sidecar, expected.configDirs);
  await sidecar.sink.close();
  stats = sidecar.sink.stats;
  reference = sidecar.recorder.batch;
  await waitForOutput(gateway, deliveredIds(sidecar.recorder));
  comparison = compareWithReference(reference, readOutput(gateway.outputLines()), sidecarResource('masked'));
});

afterAll(async () => {
  await gateway?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('sidecar → real collector (gateway.yaml + file exporter)', () => {
  it('delivers a realistic amount of every signal, with nothing dropped or rejected on the way', () => {
    expect(comparison.counts.spans).toBeGreaterThan(50);
    expect(comparison.counts.logs).toBeGreaterThan(20);
    expect(comparison.counts.points).toBeGreaterThan(50);
    expect(new Set(reference.metrics.map((p) => p.kind))).toEqual(new Set(['sum', 'histogram']));
    expect(stats.dropped).toEqual({ traces: 0, logs: 0, metrics: 0 });
    expect(stats.failedAttempts).toBe(0);
  });

  it('writes every span, log record and metric point with the ids, times, names and attributes the sidecar produced', () => {
    expect(comparison.missing).toEqual([]);
    expect(comparison.mismatched.slice(0, 5)).toEqual([]);
    expect(comparison.duplicates).toEqual({ spans: 0, logs: 0, points: 0 });
  });

  it('runs OTLP-only without loading the embedded store (chdb) into the process', () => {
    expect(readFileSync('/proc/self/maps', 'utf8')).not.toMatch(/chdb/i);
  });

  it('carries the resource from OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES', () => {
    const output = readOutput(gateway.outputLines());
    expect(output.spans[0].resource).toMatchObject({ 'service.name': 'ccotel-e2e', 'deployment.environment': 'e2e', 'host.name': 'e2e-host' });
    expect(output.logs[0].resource['service.name']).toBe('ccotel-e2e');
  });

  it('adds only the gateway provenance and redaction diagnostics to what the sidecar sent', () => {
    expect([...comparison.addedKeys].filter((key) => key !== 'ccotel.collector.gateway' && !key.startsWith('redaction.'))).toEqual([]);
  });

  it('masks planted secrets that a raw OTLP client sends, in span, event, log and data point attributes and log bodies', async () => {
    // Each kind several times: the generator picks among several shapes per kind (e.g. four URL schemes).
    const planted: PlantedText[] = SECRET_KINDS.flatMap((kind) => Array.from({ length: 12 }, () => plantSecret(kind)));
    const value = (text: string) => ({ stringValue: text });
    const now = `${Date.now()}000000`;
    const traceId = 'e2e0000000000000000000000000beef';
    const resource = { attributes: [{ key: 'service.name', value: value('raw-client') }] };
    const kv = (p: PlantedText) => [{ key: 'planted.kind', value: value(p.kind) }, { key: 'content', value: value(p.text) }];
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.token}` },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
    };
    await post('/v1/logs', {
      resourceLogs: [{ resource, scopeLogs: [{ logRecords: planted.map((p) => ({ timeUnixNano: now, severityNumber: 9, eventName: 'raw.planted', body: value(p.text), attributes: kv(p) })) }] }],
    });
    await post('/v1/traces', {
      resourceSpans: [{
        resource,
        scopeSpans: [{
          spans: planted.map((p, i) => ({
            traceId, spanId: (i + 1).toString(16).padStart(16, '0'), name: `raw ${p.kind}`, kind: 1, startTimeUnixNano: now, endTimeUnixNano: now,
            attributes: kv(p), events: [{ timeUnixNano: now, name: 'planted', attributes: kv(p) }],
          })),
        }],
      }],
    });
    await post('/v1/metrics', {
      resourceMetrics: [{ resource, scopeMetrics: [{ metrics: [{ name: 'raw.planted', sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: planted.map((p) => ({ timeUnixNano: now, asDouble: 1, attributes: kv(p) })) } }] }] }],
    });

    await waitFor(() => {
      const output = readOutput(gateway.outputLines());
      return output.spans.filter((s) => s.traceId === traceId).length === planted.length
        && output.logs.filter((l) => l.eventName === 'raw.planted').length === planted.length
        && output.points.filter((p) => p.name === 'raw.planted').length === planted.length;
    }, 'the planted records in the output');
    const text = gateway.outputText();
    const leaked = planted.filter((p) => findLeaks(text, p.secrets).length > 0).map((p) => `${p.kind}: ${p.text}`);
    expect(leaked).toEqual([]);
    const output = readOutput(gateway.outputLines());
    const maskedBodies = output.logs.filter((l) => l.eventName === 'raw.planted' && /\[REDACTED:[a-z-]+\]|\*{4}/.test(l.body));
    expect(maskedBodies).toHaveLength(planted.length);
  });
});
