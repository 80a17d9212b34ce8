// The recorded Codex TUI session with approvals (codex-tui.ts) through the pipeline as `ccotel run` builds it: the
// rollouts, the hooks and Codex's own OTel together. The user declined one escalation, approved another, and approved a
// third then interrupted it while it ran; ccotel tells the first denied by the user (one permission block, source
// user), the second a success, the third interrupted — from the rollout where it can tell (0.171: the declined command
// never ran, the interrupted one did), else from the hooks (0.130: its "aborted by user" is both's; the refusal was
// asked for and never run) and Codex's telemetry (the interrupted call was asked for and never ran to its
// PostToolUse too, but Codex logged its approval).
import { describe, expect, it, onTestFinished } from 'vitest';
import type { SpanRecord, TelemetryBatch } from '../../sidecar/src/model.js';
import { Pipeline } from '../../sidecar/src/pipeline.js';
import { HookCorrelator } from '../../sidecar/src/processors/correlate-hooks.js';
import { TelemetryGapDetector } from '../../sidecar/src/processors/detectors/telemetry-gap.js';
import { NATIVE_ATTRIBUTES, NativeJoin } from '../../sidecar/src/processors/native-join.js';
import { receivedLogs } from '../../sidecar/src/sources/otlp-received.js';
import { flattenLogs } from '../harness/otlp-receiver.js';
import { TranscriptCorrelator } from '../../sidecar/src/processors/transcripts/correlator.js';
import type { HookEvent } from '../../sidecar/src/records/hook-spool.js';
import { EVENTS, METRICS } from '../../sidecar/src/semconv.js';
import { FailureModeDetector } from '../../sidecar/src/processors/detectors/index.js';
import { CodexRollouts } from '../../sidecar/src/sources/codex/rollouts.js';
import { textLines } from '../../sidecar/src/sources/line-reader.js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { codexTuiFixtures, type CodexTuiFixture } from '../harness/codex-fixtures.js';
import { MemorySink } from '../helpers/memory-sink.js';
import { nativeDialects } from '../../sidecar/src/sources/native-telemetry.js';

/** The recorded hook payloads as the spool hook `install-hooks --agent codex` registers hands them on: named Codex's. */
function hookEvents(fixture: CodexTuiFixture): HookEvent[] {
  return fixture.hooks.map(({ firedAtNs, payload }, index) => ({
    file: `${index}-00000000-0000-1-codex.json`,
    firedAtMs: Number(BigInt(firedAtNs) / 1_000_000n),
    firedAtNs,
    hookPid: index,
    agent: 'codex',
    payload,
    ack: () => undefined,
  }));
}

interface Inputs {
  hooks?: boolean;
  /** Codex's own log exports, received before the rollouts are read (as `run`'s receiver gets them live). */
  otelLogs?: unknown[];
  /** Give up on the hooks still waiting for their call once the rollouts are read, before the threads end (live: idle). */
  giveUpHooks?: boolean;
}

/** The hooks and Codex's telemetry first, then the rollouts, then the end of input; the gaps found once all is in. */
async function throughPipeline(fixture: CodexTuiFixture, inputs: Inputs): Promise<TelemetryBatch & { gaps: TelemetryBatch }> {
  const sink = new MemorySink();
  const hooks = new HookCorrelator({ contentLevel: 'masked', lateHooks: false, dialects: nativeDialects() });
  const gaps = new TelemetryGapDetector(nativeDialects(), 0, 0);
  const pipeline = new Pipeline(new TranscriptCorrelator(), [new NativeJoin(nativeDialects()), gaps], [sink], inputs.hooks ? [hooks] : [], { codex: new CodexRollouts() });
  if (inputs.hooks) for (const event of hookEvents(fixture)) hooks.add(event);
  for (const body of inputs.otelLogs ?? []) pipeline.add(receivedLogs(body).batch);
  for (const path of fixture.rollouts) await pipeline.addLines({ path, kind: 'main', agent: 'codex' }, textLines(readFileSync(path, 'utf8').split('\n').filter(Boolean)));
  if (inputs.giveUpHooks) {
    hooks.expire(Number.POSITIVE_INFINITY);
    await pipeline.flush();
  }
  await pipeline.finish();
  return { ...sink.received, gaps: gaps.check() };
}

const toolSpan = (batch: TelemetryBatch, callId: string): SpanRecord | undefined =>
  batch.spans.find((span) => span.name.startsWith('execute_tool ') && span.attributes['gen_ai.tool.call.id'] === callId);
const blocks = (batch: TelemetryBatch) => [...new Map(batch.logs.filter((log) => log.eventName === EVENTS.permissionBlocked).map((log) => [log.id, log])).values()];

