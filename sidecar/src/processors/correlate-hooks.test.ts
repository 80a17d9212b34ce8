// Hook correlation on real Claude Code 2.1.332 recordings (test/fixtures/real: transcripts and the hook payloads
// of the same runs). The recordings keep the hooks' order, not their firing times: each hook is placed at its
// prompt's time (plus its index in ms), a SessionStart just before the next prompt, which keeps every relation.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionStarted, ToolCallEnded, TurnEnded } from '../events.js';
import type { LogRecord, SpanRecord, TelemetryBatch } from '../model.js';
import { Pipeline } from '../pipeline.js';
import type { HookEvent } from '../records/hook-spool.js';
import { HookCorrelator } from './correlate-hooks.js';
import { encode } from './encode/index.js';
import { snakeCase } from './hook-input.js';
import { TranscriptCorrelator } from './transcripts/correlator.js';
import { parseTranscriptLine } from './parse-transcript.js';
import { MemorySink } from '../../../test/helpers/memory-sink.js';

const FIXTURES = join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'real');

function transcriptLines(scenario: string): { path: string; lines: string[] }[] {
  const root = join(FIXTURES, scenario, 'projects');
  const files: { path: string; lines: string[] }[] = [];
  for (const project of readdirSync(root)) {
    for (const name of readdirSync(join(root, project))) {
      if (name.endsWith('.jsonl')) files.push({ path: join(root, project, name), lines: readFileSync(join(root, project, name), 'utf8').split('\n').filter(Boolean) });
    }
  }
  return files;
}

function hookEvents(scenario: string, lines: string[], acked: string[]): HookEvent[] {
  const promptTimes = new Map<string, number>();
  for (const line of lines) {
    const row = JSON.parse(line) as { type?: string; promptId?: string; timestamp?: string; message?: { content?: unknown } };
    if (row.type === 'user' && row.promptId && typeof row.message?.content === 'string') promptTimes.set(row.promptId, Date.parse(row.timestamp!));
  }
  const dir = join(FIXTURES, scenario, 'hooks');
  const payloads = readdirSync(dir).sort().map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as Record<string, unknown>);
  // Interactive SessionEnd carries the prompt id of /exit, which has no prompt row: placed like a SessionStart.
  const times = payloads.map((payload, index) => {
    const promptTime = typeof payload.prompt_id === 'string' ? promptTimes.get(payload.prompt_id) : undefined;
    return promptTime === undefined ? undefined : promptTime + index;
  });
  return payloads.map((payload, index) => {
    const next = times.slice(index).find((time) => time !== undefined);
    const firedAtMs = times[index] ?? (next ?? Math.max(...times.filter((t) => t !== undefined).map(Number)) + 60_000) - 100 + index;
    const file = `${String(BigInt(firedAtMs) * 1_000_000n).padStart(20, '0')}-${index}-00000000.json`;
    return { file, firedAtMs, firedAtNs: file.slice(0, 20), hookPid: index, payload, ack: () => acked.push(file) };
  });
}

/** Backfill order: the spool first, then the transcripts, then the end of input (no hook comes late: no span kept for one). */
async function correlate(scenario: string, options: { hooks?: (events: HookEvent[]) => HookEvent[]; rewrite?: (line: string) => string } = {}) {
  const sink = new MemorySink();
  const hooks = new HookCorrelator({ contentLevel: 'masked', lateHooks: false });
  const transcripts = new TranscriptCorrelator();
  const pipeline = new Pipeline(transcripts, [], [sink], [hooks]);
  const acked: string[] = [];
  const files = transcriptLines(scenario);
  let events = files.flatMap((file) => hookEvents(scenario, file.lines, acked));
  events = options.hooks ? options.hooks(events) : events;
  for (const event of events) hooks.add(event);
  for (const file of files) {
    transcripts.readingFromStart(file.path);
    file.lines.forEach((line, index) => {
      const parsed = parseTranscriptLine(options.rewrite ? options.rewrite(line) : line);
      if (parsed.ok === true) transcripts.add(parsed.entry, { path: file.path, kind: 'main' }, index);
    });
  }
  await pipeline.finish();
  return { received: sink.received, acked, events, hooks };
}

