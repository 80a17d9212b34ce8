// Benchmark (not a test): how many spans per second the sidecar's OTLP sink gets accepted by the real
// collector (collector-config/gateway.yaml + the file-exporter overlay) on loopback, and the CPU both sides
// spend per 1000 spans. Spans are the ones the sidecar makes from a generated corpus, cloned with fresh ids
// to the wanted count, and batched as the pipeline batches them. Side by side in one run:
//   - the gateway as of an earlier commit (default: the last one before the masking rework), sidecar data;
//   - the gateway of this tree, sidecar data (marked ccotel.content.level=masked: the labelled pass skips it);
//   - the gateway of this tree, the same spans from a sender that masks nothing (every pass runs);
//   - memory_limiter only (no masking, no sampling): the collector's floor;
// then the gzip variant of the shipped case.
//
//   npx vite-node bench/otlp.ts [spans=100000] [earlier-commit]   (after `bash collector-config/build.sh`)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SpanRecord, TelemetryBatch } from '../sidecar/src/model.js';
import { generateCorpus } from '../test/generator/corpus.js';
import { Gateway } from '../test/collector/otlp-gateway.js';
import { backfillAll, otlpOnlySidecar } from '../test/collector/otlp-sidecar.js';
import { reportGoals } from './goals.js';

const SPANS = Number(process.argv[2] ?? 100_000);
const EARLIER = process.argv[3] ?? 'd487416';
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

interface Variant {
  name: string;
  compression: 'none' | 'gzip';
  /** Gateway config in place of this tree's gateway.yaml, and the test overlay of its time in place of this tree's. */
  config?: { gateway: string; overlay: string };
  extraConfigs?: string[];
  /** Send as a sender that masks nothing: no ccotel.content.level on the resource. */
  unmasked?: boolean;
}

async function run(variant: Variant, source: SpanRecord[], dir: string) {
  const { name, compression } = variant;
  const slug = name.replace(/[^a-z0-9]+/gi, '-');
  // The gateway's shipped memory limit (the tests' helper lowers it).
  const gateway = new Gateway({
    dir: join(dir, `collector-${slug}`),
    env: { CCOTEL_MEMORY_LIMIT_MIB: '2048', CCOTEL_MEMORY_SPIKE_MIB: '400' },
    // An earlier gateway with this tree's overlay would name pipelines it does not have (traces/facts came later).
    config: variant.config?.gateway,
    overlay: variant.config?.overlay,
    extraConfigs: variant.extraConfigs,
  });
  await gateway.start();
  try {
    process.env.OTEL_EXPORTER_OTLP_COMPRESSION = compression;
    const overrides = variant.unmasked ? { resource: { 'service.name': 'another-sender' } } : {};
    const { sink } = await otlpOnlySidecar(gateway, join(dir, `state-${slug}`), overrides);
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
    const collectorCpuMsPer1000 = (collectorMs / SPANS) * 1000;
    return {
      gateway: name,
      compression,
      spansPerSecond: Math.round(SPANS / seconds),
      spansPerCollectorCoreSecond: Math.round(1_000_000 / collectorCpuMsPer1000),
      sidecarCpuMsPer1000: Number((((cpu.user + cpu.system) / 1000 / SPANS) * 1000).toFixed(1)),
      collectorCpuMsPer1000: Number(collectorCpuMsPer1000.toFixed(1)),
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

  const earlier = (file: string) => {
    const path = join(dir, `earlier-${file}`);
    writeFileSync(path, execFileSync('git', ['show', `${EARLIER}:collector-config/${file}`]));
    return path;
  };
  const earlierConfig = { gateway: earlier('gateway.yaml'), overlay: earlier('test-overlay-file.yaml') };
  const floorConfig = join(dir, 'memory-limiter-only.yaml');
  writeFileSync(
    floorConfig,
    'service:\n  pipelines:\n    traces/masked:\n      processors: [memory_limiter]\n    traces:\n      processors: []\n',
  );
  const variants: Variant[] = [
    { name: `gateway.yaml at ${EARLIER}`, compression: 'none', config: earlierConfig },
    { name: 'gateway.yaml, sidecar data', compression: 'none' },
    { name: 'gateway.yaml, unmasked sender', compression: 'none', unmasked: true },
    { name: 'memory_limiter only', compression: 'none', extraConfigs: [floorConfig] },
    { name: 'gateway.yaml, sidecar data', compression: 'gzip' },
  ];
  const results = [];
  for (const variant of variants) results.push(await run(variant, source, dir));
  console.log(`machine: ${cpus()[0].model}, ${cpus().length} cores, Node ${process.version}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`${SPANS} spans cloned from ${source.length} generated ones (about ${bytesPerSpan} bytes of JSON each), batches of ${BATCH}, 1000 spans per request`);
  console.table(results);
  const shipped = results[1];
  reportGoals('otlp gateway', [
    { goal: 'spans per collector core-second, sidecar data, masking on', measured: shipped.spansPerCollectorCoreSecond, unit: 'spans/s', bound: 20_000, better: 'higher', peer: `earlier gateway ${results[0].spansPerCollectorCoreSecond}` },
  ]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
