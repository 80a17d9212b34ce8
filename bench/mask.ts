// Masking throughput, not a test: `npx vite-node bench/mask.ts [MB]` (default 50).
// Prints MB/s of the detector (with and without its prefilter) on a generated mixed corpus, secretlint
// alone on 100 lines per call against one line per call, and the false-positive rate on content with
// no secret. Each figure is the best of RUNS runs: the machine is shared, so the best is the least noisy.
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { createSecretDetector, loadSecretlint } from '../sidecar/src/processors/secret-detector.js';
import { maskText } from '../sidecar/src/processors/mask.js';
import { findLeaks, mixedCorpus, negativeText } from '../test/generators/secrets.js';

const megabytes = Number(process.argv[2] ?? 50);
if (!(megabytes > 0)) throw new Error(`usage: bench/mask.ts [MB > 0], not ${process.argv[2]}`);
/** Texts per detect call: about what one pipeline flush hands the mask processor per field batch. */
const TEXTS_PER_CALL = 1000;
/** secretlint alone is measured on this share of the corpus: one call per line is slow. */
const SECRETLINT_SAMPLE_MB = Math.min(megabytes, 4);
const RUNS = 3;
const NEGATIVE_TEXTS = 100_000;

function cpuModel(): string {
  const line = readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('model name'));
  return line?.split(':')[1]?.trim() ?? 'unknown';
}

async function timed<T>(run: () => Promise<T>, runs = 1): Promise<{ result: T; seconds: number }> {
  let best: { result: T; seconds: number } | undefined;
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    const result = await run();
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (!best || seconds < best.seconds) best = { result, seconds };
  }
  return best!;
}

const bytesOf = (texts: string[]) => texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);

async function detectAll(texts: string[], prefilter: boolean) {
  const detector = createSecretDetector({ prefilter });
  let findings = 0;
  const chunks: string[] = [];
  for (let i = 0; i < texts.length; i += TEXTS_PER_CALL) {
    const batch = texts.slice(i, i + TEXTS_PER_CALL);
    const found = await detector.detect(batch);
    batch.forEach((text, j) => {
      findings += found[j].length;
      chunks.push(maskText(text, found[j], KEY));
    });
  }
  return { masked: chunks.join('\n'), findings };
}

async function secretlintLines(lines: string[], perCall: number): Promise<number> {
  const { lintSource, config } = await loadSecretlint();
  let messages = 0;
  for (let i = 0; i < lines.length; i += perCall) {
    const content = lines.slice(i, i + perCall).join('\n');
    const result = await lintSource({
      source: { content, filePath: 'bench.txt', ext: '.txt', contentType: 'text' },
      options: { config, noPhysicFilePath: true },
    });
    messages += result.messages.length;
  }
  return messages;
}

const KEY = Buffer.alloc(32, 7);

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
console.log(`machine: ${availableParallelism()} cpus, ${cpuModel()}, node ${process.version}, load average ${load()}`);
const generated = await timed(async () => mixedCorpus(megabytes * 1e6));
const corpus = generated.result;
const mb = bytesOf(corpus.texts) / 1e6;
console.log(`corpus: ${mb.toFixed(1)} MB in ${corpus.texts.length} texts, ${corpus.plantedCount} planted secrets (generated in ${generated.seconds.toFixed(1)} s)`);

for (const prefilter of [true, false]) {
  const run = await timed(() => detectAll(corpus.texts, prefilter), RUNS);
  const leaks = findLeaks(run.result.masked, corpus.secrets).length;
  console.log(`detect + mask, prefilter ${prefilter ? 'on ' : 'off'}: ${(mb / run.seconds).toFixed(1)} MB/s (${run.seconds.toFixed(1)} s, ${run.result.findings} findings, ${leaks} leaked pieces)`);
}

const sample: string[] = [];
for (let i = 0, bytes = 0; bytes < SECRETLINT_SAMPLE_MB * 1e6; i++) {
  const lines = corpus.texts[i].split('\n');
  sample.push(...lines);
  bytes += bytesOf(lines);
}
const sampleMb = bytesOf(sample) / 1e6;
for (const perCall of [100, 1]) {
  const run = await timed(() => secretlintLines(sample, perCall), RUNS);
  console.log(`secretlint alone, ${perCall} line(s) per call: ${(sampleMb / run.seconds).toFixed(2)} MB/s (${sampleMb.toFixed(1)} MB, ${sample.length} lines, ${run.seconds.toFixed(1)} s, ${run.result} messages)`);
}

const negatives = Array.from({ length: NEGATIVE_TEXTS }, negativeText);
const negativeFindings = (await createSecretDetector().detect(negatives)).filter((findings) => findings.length > 0).length;
console.log(`false positives: ${negativeFindings} of ${NEGATIVE_TEXTS} secret-free texts (code, hashes, git SHAs, UUIDs, base64 images, trace ids)`);
console.log(`load average at the end: ${load()}`);
