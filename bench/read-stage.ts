// Benchmark (not a test): the backfill's reading stage alone — every transcript line read and told apart as
// `backfill` does (rows that are surely not conversation known by their bytes, the rest parsed) — against the floor
// (Node reading every line and JSON.parse, one core) on the same corpus, alternately, three rounds each.
//
//   npm run build && node dist/bench/read-stage.js [--bytes 200M] [--scale 5]
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ignoredRowType, parseRow } from '../sidecar/src/processors/parse-transcript.js';
import { readLines } from '../sidecar/src/sources/line-reader.js';
import { benchCorpus, floor, jsonlFiles } from './corpus.js';
import { median } from './stats.js';

const repo = resolve(import.meta.dirname, '..', '..');
const { values: args } = parseArgs({
  options: {
    bytes: { type: 'string', default: '200M' },
    seed: { type: 'string', default: '1' },
    scale: { type: 'string', default: '5' },
    dir: { type: 'string', default: join(repo, '.cache', 'bench') },
  },
});

/** Read every line as the pipeline does and parse only those that may be conversation; the number parsed. */
async function readingStage(files: string[]): Promise<{ seconds: number; parsed: number }> {
  const started = performance.now();
  let parsed = 0;
  for (const file of files) {
    await readLines(file, 0, (lines) => {
      for (const line of lines) {
        if (line.bytes.length === 0 || ignoredRowType(line.bytes) !== undefined) continue;
        parseRow(line.text);
        parsed++;
      }
    });
  }
  return { seconds: (performance.now() - started) / 1000, parsed };
}

const expected = await benchCorpus({ dir: args.dir!, bytes: args.bytes!, seed: Number(args.seed), scale: Number(args.scale) });
const files = expected.configDirs.flatMap(jsonlFiles);
const floorSeconds: number[] = [];
const stageSeconds: number[] = [];
let bytes = 0;
let lines = 0;
let parsed = 0;
for (let round = 0; round < 3; round++) {
  const base = await floor(expected.configDirs);
  const stage = await readingStage(files);
  floorSeconds.push(base.seconds);
  stageSeconds.push(stage.seconds);
  ({ bytes, lines } = base);
  parsed = stage.parsed;
}
const mb = bytes / 1e6;
console.log(`reading stage, ${mb.toFixed(0)} MB (${files.length} files, ${lines} lines, ${parsed} parsed), --scale ${args.scale}; ` +
  `${cpus().length} × ${cpus()[0]?.model}, load average ${loadavg().map((load) => load.toFixed(1)).join(' ')}`);
console.log('| | median of 3 | MB/s |');
console.log('|---|---:|---:|');
console.log(`| floor: read lines + JSON.parse | ${median(floorSeconds).toFixed(2)} s | ${(mb / median(floorSeconds)).toFixed(0)} |`);
console.log(`| reading stage: read lines, parse what may be conversation | ${median(stageSeconds).toFixed(2)} s | ${(mb / median(stageSeconds)).toFixed(0)} |`);
console.log(`\nthe reading stage at ${(median(floorSeconds) / median(stageSeconds)).toFixed(2)}× the floor`);
