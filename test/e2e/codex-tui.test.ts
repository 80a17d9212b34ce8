// The recorded Codex TUI session with approvals (codex-tui.ts) through the pipeline as `ccotel run` builds it: the
// rollouts, the hooks and Codex's own OTel together. The user declined one escalation and approved another; ccotel
// tells the first denied by the user (one permission block, source user), the second a success — from the rollout
// where it can tell (0.171: the declined command never ran), from the hooks where it cannot (0.130: its "aborted by
// user" is an interrupt's too).
import { describe, expect, it } from 'vitest';
import type { SpanRecord, TelemetryBatch } from '../../sidecar/src/model.js';
import { Pipeline } from '../../sidecar/src/pipeline.js';
import { HookCorrelator } from '../../sidecar/src/processors/correlate-hooks.js';
import { TranscriptCorrelator } from '../../sidecar/src/processors/transcripts/correlator.js';
import type { HookEvent } from '../../sidecar/src/records/hook-spool.js';
import { EVENTS } from '../../sidecar/src/semconv.js';
import { CodexRollouts } from '../../sidecar/src/sources/codex/rollouts.js';
import { textLines } from '../../sidecar/src/sources/line-reader.js';
import { readFileSync } from 'node:fs';
import { codexTuiFixtures, type CodexTuiFixture } from '../harness/codex-fixtures.js';
import { MemorySink } from '../helpers/memory-sink.js';

function hookEvents(fixture: CodexTuiFixture): HookEvent[] {
  return fixture.hooks.map(({ firedAtNs, payload }, index) => ({
    file: `${firedAtNs}-${index}-00000000.json`,
    firedAtMs: Number(BigInt(firedAtNs) / 1_000_000n),
    firedAtNs,
    hookPid: index,
    payload,
    ack: () => undefined,
  }));
}

/** Backfill order: the hooks first, then the rollouts, then the end of input. */
async function throughPipeline(fixture: CodexTuiFixture, withHooks: boolean): Promise<TelemetryBatch> {
  const sink = new MemorySink();
  const hooks = new HookCorrelator({ contentLevel: 'masked', lateHooks: false });
  const pipeline = new Pipeline(new TranscriptCorrelator(), [], [sink], withHooks ? [hooks] : [], { codex: new CodexRollouts() });
  if (withHooks) for (const event of hookEvents(fixture)) hooks.add(event);
  for (const path of fixture.rollouts) await pipeline.addLines({ path, kind: 'main', agent: 'codex' }, textLines(readFileSync(path, 'utf8').split('\n').filter(Boolean)));
  await pipeline.finish();
  return sink.received;
}

const toolSpan = (batch: TelemetryBatch, callId: string): SpanRecord | undefined =>
  batch.spans.find((span) => span.name.startsWith('execute_tool ') && span.attributes['gen_ai.tool.call.id'] === callId);
const blocks = (batch: TelemetryBatch) => [...new Map(batch.logs.filter((log) => log.eventName === EVENTS.permissionBlocked).map((log) => [log.id, log])).values()];

describe.each(codexTuiFixtures())('the Codex $version TUI session through the pipeline', (fixture) => {
  const [, declinedStep, approvedStep] = fixture.answered;
  const [declined, approved] = [declinedStep.callIds[0], approvedStep.callIds[0]];

  it('tells the declined escalation denied by the user (one block) and the approved one a success, with its hooks', async () => {
    const received = await throughPipeline(fixture, true);
    expect(toolSpan(received, declined)?.attributes['ccotel.tool.outcome']).toBe('denied');
    expect(toolSpan(received, approved)?.attributes['ccotel.tool.outcome']).toBe('success');
    expect(blocks(received).map((log) => [log.attributes.tool_use_id, log.attributes.source])).toEqual([[declined, 'user']]);
    // The hooks are on their calls: the PermissionRequest (which names no call) on the one it asked about.
    const hookNames = (callId: string) => toolSpan(received, callId)?.events.map((event) => event.name);
    expect(hookNames(declined)).toEqual(['PreToolUse', 'PermissionRequest']);
    expect(hookNames(approved)).toEqual(['PreToolUse', 'PermissionRequest', 'PostToolUse']);
  });

  it('without the hooks, tells the refusal only where the rollout can (0.171), never a refusal for the approved call', async () => {
    const received = await throughPipeline(fixture, false);
    const rolloutTells = fixture.version !== '0.130.0';
    expect(toolSpan(received, declined)?.attributes['ccotel.tool.outcome']).toBe(rolloutTells ? 'denied' : 'interrupted');
    expect(blocks(received).map((log) => log.attributes.tool_use_id)).toEqual(rolloutTells ? [declined] : []);
    expect(toolSpan(received, approved)?.attributes['ccotel.tool.outcome']).toBe('success');
  });
});
