// The committed Codex fixtures are what the real CLI writes: each release found in the cache (codex-releases.ts;
// none: skipped, as on a machine that never fetched one) is driven through the scenario again, and its new rollouts
// tell the same turns, calls and usage as the committed ones (ids and times aside); so does the TUI session.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CorrelationEvent } from '../../sidecar/src/events.js';
import { CodexRollouts } from '../../sidecar/src/sources/codex/rollouts.js';
import { codexFixture, codexFixtures, codexTuiFixture, codexTuiFixtures, type CodexFixture } from './codex-fixtures.js';
import { recordCodexTui, TUI_STALLS_AT_START } from './codex-tui.js';
import { cachedCodex } from './codex-releases.js';
import { recordCodex } from './codex-scenario.js';

/** What the rollouts tell, without ids or times: per event kind, its facts in order. */
function told(fixture: Pick<CodexFixture, 'rollouts'>) {
  const rollouts = new CodexRollouts();
  for (const path of fixture.rollouts) {
    for (const line of readFileSync(path, 'utf8').split('\n')) if (line) rollouts.add(line, { path, kind: 'main', agent: 'codex' });
  }
  rollouts.finish();
  const events: CorrelationEvent[] = rollouts.drain();
  return events.map((event) => {
    if (event.kind === 'TurnEnded') return [event.kind, event.promptText, event.outcome, event.version];
    if (event.kind === 'ChatCompleted') return [event.kind, event.model, event.tokens];
    // The agent tools' arguments name thread ids, new in every recording.
    if (event.kind === 'ToolCallEnded') return [event.kind, event.toolName, event.toolName === 'exec_command' ? event.input : Object.keys(event.input as object), event.outcome];
    if (event.kind === 'SessionStarted') return [event.kind, event.source];
    return [event.kind];
  });
}

describe.each(codexFixtures().map((fixture) => ({ fixture, binary: cachedCodex(fixture.version) })))('Codex $fixture.version recorded again', ({ fixture, binary }) => {
  it.skipIf(binary === undefined)('tells what the committed fixture tells', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ccotel-codex-again-'));
    try {
      const out = join(dir, fixture.version);
      await recordCodex(binary!, fixture.version, out);
      const again = codexFixture(out, fixture.version);
      expect(again.rollouts).toHaveLength(fixture.rollouts.length);
      expect(told(again)).toEqual(told(fixture));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe.each(codexTuiFixtures().filter((fixture) => !TUI_STALLS_AT_START.has(fixture.version)).map((fixture) => ({ fixture, binary: cachedCodex(fixture.version) })))('Codex $fixture.version TUI session recorded again', ({ fixture, binary }) => {
  it.skipIf(binary === undefined)('tells what the committed fixture tells', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ccotel-codex-again-'));
    try {
      const out = join(dir, 'tui');
      await recordCodexTui(binary!, fixture.version, out);
      const again = codexTuiFixture(out);
      expect(told(again)).toEqual(told(fixture));
      expect(again.hooks.map((hook) => hook.payload.hook_event_name)).toEqual(fixture.hooks.map((hook) => hook.payload.hook_event_name));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('the recording script', () => {
  // It runs outside vitest (vite-node), so nothing it imports may import vitest: once one did, every re-recording
  // failed with "Vitest failed to access its internal state".
  it('runs outside vitest, and says what it takes when given no release', () => {
    const script = join(import.meta.dirname, 'record-codex.ts');
    const run = spawnSync(process.execPath, [join(import.meta.dirname, '../../node_modules/vite-node/vite-node.mjs'), script, 'latest'], { encoding: 'utf8' });
    expect(run.stderr).not.toContain('Vitest');
    expect(run.stderr).toContain('not a release: latest');
    expect(run.status).toBe(2);
  }, 60_000);
});
