import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, truncateSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { otelTablesDdl } from '../../../schemas/clickhouse.js';
import { appendTurns, sessionPath, turnLines, uuidOf, waitFor } from '../../../test/reliability/transcripts.js';
import { loadConfig } from '../config.js';
import { spanIdOf, traceIdOf } from '../ids.js';
import { buildPipeline, driveTranscripts, type DrivenTranscripts } from '../build-pipeline.js';
import type { Pipeline } from '../pipeline.js';
import { openStore, type Store } from '../store/open-store.js';
import { CheckpointStore } from './checkpoints.js';
import { TranscriptTailer, type TailerOptions } from './transcript-tailer.js';

// One embedded store per test file (one chdb data directory per process); one database per test.
let store: Store;
let scratch: string;
let testNumber = 0;
const HOUR = 3_600_000;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'ccotel-tailer-'));
  store = await openStore(join(scratch, 'store'), { command: 'test', access: 'write' });
});

afterAll(async () => {
  await store.close();
  rmSync(scratch, { recursive: true, force: true });
});

interface Harness {
  configDir: string;
  database: string;
  pipeline: Pipeline;
  tailer: TranscriptTailer;
  checkpoints: CheckpointStore;
  logs: string[];
}

const running: DrivenTranscripts[] = [];
afterEach(async () => {
  for (const transcripts of running.splice(0)) await transcripts.stop();
});

async function harness(existing?: Pick<Harness, 'configDir' | 'database'>, idleMs = 1_000, watching: Pick<TailerOptions, 'usePolling' | 'pollIntervalMs'> = {}): Promise<Harness> {
  const configDir = existing?.configDir ?? join(scratch, `config-${++testNumber}`);
  const database = existing?.database ?? `tail_${testNumber}`;
  mkdirSync(join(configDir, 'projects'), { recursive: true });
  if (!existing) for (const statement of otelTablesDdl({ database, rawTtlDays: 0 })) await store.client.command({ query: statement });
  const config = loadConfig({ store: join(scratch, 'store') }, { HOME: scratch });
  const { pipeline } = buildPipeline(config, { mode: 'once', store: { ...store, database } });
  const checkpoints = new CheckpointStore(join(configDir, 'checkpoints'), 'test');
  const logs: string[] = [];
  // Records are two hours old and the idle time is one second: every turn closes at the next idle check.
  const transcripts = driveTranscripts(pipeline, { roots: [join(configDir, 'projects')], checkpoints, idleMs, flushIntervalMs: config.flushIntervalMs, log: (m) => logs.push(m), ...watching });
  const { tailer } = transcripts;
  await transcripts.start();
  running.push(transcripts);
  return { configDir, database, pipeline, tailer, checkpoints, logs };
}

async function stop(h: Harness): Promise<void> {
  const [transcripts] = running.splice(running.findIndex((entry) => entry.tailer === h.tailer), 1);
  await transcripts.stop();
}

async function spans(database: string): Promise<{ turns: number; tools: number; chats: number; rows: number; distinct: number }> {
  const result = await store.client.query({
    query: `SELECT countIf(SpanName = 'invoke_agent claude-code') AS turns, countIf(SpanName LIKE 'execute_tool %') AS tools,
                   countIf(SpanName LIKE 'chat %') AS chats, count() AS rows, uniqExact(SpanId) AS distinct
            FROM ${database}.otel_traces`,
    format: 'JSONEachRow',
  });
  const [row] = await result.json<Record<string, string | number>>();
  return { turns: Number(row.turns), tools: Number(row.tools), chats: Number(row.chats), rows: Number(row.rows), distinct: Number(row.distinct) };
}

/** Wait until the store holds `turns` complete turns (root + tool) and the tailer committed everything. */
async function expectTurns(h: Harness, turns: number): Promise<void> {
  await waitFor(`${turns} turns in ${h.database}`, async () => h.tailer.settled && (await spans(h.database)).turns >= turns && (await spans(h.database)).tools >= turns);
  expect(await spans(h.database)).toEqual({ turns, tools: turns, chats: 2 * turns, rows: 4 * turns, distinct: 4 * turns });
}

