// Reading the history closes sessions idle in record time and forgets those closed a day before: memory holds
// the sessions still going on, and the records are the same as when every session stays open until the end of input.
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateCorpus } from '../../test/generator/corpus.js';
import { MemorySink } from '../../test/helpers/memory-sink.js';
import { DEFAULTS } from './config.js';
import type { TelemetryBatch } from './model.js';
import { Pipeline } from './pipeline.js';
import { TranscriptCorrelator } from './processors/transcripts/correlator.js';
import { readHistory } from './read-history.js';
import { TranscriptTree, type DiscoveredTranscript } from './sources/transcript-tree.js';

const REAL = join(import.meta.dirname, '..', '..', 'test', 'fixtures', 'real');

interface Read {
  records: Map<string, string>;
  sessions: number;
  /** The most sessions held open, and held at all (open or closed and not forgotten), at the start of a file. */
  mostOpen: number;
  mostHeld: number;
  /** Sessions that had a row after they were forgotten. */
  revived: number;
}

async function read(files: DiscoveredTranscript[], idleMs: number): Promise<Read> {
  const sink = new MemorySink();
  const pipeline = new Pipeline(new TranscriptCorrelator(), [], [sink]);
  let [mostOpen, mostHeld] = [0, 0];
  const onProgress = () => {
    const { open, held } = pipeline.sessionCounts();
    [mostOpen, mostHeld] = [Math.max(mostOpen, open), Math.max(mostHeld, held)];
  };
  await readHistory(pipeline, files, { idleMs, onProgress });
  const { revived } = pipeline.sessionCounts();
  await pipeline.finish();
  return { records: byId(sink.received), sessions: new Set(sink.received.spans.map((span) => span.attributes['session.id'])).size, mostOpen, mostHeld, revived };
}

/** Every record by id, as JSON (attributes in a fixed order: the order they were set in does not matter). */
function byId(batch: TelemetryBatch): Map<string, string> {
  const sorted = (record: { attributes: Record<string, unknown> }) => ({ ...record, attributes: Object.fromEntries(Object.entries(record.attributes).sort()) });
  const records = new Map<string, string>();
  for (const span of batch.spans) records.set(`span:${span.spanId}`, JSON.stringify(sorted(span)));
  for (const log of batch.logs) records.set(`log:${log.id}`, JSON.stringify(sorted(log)));
  for (const point of batch.metrics) records.set(`metric:${point.id}`, JSON.stringify(sorted(point)));
  return records;
}

/** The order files were read in before: every main transcript (oldest first), then every subagent. */
function mainsFirst(files: DiscoveredTranscript[]): DiscoveredTranscript[] {
  return [...files].sort((a, b) => Number(a.kind !== 'main') - Number(b.kind !== 'main') || a.mtimeMs - b.mtimeMs || a.path.localeCompare(b.path));
}

/**
 * The same records as before, with the idle time of `run` and with 1 ms (every session closed before each next
 * main transcript: what a session continued by a later file meets).
 */
async function expectSameRecords(files: DiscoveredTranscript[]): Promise<Read[]> {
  const openToTheEnd = await read(mainsFirst(files), Number.POSITIVE_INFINITY);
  const [closingIdle, closingAtOnce] = [await read(files, DEFAULTS.idleMs), await read(files, 1)];
  for (const closing of [closingIdle, closingAtOnce]) {
    expect(closing.records.size).toBe(openToTheEnd.records.size);
    const differing = [...openToTheEnd.records].filter(([id, json]) => closing.records.get(id) !== json);
    expect(differing.map(([id]) => [id, closing.records.get(id) ?? 'missing'])).toEqual([]);
  }
  return [closingIdle, closingAtOnce];
}

describe('readHistory: sessions idle in record time are closed while reading', () => {
  it('holds only the sessions still going on for a generated history, and stores the same records as without closing', async () => {
    const root = mkdtempSync(join(tmpdir(), 'ccotel-history-'));
    const expected = await generateCorpus({ seed: 7, root, sessions: 150, hostLayout: 'multi-root' });
    const files = await new TranscriptTree(expected.configDirs.map((dir) => join(dir, 'projects'))).discover();
    expect(files.some((file) => file.kind === 'subagent')).toBe(true);

    const [closingIdle, closingAtOnce] = await expectSameRecords(files);

    expect(closingIdle.sessions).toBeGreaterThanOrEqual(150);
    // Without closing in record time every session read so far stays open (the last one: all of them).
    const openToTheEnd = await read(files, Number.POSITIVE_INFINITY);
    expect(openToTheEnd.mostOpen).toBeGreaterThanOrEqual(150);
    expect(closingIdle.mostOpen).toBeLessThan(15);
    // Sessions closed a day before the newest record read are forgotten; a row for one afterwards (an old-style
    // resume's copy) finds it gone, and the records are still the same.
    expect(openToTheEnd.mostHeld).toBeGreaterThanOrEqual(150);
    expect(closingIdle.mostHeld).toBeLessThan(110);
    expect(closingAtOnce.revived).toBeGreaterThan(0);
  }, 120_000);

  it('stores the same records for the recorded real Claude Code transcripts (every release, as one history)', async () => {
    const roots = readdirSync(REAL, { withFileTypes: true })
      .filter((version) => version.isDirectory())
      .flatMap((version) => readdirSync(join(REAL, version.name)).map((scenario) => join(REAL, version.name, scenario, 'projects')));
    const files = await new TranscriptTree(roots).discover();
    expect(files.length).toBeGreaterThan(50);
    const [closingIdle] = await expectSameRecords(files);
    expect(closingIdle.records.size).toBeGreaterThan(500);
  }, 120_000);
});