describe.each(codexTuiFixtures())('the Codex $version TUI session through the pipeline', (fixture) => {
  const [, declinedStep, approvedStep, , cutStep] = fixture.answered;
  const [declined, approved, cut] = [declinedStep.callIds[0], approvedStep.callIds[0], cutStep.callIds[0]];
  const outcomes = (batch: TelemetryBatch) => [declined, approved, cut].map((callId) => toolSpan(batch, callId)?.attributes['ccotel.tool.outcome']);
  const rolloutTells = fixture.version !== '0.130.0';

  it('tells the declined escalation denied by the user (one block) and the approved one a success, with its hooks', async () => {
    const received = await throughPipeline(fixture, { hooks: true });
    // The hooks alone cannot tell the approved-then-interrupted call from a refusal (asked for, never run): only
    // 0.171's rollout can (the command ran); Codex's telemetry can (below).
    expect(outcomes(received)).toEqual(['denied', 'success', rolloutTells ? 'interrupted' : 'denied']);
    expect(blocks(received).map((log) => [log.attributes.tool_use_id, log.attributes.source])).toEqual(rolloutTells ? [[declined, 'user']] : [[declined, 'user'], [cut, 'user']]);
    // The hooks are on their calls: the PermissionRequest (which names no call) on the one it asked about.
    const hookNames = (callId: string) => toolSpan(received, callId)?.events.map((event) => event.name);
    expect(hookNames(declined)).toEqual(['PreToolUse', 'PermissionRequest']);
    expect(hookNames(approved)).toEqual(['PreToolUse', 'PermissionRequest', 'PostToolUse']);
    expect(hookNames(cut)).toEqual(['PreToolUse', 'PermissionRequest']);
  });

  it('tells the call approved then interrupted while it ran interrupted, not refused, once Codex’s telemetry says it was approved', async () => {
    const received = await throughPipeline(fixture, { hooks: true, otelLogs: fixture.otelLogs });
    expect(outcomes(received)).toEqual(['denied', 'success', 'interrupted']);
    expect(blocks(received).map((log) => log.attributes.tool_use_id)).toEqual([declined]);
    expect(toolSpan(received, cut)?.attributes[NATIVE_ATTRIBUTES.decision]).toBe('approved');
  });

  it.skipIf(!rolloutTells)('tells the call approved then interrupted interrupted even when Codex never wrote its item (seen live under load), once its telemetry says it was approved', async () => {
    // Without the item, the rollout tells a command that never ran: declined, as far as it can tell.
    const withoutItem = { ...fixture, rollouts: rolloutsWithout(fixture, (line) => line.includes('"item_') && line.includes(`"id":"${cut}"`)) };
    const alone = await throughPipeline(withoutItem, { hooks: true });
    expect(outcomes(alone)).toEqual(['denied', 'success', 'denied']);
    for (const giveUpHooks of [false, true]) {
      const told = await throughPipeline(withoutItem, { hooks: true, otelLogs: fixture.otelLogs, giveUpHooks });
      expect(outcomes(told), `hooks given up: ${giveUpHooks}`).toEqual(['denied', 'success', 'interrupted']);
      expect(blocks(told).map((log) => log.attributes.tool_use_id)).toEqual([declined]);
    }
  });

  it('without the hooks, tells the refusal only where the rollout can (0.171), never a refusal for the approved calls', async () => {
    const received = await throughPipeline(fixture, {});
    expect(outcomes(received)).toEqual([rolloutTells ? 'denied' : 'interrupted', 'success', 'interrupted']);
    expect(blocks(received).map((log) => log.attributes.tool_use_id)).toEqual(rolloutTells ? [declined] : []);
  });

  it('joins every response Codex exported to its chat and every tool decision to its call, which agrees with the user’s; no telemetry gap', async () => {
    const received = await throughPipeline(fixture, { hooks: true, otelLogs: fixture.otelLogs });
    const chats = received.spans.filter((span) => span.name.startsWith('chat '));
    expect(chats).toHaveLength(fixture.answered.length);
    // Codex's own: a request per answer of the server in this thread, and its response's counts (the title
    // request of the TUI is another conversation, which no rollout holds).
    const thread = chats[0].attributes['session.id'];
    const events = flattenLogs(fixture.otelLogs).map((log) => log.attributes).filter((a) => a['conversation.id'] === thread);
    const requests = events.filter((a) => a['event.name'] === 'codex.api_request');
    expect(requests).toHaveLength(fixture.answered.length);
    for (const [n, chat] of chats.entries()) expect(chat.attributes[NATIVE_ATTRIBUTES.apiDurationMs]).toBe(Number(requests[n].duration_ms));
    const decisions = events.filter((a) => a['event.name'] === 'codex.tool_decision');
    // The approvals are Codex's decisions; the refusal (Esc: abort) it does not log as one.
    expect(decisions.map((a) => [a.call_id, a.decision, a.source])).toEqual([[approved, 'approved', 'User'], [cut, 'approved', 'User']]);
    expect(toolSpan(received, approved)?.attributes).toMatchObject({ [NATIVE_ATTRIBUTES.decision]: 'approved', [NATIVE_ATTRIBUTES.decisionSource]: 'User', 'ccotel.tool.outcome': 'success' });
    expect(toolSpan(received, declined)?.attributes[NATIVE_ATTRIBUTES.decision]).toBeUndefined();
    expect(received.gaps.logs).toEqual([]);
  });

  it('tells a telemetry gap when a response’s events never came', async () => {
    // The counts of the approved call's first response lost from the export.
    const lost = fixture.otelLogs.map((body) => dropLogs(body, (a) => a['event.name'] !== 'codex.user_prompt' && a['input_token_count'] === '1500'));
    const received = await throughPipeline(fixture, { otelLogs: lost });
    expect(received.gaps.logs.map((log) => log.attributes.cause)).toEqual(['not_exported']);
    // Its point is Codex's, as its telemetry is.
    expect(received.gaps.metrics.map((point) => point.attributes['gen_ai.agent.name'])).toEqual(['codex']);
  });
});