describe('transcript tailer', () => {
  it('catches up on existing files, then follows appends; a half-written line waits for its newline', async () => {
    const start = Date.now() - 2 * HOUR;
    const h0 = { configDir: join(scratch, `config-${++testNumber}`), database: `tail_${testNumber}` };
    for (const statement of otelTablesDdl({ database: h0.database, rawTtlDays: 0 })) await store.client.command({ query: statement });
    const path = sessionPath(h0.configDir, 'session-a');
    appendTurns(path, 'session-a', 0, 2, start);
    const h = await harness(h0);
    await expectTurns(h, 2);
    const [first, ...rest] = turnLines({ sessionId: 'session-a', index: 2, startMs: start });
    appendFileSync(path, first.slice(0, 40));
    await new Promise((resolveDelay) => setTimeout(resolveDelay, 1_500));
    expect(h.pipeline.stats.skipped).toEqual({});
    appendFileSync(path, first.slice(40) + '\n' + rest.map((line) => line + '\n').join(''));
    await expectTurns(h, 3);
    expect(h.pipeline.stats.lines).toBe(12);
  });

  it('polling (--polling, or when a watch cannot be added): appends, a new file in a new project dir, a delete', async () => {
    const start = Date.now() - 2 * HOUR;
    const h = await harness(undefined, 1_000, { usePolling: true, pollIntervalMs: 200 });
    expect(h.tailer.watcherMode).toBe('polling');
    const path = sessionPath(h.configDir, 'session-p');
    appendTurns(path, 'session-p', 0, 1, start);
    await expectTurns(h, 1);
    appendTurns(path, 'session-p', 1, 2, start);
    appendTurns(sessionPath(h.configDir, 'session-q', '-home-dev-other'), 'session-q', 0, 1, start);
    await expectTurns(h, 3);
    unlinkSync(path);
    await waitFor('the deleted file forgotten', () => h.tailer.filesFollowed === 1);
  });

  it('rotation: the renamed file keeps its position and the new file is read from its start', async () => {
    const start = Date.now() - 2 * HOUR;
    const h = await harness();
    const path = sessionPath(h.configDir, 'session-r');
    appendTurns(path, 'session-r', 0, 2, start);
    await expectTurns(h, 2);
    renameSync(path, path.replace('.jsonl', '.1.jsonl'));
    appendTurns(path.replace('.jsonl', '.1.jsonl'), 'session-r', 2, 3, start);
    appendTurns(path, 'session-r2', 0, 2, start);
    await expectTurns(h, 5);
    // Nothing was read twice: every line once.
    expect(h.pipeline.stats.lines).toBe(5 * 4);
  });

  it('truncation: a file cut below the read position is read again from its start', async () => {
    const start = Date.now() - 2 * HOUR;
    const h = await harness();
    const path = sessionPath(h.configDir, 'session-t');
    appendTurns(path, 'session-t', 0, 3, start);
    await expectTurns(h, 3);
    truncateSync(path, 0);
    appendTurns(path, 'session-t2', 0, 1, start);
    await expectTurns(h, 4);
    expect(h.pipeline.stats.lines).toBe(4 * 4); // the new content once, from its first byte
  });

  it('delete and recreate: the new file is read from its start, even on a reused inode', async () => {
    const start = Date.now() - 2 * HOUR;
    const h = await harness();
    const path = sessionPath(h.configDir, 'session-d');
    appendTurns(path, 'session-d', 0, 2, start);
    await expectTurns(h, 2);
    unlinkSync(path);
    appendTurns(path, 'session-d2', 0, 1, start);
    await expectTurns(h, 3);
  });

  it('hostile input (50 MB line, invalid UTF-8, binary garbage, deeply nested JSON) is counted and skipped; good turns around it are kept', async () => {
    const start = Date.now() - 2 * HOUR;
    const h = await harness();
    const path = sessionPath(h.configDir, 'session-h');
    appendTurns(path, 'session-h', 0, 1, start);
    appendFileSync(path, `{"type":"user","blob":"${'x'.repeat(50 << 20)}"}\n`); // 50 MB, a known type with missing fields
    appendFileSync(path, Buffer.concat([Buffer.from('{"type":"user","text":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}\n')]));
    appendFileSync(path, Buffer.concat([Buffer.from([0, 1, 2, 3, 0x80, 0x9f, 0xde, 0xad, 0xbe, 0xef]), Buffer.from('\n')]));
    appendFileSync(path, '['.repeat(100_000) + ']'.repeat(100_000) + '\n');
    appendFileSync(path, '{"a":' .repeat(20_000) + '1' + '}'.repeat(20_000) + '\n');
    appendTurns(path, 'session-h', 1, 2, start);
    await expectTurns(h, 2);
    expect(h.pipeline.stats.skipped).toEqual({ missing_fields: 3, malformed_json: 1, not_object: 1 });
  }, 60_000);

  it('a file that becomes unreadable is reported, not fatal; the others go on', async () => {
    const start = Date.now() - 2 * HOUR;
    const h = await harness();
    const bad = sessionPath(h.configDir, 'session-u');
    const good = sessionPath(h.configDir, 'session-g');
    appendTurns(bad, 'session-u', 0, 1, start);
    await expectTurns(h, 1);
    // Tests run as root, which ignores file modes: replace the file by a FIFO, which cannot be read as a
    // file (and would block a reader that opened it).
    unlinkSync(bad);
    execFileSync('mkfifo', [bad]);
    appendTurns(good, 'session-g', 0, 2, start);
    await expectTurns(h, 3);
    await waitFor('unreadable reported', () => h.pipeline.stats.unreadableFiles.has(bad));
    expect(h.pipeline.stats.unreadableFiles.get(bad)).toBe('not a regular file');
  });

  it('after a restart an in-progress turn is read again from its start and becomes one complete trace', async () => {
    const start = Date.now() - 2 * HOUR;
    const h = await harness(undefined, HOUR); // turn 1 must stay open across the restart
    const path = sessionPath(h.configDir, 'session-c');
    appendTurns(path, 'session-c', 0, 1, start);
    const [prompt, call, result, answer] = turnLines({ sessionId: 'session-c', index: 1, startMs: start });
    appendFileSync(path, `${prompt}\n${call}\n`);
    await waitFor('turn 0 stored', async () => h.tailer.settled && (await spans(h.database)).turns === 1);
    await stop(h);
    const saved = h.checkpoints.load()!.files[0];
    expect(saved.resumeOffset).toBe(turnLines({ sessionId: 'session-c', index: 0, startMs: start }).join('\n').length + 1);
    expect(saved.offset).toBeGreaterThan(saved.resumeOffset);
    appendFileSync(path, `${result}\n${answer}\n`);
    const restarted = await harness(h, HOUR);
    await waitFor('tool of turn 1 stored', async () => restarted.tailer.settled && (await spans(h.database)).tools === 2);
    const prompt1 = uuidOf('session-c/1/prompt');
    const tool = await store.client.query({
      query: `SELECT TraceId, ParentSpanId, SpanAttributes['ccotel.tool.outcome'] AS outcome FROM ${h.database}.otel_traces
              WHERE SpanName LIKE 'execute_tool %' ORDER BY Timestamp DESC LIMIT 1`,
      format: 'JSONEachRow',
    });
    expect(await tool.json()).toEqual([{ TraceId: traceIdOf('session-c', prompt1), ParentSpanId: spanIdOf('turn', 'session-c', prompt1), outcome: 'success' }]);
  });
});
