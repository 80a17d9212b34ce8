// One simulated agent host's sidecar for bench/scale-out.ts, as its own process: the live transcript
// tailer and the OTLP sink, wired as `ccotel run --store '' --otlp URL` wires them (the store off). It
// writes its sink counters to STATS_PATH every second and once more after a clean stop on SIGTERM.
//   vite-node bench/scale-out-host.ts STATS_PATH   (CLAUDE_CONFIG_DIR, CCOTEL_STATE_DIR, OTEL_EXPORTER_OTLP_* set)
import { writeFileSync } from 'node:fs';
import { loadConfig } from '../sidecar/src/config.js';
import { buildPipeline, driveTranscripts } from '../sidecar/src/build-pipeline.js';
import { CheckpointStore, sinkKey } from '../sidecar/src/sources/checkpoints.js';
import { transcriptRoots } from '../sidecar/src/sources/transcript-discovery.js';
import { createOtlpSink } from '../sidecar/src/sinks/create-otlp-sink.js';

const statsPath = process.argv[2];
if (!statsPath) throw new Error('usage: scale-out-host.ts STATS_PATH');

const config = loadConfig({ store: '' });
const sink = await createOtlpSink(config, { log: (message) => process.stderr.write(`host: ${message}\n`) });
const { pipeline } = buildPipeline(config, { mode: 'once', sinks: [sink] });
const checkpoints = new CheckpointStore(config.paths.checkpointDir, sinkKey(['', config.otlpEndpoint]));
const transcripts = driveTranscripts(pipeline, { roots: transcriptRoots(), checkpoints, idleMs: config.idleMs, flushIntervalMs: config.flushIntervalMs, log: (message) => process.stderr.write(`host: ${message}\n`) });

const writeStats = (stopped: boolean) =>
  writeFileSync(statsPath, JSON.stringify({ ...sink.stats, lines: pipeline.stats.lines, cpu: process.cpuUsage(), stopped }));

await transcripts.start();
const timer = setInterval(() => writeStats(false), 1000);
writeStats(false);

process.once('SIGTERM', () => {
  clearInterval(timer);
  void (async () => {
    await transcripts.stop();
    await sink.close();
    writeStats(true);
    process.exit(0);
  })();
});
