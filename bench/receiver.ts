// The receiver of Claude Code's own OTLP, not a test: `npx vite-node bench/receiver.ts [requests] [--store]`.
// Real 2.1.332 exports (test/fixtures/real/concurrent-sessions: its log records, points and spans) are POSTed
// as OTLP/JSON and as OTLP/protobuf by a child process, 4 at a time; this process receives them through the
// masking and capping processors into a sink that drops them (or, with --store, into an embedded store). The
// figure is items per CPU second of this process (receiving, decoding, masking, capping, storing), i.e. per core.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pipeline } from '../sidecar/src/pipeline.js';
import { CapProcessor } from '../sidecar/src/processors/cap.js';
import { MaskProcessor } from '../sidecar/src/processors/mask.js';
import { createSecretDetector } from '../sidecar/src/processors/secret-detector.js';
import { TranscriptCorrelator } from '../sidecar/src/processors/transcripts/correlator.js';
import { batchSize, type Sink } from '../sidecar/src/model.js';
import { RowMapper } from '../sidecar/src/sinks/clickhouse-rows.js';
import { ClickHouseSink } from '../sidecar/src/sinks/clickhouse-sink.js';
import { OtlpEncoder } from '../sidecar/src/sinks/otlp-convert.js';
import { startTelemetryReceiver } from '../sidecar/src/sources/otlp-receiver.js';
import { receivedLogs, receivedMetrics, receivedSpans } from '../sidecar/src/sources/otlp-received.js';
import { openStore } from '../sidecar/src/store/open-store.js';

const requests = Number(process.argv[2] ?? 2000);
const withStore = process.argv.includes('--store');
const SAMPLE = join(import.meta.dirname, '..', 'test', 'fixtures', 'real', 'concurrent-sessions', 'otel');
const CONCURRENCY = 4;

const dir = mkdtempSync(join(tmpdir(), 'ccotel-bench-receiver-'));
try {
  // The bodies: each recorded export as sent (JSON), and the same items as protobuf (the SDK's serializer).
  const bodies: { path: string; type: string; file: string; items: number }[] = [];
  const convert = { traces: receivedSpans, metrics: receivedMetrics, logs: receivedLogs };
  for (const signal of ['traces', 'metrics', 'logs'] as const) {
    readFileSync(join(SAMPLE, `${signal}.jsonl`), 'utf8').split('\n').filter(Boolean).forEach((line, i) => {
      const { batch } = convert[signal](JSON.parse(line));
      const first = batch.spans[0] ?? batch.logs[0] ?? batch.metrics[0];
      const encoder = new OtlpEncoder(first?.origin?.resource ?? {}, first?.origin?.scopeVersion ?? '');
      const protobuf = signal === 'traces' ? encoder.traces(batch.spans) : signal === 'logs' ? encoder.logs(batch.logs) : encoder.metrics(batch.metrics);
      for (const [type, body] of [['application/json', line], ['application/x-protobuf', protobuf]] as const) {
        const file = join(dir, `${signal}-${i}-${type === 'application/json' ? 'json' : 'pb'}`);
        writeFileSync(file, body);
        bodies.push({ path: `/v1/${signal}`, type, file, items: batchSize(batch) });
      }
    });
  }

  let stored = 0;
  const store = withStore ? await openStore(join(dir, 'store'), { command: 'bench', access: 'write', rawTtlDays: 0 }) : undefined;
  const sink: Sink = store
    ? new ClickHouseSink(store.writers, new RowMapper({ 'service.name': 'ccotel' }, 'bench'), 'default', { singleWriter: true })
    : { name: 'drop', write: async () => {}, close: async () => {} };
  const counting: Sink = { name: 'count', write: async (batch) => { stored += batchSize(batch); await sink.write(batch); }, close: async () => {} };
  const pipeline = new Pipeline(new TranscriptCorrelator(), [new MaskProcessor(createSecretDetector(), Buffer.alloc(32, 1)), new CapProcessor(4096)], [counting]);
  const receiver = await startTelemetryReceiver({ port: 0, deliver: (batch) => pipeline.deliver(batch) });

  // The client in a process of its own, so this process's CPU is the receiver's alone.
  const client = `
    const bodies = ${JSON.stringify(bodies)}.map((b) => ({ ...b, body: require('fs').readFileSync(b.file) }));
    let next = 0;
    const one = async () => { while (next < ${requests}) { const b = bodies[next++ % bodies.length];
      const r = await fetch('${receiver.url}' + b.path, { method: 'POST', headers: { 'content-type': b.type }, body: b.body });
      if (r.status !== 200) throw new Error('status ' + r.status); await r.arrayBuffer(); } };
    Promise.all(Array.from({ length: ${CONCURRENCY} }, one)).then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });`;
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  const code = await new Promise<number | null>((resolve) => spawn(process.execPath, ['-e', client], { stdio: 'inherit' }).on('exit', resolve));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  if (code !== 0) throw new Error(`the client failed (${code})`);
  const items = stored;
  console.log(`receiver (${withStore ? 'into an embedded store' : 'sink dropping'}; masking and caps on): ${requests} requests (JSON and protobuf alike), ${items} items`);
  console.log(`  wall ${seconds.toFixed(2)} s: ${Math.round(requests / seconds)} requests/s, ${Math.round(items / seconds)} items/s`);
  console.log(`  this process's CPU ${cpuSeconds.toFixed(2)} s: ${Math.round(items / cpuSeconds)} items per CPU second (per core), ${(cpuSeconds * 1e6 / requests).toFixed(0)} µs per request`);
  console.log(`  load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  await receiver.close();
  await store?.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
