import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemorySink } from '../../test/helpers/memory-sink.js';
import { appendTurns, sessionPath, turnLines, waitFor } from '../../test/reliability/transcripts.js';
import { buildPipeline, type FollowPipeline } from './build-pipeline.js';
import { loadConfig } from './config.js';
import { historyHeapBudget } from './heap-budget.js';
import { ingestFile } from './ingest.js';
import type { SpanRecord, TelemetryBatch } from './model.js';
import { LINK_TYPE } from './processors/native-join.js';
import { CheckpointStore } from './sources/checkpoints.js';
import { discoverTranscripts, transcriptRoots } from './sources/transcript-discovery.js';

const HOUR_MS = 3_600_000;
const SESSION = 'session-1';

/** Two sessions of finished turns an hour old, a PostToolUse hook of the first call, and its shell command. */
function writeInputs(home: string): { configDir: string; stateDir: string } {
  const configDir = join(home, 'claude');
  const stateDir = join(home, 'state');
  const startMs = Date.now() - HOUR_MS;
  appendTurns(sessionPath(configDir, SESSION), SESSION, 0, 3, startMs);
  appendTurns(sessionPath(configDir, 'session-2'), 'session-2', 0, 2, startMs);
  const toolUseId = /"tool_use","id":"(toolu_[^"]+)"/.exec(turnLines({ sessionId: SESSION, index: 0, startMs }).join('\n'))![1];
  mkdirSync(join(stateDir, 'spool'), { recursive: true });
  const payload = { session_id: SESSION, hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_input: { command: 'echo 0' }, tool_response: { stdout: '0' }, tool_use_id: toolUseId };
  writeFileSync(join(stateDir, 'spool', `${String(BigInt(startMs + 1_500) * 1_000_000n).padStart(20, '0')}-1-abc.json`), JSON.stringify(payload));
  mkdirSync(join(stateDir, 'shell'), { recursive: true });
  const shellLines = [
    { v: 1, ev: 'start', sid: SESSION, tp: '', pid: 4242, ppid: 100, pgid: 4242, psid: 4242, tty: '', cwd: '/home/dev/project', cmd: 'echo 0', cmdlen: 6, ts: (startMs + 1_100) * 1000, seq: 1 },
    { v: 1, ev: 'end', sid: SESSION, pid: 4242, seq: 1, ts: (startMs + 1_900) * 1000, status: 0, cwd: '/home/dev/project' },
  ];
  writeFileSync(join(stateDir, 'shell', `${SESSION}.jsonl`), shellLines.map((line) => `${JSON.stringify(line)}\n`).join(''));
  return { configDir, stateDir };
}

/** Claude Code's own span of an API request (as its OTLP export brings it to run's receiver). */
const nativeRequest = (requestId: string): TelemetryBatch => ({
  spans: [{
    origin: { resource: { 'service.name': 'claude-code' }, scopeName: 'com.anthropic.claude_code.tracing', scopeVersion: '1.0.0', spanKind: 'SPAN_KIND_INTERNAL', traceState: '', links: [] },
    traceId: 'd'.repeat(32), spanId: 'e'.repeat(16), parentSpanId: '', name: 'claude_code.llm_request', kind: 'internal', startMs: Date.now(), endMs: Date.now() + 100,
    status: 'unset', statusMessage: '', attributes: { 'session.id': SESSION, request_id: requestId }, events: [],
  }],
  logs: [],
  metrics: [],
});

/** What a span is, as a store would keep it: id, trace, parent, name and the names of the hook events on it. */
const spanKeys = (spans: SpanRecord[]) => spans.map((span) => `${span.traceId}/${span.spanId}/${span.parentSpanId} ${span.name} [${span.events.map((event) => event.name).join(',')}]`).sort();

