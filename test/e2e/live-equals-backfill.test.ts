// Issue 30: following transcripts as Claude Code writes them gives exactly what reading them once gives. Every
// recorded sample (test/fixtures/real/**: the pinned release, every release of the version matrix, interactive
// sessions) is read twice more through the pipeline `run` uses: its rows appended in the order the CLI wrote them
// across all of its files (each file in its own order, the files interleaved by the rows' times), once row by row
// and once in the bursts the CLI wrote (the rows of one file within BURST_MS), with the idle clock ticking at each
// row's time, and ended as `run` ends: a clean stop (the turns that are over), then the idle time passing. The
// spans, logs and points, by id and content, must equal the backfill's: nothing missing, extra or different.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPipeline } from '../../sidecar/src/build-pipeline.js';
import { loadConfig } from '../../sidecar/src/config.js';
import type { Pipeline } from '../../sidecar/src/pipeline.js';
import { readHistory } from '../../sidecar/src/read-history.js';
import type { TranscriptFile } from '../../sidecar/src/records/transcript.js';
import { textLines, type Line } from '../../sidecar/src/sources/line-reader.js';
import { discoverTranscripts } from '../../sidecar/src/sources/transcript-discovery.js';
import { timestampIn } from '../../sidecar/src/skipped-lines.js';
import { MemorySink } from '../helpers/memory-sink.js';
import { outputLines, recordedFixtures } from './recorded-fixtures.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'real');
/** Rows of one file written within this much of the first are one write (Claude Code flushes a turn's rows so). */
const BURST_MS = 50;

type Delivery = 'backfill' | 'row by row' | 'bursts';

/** One row of a fixture, and when the CLI wrote it (its time, or the time of the row before it in its file). */
interface Written {
  file: TranscriptFile;
  line: Line;
  atMs: number;
}

/** Every row of `files`, in the order the CLI wrote them: each file in its order, the files merged by time. */
function writeOrder(files: TranscriptFile[]): Written[] {
  const perFile = files.map((file) => {
    const text = readFileSync(file.path, 'utf8');
    const lines = textLines(text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n')).filter((line) => line.bytes.length > 0);
    let atMs = Number.NEGATIVE_INFINITY;
    return lines.map((line) => ({ file, line, atMs: (atMs = Math.max(atMs, timestampIn(line.text) ?? atMs)) }));
  });
  const order: Written[] = [];
  const next = perFile.map(() => 0);
  for (;;) {
    let pick = -1;
    perFile.forEach((rows, f) => {
      if (next[f] < rows.length && (pick < 0 || rows[next[f]].atMs < perFile[pick][next[pick]].atMs)) pick = f;
    });
    if (pick < 0) return order;
    order.push(perFile[pick][next[pick]++]);
  }
}

/** Consecutive rows of one file written within BURST_MS of the first (row by row: one row each). */
function writes(order: Written[], delivery: Delivery): Written[][] {
  const groups: Written[][] = [];
  for (const row of order) {
    const last = groups.at(-1);
    const joins = delivery === 'bursts' && last && last[0].file === row.file && row.atMs - last[0].atMs <= BURST_MS;
    if (joins) last.push(row);
    else groups.push([row]);
  }
  return groups;
}

/** Follow the rows as `run` does: each write read at once, the idle clock at the write's time; then a clean stop and the idle time passing. */
async function follow(pipeline: Pipeline, files: TranscriptFile[], delivery: Delivery, idleMs: number): Promise<void> {
  let nowMs = Number.NEGATIVE_INFINITY;
  for (const write of writes(writeOrder(files), delivery)) {
    nowMs = Math.max(nowMs, write[0].atMs);
    await pipeline.addLines(write[0].file, write.map((row) => row.line));
    pipeline.closeIdle(nowMs - idleMs);
  }
  pipeline.closeComplete();
  await pipeline.flush();
  pipeline.closeIdle(nowMs + 1);
  await pipeline.finish();
}

async function output(configDir: string, delivery: Delivery): Promise<string[]> {
  const saved = { ...process.env };
  // Content kept as is: a difference in any text shows.
  Object.assign(process.env, { CLAUDE_CONFIG_DIR: configDir, CCOTEL_ALLOW_RAW_CONTENT: '1', CCOTEL_RAW_TTL_DAYS: '0' });
  try {
    const config = loadConfig({ store: 'none', contentLevel: 'raw' });
    const sink = new MemorySink();
    const { pipeline } = buildPipeline(config, { mode: 'once', sinks: [sink], keepSpool: true });
    const files = await discoverTranscripts([join(configDir, 'projects')], () => {});
    if (delivery === 'backfill') {
      await readHistory(pipeline, files, { idleMs: config.idleMs });
      await pipeline.finish();
    } else {
      await follow(pipeline, files, delivery, config.idleMs);
    }
    return outputLines(sink);
  } finally {
    process.env = saved;
  }
}

/**
 * Each transcript's modification time as the CLI left it: its last row's time (a checkout's times would order a
 * backfill's files by the order git wrote them).
 */
function writtenWhenLastRowSays(projects: string): void {
  for (const name of readdirSync(projects, { recursive: true }) as string[]) {
    if (!name.endsWith('.jsonl')) continue;
    const path = join(projects, name);
    const times = readFileSync(path, 'utf8').split('\n').map(timestampIn).filter((time) => time !== undefined);
    if (times.length > 0) utimesSync(path, new Date(Math.max(...times)), new Date(Math.max(...times)));
  }
}

const root = mkdtempSync(join(tmpdir(), 'ccotel-live-backfill-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('live equals backfill, on every recorded sample', () => {
  const samples = recordedFixtures(FIXTURES);

  it('covers every recorded sample (every release of the matrix)', () => {
    expect(samples.length).toBeGreaterThanOrEqual(100);
  });

  it.each(samples)('%s', { timeout: 60_000 }, async (name) => {
    const dir = join(root, name);
    cpSync(join(FIXTURES, name, 'projects'), join(dir, 'projects'), { recursive: true });
    writtenWhenLastRowSays(join(dir, 'projects'));
    const backfilled = await output(dir, 'backfill');
    expect(backfilled.length).toBeGreaterThan(0);
    for (const delivery of ['row by row', 'bursts'] as const) {
      const followed = await output(dir, delivery);
      const [had, got] = [new Set(backfilled), new Set(followed)];
      // The differing items by id (an item whose content differs is in both lists).
      const idOf = (item: string) => item.split(' ', 2).join(' ');
      expect({ delivery, missing: backfilled.filter((item) => !got.has(item)).map(idOf), extra: followed.filter((item) => !had.has(item)).map(idOf) }).toEqual({ delivery, missing: [], extra: [] });
    }
  });
});