const unique = <T extends { id: string }>(items: T[]) => [...new Map(items.map((item) => [item.id, item])).values()];
const toolSpans = (batch: TelemetryBatch) => batch.spans.filter((span) => span.name.startsWith('execute_tool '));
const turnRoots = (batch: TelemetryBatch) => batch.spans.filter((span) => span.name === 'invoke_agent claude-code');
const logsNamed = (batch: TelemetryBatch, name: string) => batch.logs.filter((log) => log.eventName === name);
const eventNames = (span: SpanRecord) => span.events.map((event) => event.name);

describe('HookCorrelator on real recordings', () => {
  it('puts tool hooks on the execute_tool span and turn hooks on the turn root, with trace context on their logs', async () => {
    const { received, acked, events } = await correlate('bash-success');
    const [bash] = toolSpans(received);
    expect(eventNames(bash)).toEqual(['PreToolUse', 'PostToolUse']);
    expect(bash.events[1].attributes.duration_ms).toBeTypeOf('number');
    const [root] = turnRoots(received);
    expect(eventNames(root)).toEqual(['UserPromptSubmit', 'PostToolBatch', 'Stop']);
    const pre = logsNamed(received, 'ccotel.hook.pre_tool_use');
    expect(pre).toHaveLength(1);
    expect(pre[0]).toMatchObject({ traceId: bash.traceId, spanId: bash.spanId });
    expect(pre[0].body).toContain('"command"');
    expect(logsNamed(received, 'ccotel.hook.stop')[0]).toMatchObject({ traceId: root.traceId, spanId: root.spanId });
    // Every hook is a log record, and every spool file is acknowledged once its output is out.
    const hookLogs = received.logs.filter((log) => log.eventName.startsWith('ccotel.hook.'));
    expect(hookLogs.map((log) => log.eventName).sort()).toEqual(events.map((e) => `ccotel.hook.${snakeCase(String(e.payload.hook_event_name))}`).sort());
    expect(acked.sort()).toEqual(events.map((event) => event.file).sort());
  });

  it('pairs PermissionRequest (no tool_use_id) with the PreToolUse before it; one block per denied call', async () => {
    const { received, hooks } = await correlate('permission-denied');
    const tools = toolSpans(received);
    expect(tools).toHaveLength(2);
    for (const span of tools) expect(eventNames(span)).toEqual(['PreToolUse', 'PermissionRequest']);
    const request = logsNamed(received, 'ccotel.hook.permission_request');
    expect(request.map((log) => log.attributes.tool_use_id).sort()).toEqual(tools.map((span) => span.attributes.tool_use_id).sort());
    const blocks = unique(logsNamed(received, 'ccotel.permission.blocked'));
    expect(blocks).toHaveLength(2);
    expect(unique(received.metrics.filter((point) => point.name === 'ccotel.permission.blocks'))).toHaveLength(2);
    expect(hooks.stats.late + hooks.stats.unmatched).toBe(0);
  });

  it('infers a block from the hooks when the transcript cannot tell, with the same id the transcript would use', async () => {
    // The denial's wording changed (unknown to the transcript rules): the transcript says "error".
    const { received } = await correlate('permission-denied');
    const reworded = await (async () => {
      const sink = new MemorySink();
      const hooks = new HookCorrelator({ contentLevel: 'masked' });
      const transcripts = new TranscriptCorrelator();
      const pipeline = new Pipeline(transcripts, [], [sink], [hooks]);
      const [file] = transcriptLines('permission-denied');
      for (const event of hookEvents('permission-denied', file.lines, [])) hooks.add(event);
      transcripts.readingFromStart(file.path);
      file.lines.forEach((line, index) => {
        const changed = line
          .replace(/needs approval/g, 'is not possible now')
          .replace(/you haven't granted it yet/g, 'it is not possible now')
          .replace(/"permissionDecision":\{[^}]*\},?/g, '')
          .replace(/"toolDenialKind":"[^"]*",?/g, '');
        const parsed = parseTranscriptLine(changed);
        if (parsed.ok === true) transcripts.add(parsed.entry, { path: file.path, kind: 'main' }, index);
      });
      await pipeline.finish();
      return sink.received;
    })();
    expect(toolSpans(reworded).map((span) => span.attributes['ccotel.tool.outcome'])).toEqual(['error', 'error']);
    const fromHooks = unique(logsNamed(reworded, 'ccotel.permission.blocked'));
    expect(fromHooks.map((log) => log.attributes.source)).toEqual(['user', 'user']);
    expect(fromHooks.every((log) => log.attributes['ccotel.block.origin'] === 'hook')).toBe(true);
    // The same call's block from the transcript has the same id: the two never count twice.
    expect(fromHooks.map((log) => log.id).sort()).toEqual(unique(logsNamed(received, 'ccotel.permission.blocked')).map((log) => log.id).sort());
  });

  it('interactive: a refusal is denied by its source; Esc during an allowed command is interrupted, not a block', async () => {
    const outcome = async (scenario: string) => {
      const { received } = await correlate(`2.1.332-interactive/${scenario}`);
      const blocks = unique(logsNamed(received, 'ccotel.permission.blocked')).map((log) => log.attributes.source);
      return { outcomes: toolSpans(received).map((span) => span.attributes['ccotel.tool.outcome']), blocks };
    };
    expect(await outcome('deny')).toEqual({ outcomes: ['denied'], blocks: ['user'] });
    expect(await outcome('auto-mode-blocked')).toEqual({ outcomes: ['denied'], blocks: ['classifier'] });
    // Its PermissionRequest has no PostToolUse after it (the user said yes, then Esc): the transcript knows better.
    expect(await outcome('esc-while-running')).toEqual({ outcomes: ['interrupted'], blocks: [] });
  });

  it('takes a PermissionDenied hook for auto mode’s refusal when the transcript cannot tell', async () => {
    const { received } = await correlate('2.1.332-interactive/auto-mode-blocked', {
      rewrite: (line) => line.replace(/"permissionDecision":\{[^}]*\},?/g, '').replace(/"toolDenialKind":"[^"]*",?/g, '').replace(/auto mode's safety check/g, 'a check'),
    });
    expect(toolSpans(received).map((span) => span.attributes['ccotel.tool.outcome'])).toEqual(['error']);
    expect(unique(logsNamed(received, 'ccotel.permission.blocked')).map((log) => [log.attributes.source, log.attributes['ccotel.block.origin']])).toEqual([
      ['classifier', 'hook'],
    ]);
  });

  it('merges the hook SessionStart with the transcript start of the same prompt: one start each, the hook source', async () => {
    const { received } = await correlate('resume');
    const starts = unique(logsNamed(received, 'ccotel.session.started'));
    expect(starts.map((log) => log.attributes.source)).toEqual(['startup', 'resume']);
    expect(starts.every((log) => log.attributes['ccotel.start.origin'] === 'hook')).toBe(true);
    const points = unique(received.metrics.filter((point) => point.name === 'ccotel.session.starts'));
    expect(points.map((point) => point.attributes.source)).toEqual(['startup', 'resume']);
    const ends = unique(received.metrics.filter((point) => point.name === 'ccotel.session.ends'));
    expect(ends.map((point) => point.attributes.reason)).toEqual(['other', 'other']);
  });

  it('reports a start the transcript cannot see (compact) once, under the next prompt', async () => {
    const { received } = await correlate('resume', {
      // The second run's SessionStart says compact: the transcript calls that prompt a resume.
      hooks: (events) => events.map((event, index) => (index === 8 ? { ...event, payload: { ...event.payload, source: 'compact' } } : event)),
    });
    const starts = unique(logsNamed(received, 'ccotel.session.started'));
    expect(starts.map((log) => log.attributes.source)).toEqual(['startup', 'compact']);
  });

  /** The hooks of bash-success added after its tool span went out. */
  async function hooksAfterTheSpan(lateHooks?: boolean) {
    const sink = new MemorySink();
    const hooks = new HookCorrelator({ contentLevel: 'masked', lateHooks });
    const transcripts = new TranscriptCorrelator();
    const pipeline = new Pipeline(transcripts, [], [sink], [hooks]);
    const [file] = transcriptLines('bash-success');
    transcripts.readingFromStart(file.path);
    // Without the rows that say the turn is over, so the turn is still open when the hooks come.
    file.lines.filter((line) => !line.includes('"subtype":"stop_hook_summary"') && !line.includes('"type":"cost-state"')).forEach((line, index) => {
      const parsed = parseTranscriptLine(line);
      if (parsed.ok === true) transcripts.add(parsed.entry, { path: file.path, kind: 'main' }, index);
    });
    await pipeline.flush(); // the tool span is out, the turn is still open
    const [bash] = toolSpans(sink.received);
    for (const event of hookEvents('bash-success', file.lines, [])) hooks.add(event);
    await pipeline.finish();
    return { sink, hooks, bash };
  }

  it('turns a hook whose span already went out into a log record with that span context (late)', async () => {
    const { sink, hooks, bash } = await hooksAfterTheSpan();
    expect(hooks.stats.late).toBe(2);
    const late: LogRecord[] = logsNamed(sink.received, 'ccotel.hook.post_tool_use');
    expect(late[0]).toMatchObject({ traceId: bash.traceId, spanId: bash.spanId });
    expect(eventNames(turnRoots(sink.received)[0])).toContain('Stop');
  });

  it('reading once (every hook read before the transcripts) keeps no span out for a late hook', async () => {
    const { hooks } = await hooksAfterTheSpan(false);
    expect(hooks.stats.late).toBe(0);
    expect(hooks.stats.unmatched).toBe(2);
  });
});

