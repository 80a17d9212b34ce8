// Benchmark (not a test): how many spans per second the sidecar's OTLP sink gets accepted by the real
// collector (collector-config/gateway.yaml + the file-exporter overlay) on loopback, and the sidecar's CPU
// time per 1000 spans; uncompressed and gzip. Spans are the ones the sidecar makes from a generated
// corpus, cloned with fresh ids to the wanted count, and batched as the pipeline batches them.
//
//   npx vite-node bench/otlp.ts [spans=200000] [extra-config.yaml ...]   (after `bash collector-config/build.sh`)
// Extra config files are merged over the gateway's, e.g. to see what one processor costs.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SpanRecord, TelemetryBatch } from '../sidecar/src/model.js';
import { generateCorpus } from '../test/generator/corpus.js';
import { Gateway } from '../test/collector/otlp-gateway.js';
import { backfillAll, otlpOnlySidecar } from '../test/collector/otlp-sidecar.js';

const SPANS = Number(process.argv[2] ?? 200_000);
const EXTRA_CONFIGS = process.argv.slice(3);
/** Items per pipeline flush (sidecar/src/pipeline.ts FLUSH_ITEMS). */
const BATCH = 20_000;

function collectorCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in clock ticks of 10 ms
}

function cloneSpans(source: SpanRecord[], count: number): TelemetryBatch[] {
  const batches: TelemetryBatch[] = [];
  for (let i = 0; i < count; i += BATCH) {
    const spans = Array.from({ length: Math.min(BATCH, count - i) }, (_, j) => {
      const n = i + j;
      const span = source[n % source.length];
      const copy = Math.floor(n / source.length);
      const traceId = (copy.toString(16).padStart(8, '0') + span.traceId.slice(8)).slice(0, 32);
      const spanId = (copy.toString(16).padStart(6, '0') + span.spanId.slice(6)).slice(0, 16);
      const parentSpanId = span.parentSpanId ? (copy.toString(16).padStart(6, '0') + span.parentSpanId.slice(6)).slice(0, 16) : '';
      return { ...span, traceId, spanId, parentSpanId };
    });
    batches.push({ spans, logs: [], metrics: [] });
  }
  return batches;
}

async function run(compression: 'none' | 'gzip', source: SpanRecord[], dir: string) {
  // The gateway's shipped memory limit (the tests' helper lowers it).
  const gateway = new Gateway({ dir: join(dir, `collector-${compression}`), env: { CCOTEL_MEMORY_LIMIT_MIB: '2048', CCOTEL_MEMORY_SPIKE_MIB: '400' }, extraConfigs: EXTRA_CONFIGS });
  await gateway.start();
  try {
    process.env.OTEL_EXPORTER_OTLP_COMPRESSION = compression;
    const { sink } = await otlpOnlySidecar(gateway, join(dir, `state-${compression}`));
    const batches = cloneSpans(source, SPANS);
    const cpuBefore = process.cpuUsage();
    const collectorBefore = collectorCpuMs(gateway.pid!);
    const started = performance.now();
    for (const batch of batches) await sink.write(batch);
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const collectorMs = collectorCpuMs(gateway.pid!) - collectorBefore;
    await sink.close();
    if (sink.stats.sent.traces !== SPANS) throw new Error(`only ${sink.stats.sent.traces} of ${SPANS} spans were accepted`);
    return {
      compression,
      spansPerSecond: Math.round(SPANS / seconds),
      sidecarCpuMsPer1000: Number((((cpu.user + cpu.system) / 1000 / SPANS) * 1000).toFixed(1)),
      collectorCpuMsPer1000: Number(((collectorMs / SPANS) * 1000).toFixed(1)),
      requests: sink.stats.requests,
      retried: sink.stats.failedAttempts,
      seconds: Number(seconds.toFixed(2)),
    };
  } finally {
    await gateway.stop();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'ccotel-bench-otlp-'));
try {
  // Realistic spans: what the sidecar makes of a generated corpus (sent once to a throwaway collector).
  const expected = await generateCorpus({ seed: 7, root: join(dir, 'claude'), hostLayout: 'single-root', sessions: 40 });
  const warmup = new Gateway({ dir: join(dir, 'collector-warmup') });
  await warmup.start();
  const sidecar = await otlpOnlySidecar(warmup, join(dir, 'state-warmup'));
  await backfillAll(sidecar, expected.configDirs);
  await sidecar.sink.close();
  await warmup.stop();
  const source = sidecar.recorder.batch.spans;
  const bytesPerSpan = Math.round(JSON.stringify(source).length / source.length);

  const results = [await run('none', source, dir), await run('gzip', source, dir)];
  console.log(`machine: ${cpus()[0].model}, ${cpus().length} cores, Node ${process.version}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  if (EXTRA_CONFIGS.length > 0) console.log(`gateway.yaml + overlay + ${EXTRA_CONFIGS.join(' + ')}`);
  console.log(`${SPANS} spans cloned from ${source.length} generated ones (about ${bytesPerSpan} bytes of JSON each), batches of ${BATCH}, 1000 spans per request`);
  console.table(results);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
