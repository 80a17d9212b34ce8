// Issue 13, row 10: a transcript of 300 000 lines of `y` (600 KB). Every line is skipped; the pipeline
// must neither keep a record per line nor build one batch of everything. Bounds stated and checked: no
// batch over FLUSH_ITEMS (+ one check interval) items, at most SKIPPED_RECORDS_PER_FILE skipped records
// with text, the heap grows by less than 256 MB, and a real `ccotel backfill` into the embedded store
// peaks under 1 GiB RSS (it was 4.45 GB; ~370 MB measured, most of it the engine).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../sidecar/src/config.js';
import { buildPipeline } from '../../sidecar/src/build-pipeline.js';
import { ingestFile } from '../../sidecar/src/ingest.js';
import { batchSize, type Sink, type TelemetryBatch } from '../../sidecar/src/model.js';
import { FLUSH_ITEMS } from '../../sidecar/src/pipeline.js';
import { SKIPPED_RECORDS_PER_FILE } from '../../sidecar/src/skipped-lines.js';
import { assertBuilt, CLI, cliEnv, runProcess } from '../reliability/cli.js';

const LINES = 300_000;

describe('bounded memory under a transcript of garbage lines', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ccotel-adv-memory-'));
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('row 10: 300 000 skipped lines become a few records and counts, in bounded batches', async () => {
    const transcript = join(dir, 'session.jsonl');
    writeFileSync(transcript, 'y\n'.repeat(LINES));
    const batches: number[] = [];
    let skippedRecords = 0;
    let skippedWithText = 0;
    let countedLines = 0;
    let heapPeak = 0;
    const sink: Sink = {
      name: 'counting',
      async write(batch: TelemetryBatch) {
        batches.push(batchSize(batch));
        heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
        for (const log of batch.logs) {
          if (log.eventName !== 'ccotel.record.skipped') continue;
          skippedRecords++;
          if (log.body !== '') skippedWithText++;
          countedLines += Number(log.attributes['ccotel.record.count'] ?? 1);
        }
      },
      async close() {},
    };
    const env = { HOME: dir, CCOTEL_STATE_DIR: join(dir, 'state'), CCOTEL_DATA_DIR: join(dir, 'data'), CCOTEL_CONFIG: 'none' };
    const { pipeline } = buildPipeline(loadConfig({ store: 'none' }, env), { mode: 'once', sinks: [sink] });
    const heapBefore = process.memoryUsage().heapUsed;
    await ingestFile(pipeline, { path: transcript, kind: 'main' }, 0);
    await pipeline.finish();

    expect(pipeline.stats.skipped.malformed_json).toBe(LINES);
    expect(countedLines).toBe(LINES);
    expect(skippedWithText).toBe(SKIPPED_RECORDS_PER_FILE);
    expect(skippedRecords).toBeLessThan(SKIPPED_RECORDS_PER_FILE + 50);
    expect(Math.max(...batches)).toBeLessThanOrEqual(FLUSH_ITEMS + 2_000);
    expect(heapPeak - heapBefore).toBeLessThan(256 << 20);
  });

  it('row 10: `ccotel backfill` of that transcript into the embedded store peaks under 1 GiB RSS', async () => {
    assertBuilt();
    const home = join(dir, 'backfill');
    const project = join(home, 'claude', 'projects', 'P');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, '11111111-2222-3333-4444-555555555555.jsonl'), 'y\n'.repeat(LINES));
    // The peak resident size, written by the child itself as it exits.
    const preload = join(dir, 'peak-rss.cjs');
    const peakFile = join(dir, 'peak-rss.txt');
    writeFileSync(preload, `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(peakFile)}, String(process.resourceUsage().maxRSS * 1024)));\n`);
    const result = await runProcess(process.execPath, ['-r', preload, CLI, 'backfill', '--store', join(home, 'store')], cliEnv(home), 300_000);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout + result.stderr).toContain(`malformed_json=${LINES}`);
    expect(Number(readFileSync(peakFile, 'utf8'))).toBeLessThan(1 << 30);
  }, 320_000);
});