describe('HookCorrelator and forks', () => {
  const session = 'f0f0f0f0-0000-4000-8000-000000000003';
  const forkedAtMs = Date.UTC(2026, 7, 2, 10, 0, 0);
  // The transcript reports a fork's start at its first copied row: the original's time, hours before the fork.
  const startedAtMs = forkedAtMs - 3 * 3_600_000;
  const transcriptStart = (): SessionStarted => ({
    kind: 'SessionStarted', sessionId: session, source: 'fork', messageUuid: 'copied-row', timeMs: startedAtMs,
  });
  const firstTurn = (): TurnEnded => ({
    kind: 'TurnEnded', traceId: 't'.repeat(32), spanId: 's'.repeat(16), sessionId: session, promptId: 'prompt-1', messageUuid: 'prompt-row', promptText: 'go on',
    outcome: 'completed', startMs: forkedAtMs + 500, endMs: forkedAtMs + 9_000,
  });
  const sessionStart = (): HookEvent => ({
    file: `${String(BigInt(forkedAtMs) * 1_000_000n).padStart(20, '0')}-7-00000000.json`, firedAtMs: forkedAtMs, firedAtNs: String(BigInt(forkedAtMs) * 1_000_000n), hookPid: 7,
    payload: { session_id: session, transcript_path: '/t.jsonl', cwd: '/p', hook_event_name: 'SessionStart', source: 'fork' }, ack: () => undefined,
  });
  it('merges the fork SessionStart into the transcript start stamped with the copied row (hook read first)', () => {
    const hooks = new HookCorrelator({ contentLevel: 'masked' });
    hooks.add(sessionStart());
    hooks.observe([transcriptStart()]);
    hooks.observe([firstTurn()]);
    hooks.finish();
    const { events } = hooks.drain();
    expect(logsNamed(encode(events), 'ccotel.session.started')).toEqual([]);
    // What the hook adds to the transcript's start is applied to it by the encoder, as it encodes the start.
    const merged = logsNamed(encode([transcriptStart(), ...events]), 'ccotel.session.started');
    expect(merged).toHaveLength(1);
    expect(merged[0].attributes['ccotel.start.origin']).toBe('hook');
  });

  it('adds no second start when the fork SessionStart is read after the transcript start (live)', () => {
    const hooks = new HookCorrelator({ contentLevel: 'masked' });
    hooks.observe([transcriptStart()]);
    hooks.add(sessionStart());
    hooks.observe([firstTurn()]);
    hooks.finish();
    const batch = encode(hooks.drain().events);
    expect(logsNamed(batch, 'ccotel.session.started')).toEqual([]);
    expect(batch.metrics.filter((point) => point.name === 'ccotel.session.starts')).toEqual([]);
    expect(logsNamed(batch, 'ccotel.hook.session_start')).toHaveLength(1);
  });
});