/** Copies of the fixture's rollouts without the lines `drop` picks (removed when the test ends). */
function rolloutsWithout(fixture: CodexTuiFixture, drop: (line: string) => boolean): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'ccotel-codex-tui-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return fixture.rollouts.map((path) => {
    const copy = join(dir, basename(path));
    writeFileSync(copy, readFileSync(path, 'utf8').split('\n').filter((line) => !drop(line)).join('\n'));
    return copy;
  });
}

/** An OTLP/JSON logs body without the records `drop` picks (by their attributes). */
function dropLogs(body: unknown, drop: (attributes: Record<string, unknown>) => boolean): unknown {
  const copy = structuredClone(body) as { resourceLogs: { scopeLogs: { logRecords: { attributes: { key: string; value: { stringValue?: string } }[] }[] }[] }[] };
  for (const resource of copy.resourceLogs) {
    for (const scope of resource.scopeLogs) {
      scope.logRecords = scope.logRecords.filter((record) => !drop(Object.fromEntries(record.attributes.map((kv) => [kv.key, kv.value.stringValue ?? kv.value]))));
    }
  }
  return copy;
}

describe.each(codexTuiFixtures())('the agent of what the Codex $version hooks tell', (fixture) => {
  const agents = (batch: TelemetryBatch, name: string) => batch.metrics.filter((point) => point.name === name).map((point) => point.attributes['gen_ai.agent.name']);

  it('is Codex whether the hooks are read before the thread’s rollout or after it', async () => {
    // `run` reads the spool and the rollouts as they come: here every hook is delivered before the first rollout row.
    const sink = new MemorySink();
    const hooks = new HookCorrelator({ contentLevel: 'masked' });
    const pipeline = new Pipeline(new TranscriptCorrelator(), [], [sink], [hooks], { codex: new CodexRollouts() });
    for (const event of hookEvents(fixture)) hooks.add(event);
    await pipeline.flush();
    for (const path of fixture.rollouts) await pipeline.addLines({ path, kind: 'main', agent: 'codex' }, textLines(readFileSync(path, 'utf8').split('\n').filter(Boolean)));
    await pipeline.finish();
    // 0.171's SessionEnd hook tells the session's end (0.130 fires none).
    const ended = fixture.hooks.some((hook) => hook.payload.hook_event_name === 'SessionEnd');
    expect(agents(sink.received, METRICS.sessionEnds.name)).toEqual(ended ? ['codex'] : []);
    expect(new Set(sink.received.metrics.map((point) => point.attributes['gen_ai.agent.name']))).toEqual(new Set(['codex']));
  });

  it('is Codex for a session whose rollout is never read: its refusal, and its abandonment found by silence', async () => {
    // The hooks up to the declined escalation's PermissionRequest: then nothing (no rollout here, no SessionEnd).
    const all = hookEvents(fixture);
    const asked = all.findIndex((event) => event.payload.hook_event_name === 'PermissionRequest');
    const sink = new MemorySink();
    const detector = new FailureModeDetector({ idleMs: 1 }); // silent at once: the recording is over, whenever it was made
    const hooks = new HookCorrelator({ contentLevel: 'masked', listeners: [detector.onHook], lateHooks: false });
    const pipeline = new Pipeline(new TranscriptCorrelator(), [], [sink], [hooks, detector], { codex: new CodexRollouts() });
    for (const event of all.slice(0, asked + 1)) hooks.add(event);
    await pipeline.finish();
    expect(agents(sink.received, METRICS.permissionBlocks.name)).toEqual(['codex']);
    expect(agents(sink.received, METRICS.failureModes.name)).toEqual(['codex']);
    expect(sink.received.metrics.find((point) => point.name === METRICS.sessionEnds.name)?.attributes).toMatchObject({ reason: 'abandoned', 'gen_ai.agent.name': 'codex' });
  });
});