describe('buildPipeline: run (follow) and backfill (once) through the one builder', () => {
  let home: string;
  let following: FollowPipeline | undefined;

  afterEach(async () => {
    await following?.stop();
    following = undefined;
    rmSync(home, { recursive: true, force: true });
  });

  it("gives the same spans, hook events and shell commands for the same input; joins Claude Code's own telemetry only following (reading once none comes)", async () => {
    home = mkdtempSync(join(tmpdir(), 'ccotel-build-'));
    const { configDir, stateDir } = writeInputs(home);
    const env = { HOME: home, CCOTEL_STATE_DIR: stateDir, CCOTEL_CONFIG: 'none' };
    const config = loadConfig({ store: '', idleMs: 1_000 }, env);

    // Once, keeping the spool, so the same events are there for the follow run after it.
    const onceSink = new MemorySink();
    const once = buildPipeline(config, { mode: 'once', sinks: [onceSink], keepSpool: true });
    await once.readSideInputs();
    const files = await discoverTranscripts(transcriptRoots({ ...env, CLAUDE_CONFIG_DIR: configDir }));
    expect(files).toHaveLength(2);
    for (const file of files) await ingestFile(once.pipeline, file, 0);
    await once.pipeline.finish();
    const onceSpans = spanKeys(onceSink.received.spans);
    const request = String(onceSink.received.spans.find((span) => span.name.startsWith('chat '))!.attributes.request_id);
    await once.pipeline.deliver(nativeRequest(request));
    expect(onceSink.received.spans.at(-1)!.origin?.links).toEqual([]);

    const followSink = new MemorySink();
    const checkpoints = new CheckpointStore(config.paths.checkpointDir, 'test');
    following = buildPipeline(config, { mode: 'follow', sinks: [followSink], roots: [join(configDir, 'projects')], checkpoints });
    await following.start();
    // Every turn is an hour old and the idle time is one second: the first idle ticks close them all.
    await waitFor('every span of the one-off read', () => followSink.received.spans.length >= onceSpans.length && following!.tailer.settled, 60_000);
    await waitFor('the spool consumed', () => readdirSync(join(stateDir, 'spool')).length === 0, 60_000);
    const followSpans = spanKeys(followSink.received.spans);
    await following.pipeline.deliver(nativeRequest(request));
    expect(followSink.received.spans.at(-1)!.origin?.links).toEqual([expect.objectContaining({ attributes: { [LINK_TYPE]: 'chat' } })]);
    await following.stop();
    following = undefined;

    expect(onceSpans.some((key) => key.includes('execute_tool Bash [PostToolUse]'))).toBe(true);
    expect(onceSink.received.spans.some((span) => span.attributes['process.pid'] === 4242)).toBe(true);
    expect(followSpans).toEqual(onceSpans);
  });

  it('following, writes the status beside the checkpoints (the sink state of the driver, files followed) and marks it stopped', async () => {
    home = mkdtempSync(join(tmpdir(), 'ccotel-build-'));
    const { configDir } = writeInputs(home);
    const config = loadConfig({ store: '', idleMs: 1_000 }, { HOME: home, CCOTEL_STATE_DIR: join(home, 'state'), CCOTEL_CONFIG: 'none' });
    const checkpoints = new CheckpointStore(config.paths.checkpointDir, 'test');
    const sink = new MemorySink();
    following = buildPipeline(config, { mode: 'follow', sinks: [sink], roots: [join(configDir, 'projects')], checkpoints, status: { store: '', otlpEndpoint: 'http://collector.invalid' } });
    await following.start();
    expect(checkpoints.loadStatus()).toMatchObject({ pid: process.pid, otlpEndpoint: 'http://collector.invalid', roots: [join(configDir, 'projects')] });
    await waitFor('every file delivered and committed', () => following!.tailer.settled && sink.received.spans.length > 0, 60_000);
    await following.stop();
    following = undefined;
    expect(checkpoints.loadStatus()).toMatchObject({ sink: { state: 'stopped' }, filesFollowed: 2 });
  });

  it('following, steers the heap as a backfill does while catching up, and gives it back once caught up', async () => {
    home = mkdtempSync(join(tmpdir(), 'ccotel-build-'));
    const { configDir } = writeInputs(home);
    const config = loadConfig({ store: '', idleMs: 1_000 }, { HOME: home, CCOTEL_STATE_DIR: join(home, 'state'), CCOTEL_CONFIG: 'none' });
    const checkpoints = new CheckpointStore(config.paths.checkpointDir, 'test');
    const budgets: number[] = [];
    let released = 0;
    const steerHeap = (budget: number) => {
      budgets.push(budget);
      return () => released++;
    };
    following = buildPipeline(config, { mode: 'follow', sinks: [new MemorySink()], roots: [join(configDir, 'projects')], checkpoints, status: { store: '', otlpEndpoint: '' }, steerHeap });
    await following.start();
    expect(budgets).toEqual([historyHeapBudget(undefined)]);
    await waitFor('the catch-up done', () => checkpoints.loadStatus()?.catchUp?.done === true, 60_000);
    expect(released).toBe(1);
    await following.stop();
    following = undefined;
    expect(released).toBe(1);
  });
});