describe('HookCorrelator on correlation events (no spans)', () => {
  const session = 'e0e0e0e0-0000-4000-8000-000000000004';
  const atMs = Date.UTC(2026, 7, 3, 9, 0, 0);
  const hook = (name: string, offsetMs: number, payload: Record<string, unknown>): HookEvent => {
    const firedAtNs = String(BigInt(atMs + offsetMs) * 1_000_000n);
    return {
      file: `${firedAtNs.padStart(20, '0')}-${offsetMs}-00000000.json`, firedAtMs: atMs + offsetMs, firedAtNs, hookPid: offsetMs,
      payload: { session_id: session, transcript_path: '/t.jsonl', cwd: '/p', hook_event_name: name, ...payload }, ack: () => undefined,
    };
  };
  const call = (outcome: string): ToolCallEnded => ({
    kind: 'ToolCallEnded', traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), sessionId: session, toolUseId: 'toolu_9', toolName: 'Bash', input: { command: 'rm -rf build' },
    outcome, startMs: atMs, endMs: atMs + 2_000, endedAtMs: atMs + 2_000, parentSpanId: 'e'.repeat(16),
  });
  const tool = { tool_name: 'Bash', tool_input: { command: 'rm -rf build' }, tool_use_id: 'toolu_9' };

  it("publishes a call's hooks as HookAttached on its span when ToolCallEnded comes, and the block they tell", () => {
    const hooks = new HookCorrelator({ contentLevel: 'masked' });
    hooks.add(hook('PreToolUse', 10, tool));
    hooks.add(hook('PermissionDenied', 20, { ...tool, reason: 'auto mode' }));
    expect(hooks.drain().events.map((event) => event.kind)).toEqual(['HookFired', 'HookFired']); // waiting for the call's span
    hooks.observe([call('error')]);
    const { events } = hooks.drain();
    const batch = encode(events);
    expect(events.map((event) => event.kind)).toEqual(['HookAttached', 'HookRecorded', 'HookAttached', 'HookRecorded', 'PermissionBlocked']);
    expect(events.flatMap((event) => (event.kind === 'HookAttached' ? [[event.spanId, event.event.name]] : []))).toEqual([
      ['d'.repeat(16), 'PreToolUse'],
      ['d'.repeat(16), 'PermissionDenied'],
    ]);
    expect(batch.spans).toEqual([]);
    expect(logsNamed(batch, 'ccotel.hook.pre_tool_use')[0]).toMatchObject({ traceId: 'c'.repeat(32), spanId: 'd'.repeat(16) });
    expect(logsNamed(batch, 'ccotel.permission.blocked').map((log) => log.attributes.source)).toEqual(['classifier']);
  });

  it("leaves the transcript's verdict alone: no block for a call it saw denied", () => {
    const hooks = new HookCorrelator({ contentLevel: 'masked' });
    hooks.add(hook('PreToolUse', 10, tool));
    hooks.add(hook('PermissionDenied', 20, tool));
    hooks.observe([call('denied')]);
    expect(logsNamed(encode(hooks.drain().events), 'ccotel.permission.blocked')).toEqual([]);
  });
});
