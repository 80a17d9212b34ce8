// A compaction, from the real CLI of each cached release (codex-releases.ts; none: skipped, failing under CI): with
// `model_auto_compact_token_limit` below what a response reports, Codex compacts the thread in the middle of the turn
// (its summary is a request of its own, answered by the scripted server) and writes a `compacted` row — 0.130 also a
// `context_compacted` event for the same compaction. The source tells it once, on its turn, and the summary's chat.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CorrelationEvent } from '../../sidecar/src/events.js';
import { CodexRollouts } from '../../sidecar/src/sources/codex/rollouts.js';
import { codexForTests, CODEX_VERSIONS } from '../harness/codex-releases.js';
import { startResponsesServer } from '../harness/responses-server.js';
import { rolloutFiles, runCodex, writeCodexConfig } from '../harness/run-codex.js';
import { skipWithout } from '../helpers/real-parts.js';
import { codexTestHome } from '../helpers/codex-test-home.js';

const COMPACT_AT_TOKENS = 5_000;
const large = { input_tokens: 9_000, cached_input_tokens: 0, output_tokens: 10, reasoning_output_tokens: 0 };

describe.each(CODEX_VERSIONS.map((version) => ({ version, binary: codexForTests(version) })))('a compaction on Codex $version', ({ version, binary }) => {
  it.skipIf(skipWithout(binary === undefined ? `Codex ${version} is not cached (npx vite-node test/harness/record-codex.ts ${version})` : undefined))(
    'is told once, on its turn, and its summary request is a chat of the turn',
    async () => {
      const { codexHome, project } = codexTestHome('ccotel-codex-compact');
      const server = await startResponsesServer([]);
      try {
        writeCodexConfig(codexHome, server.url);
        const config = join(codexHome, 'config.toml');
        writeFileSync(config, `model_auto_compact_token_limit = ${COMPACT_AT_TOKENS}\n${readFileSync(config, 'utf8')}`);
        // A call, then (over the limit) the compaction's summary, then the answer.
        server.addSteps([{ calls: [{ name: 'exec_command', arguments: { cmd: 'echo hi' } }], usage: large }, { text: 'What happened so far.', usage: large }, { text: 'Done.', usage: large }]);
        const run = await runCodex({ binary: binary!, codexHome, cwd: project, prompt: 'run it' });
        expect(run.code, run.stderr).toBe(0);
        expect(server.remainingSteps()).toBe(0);

        const rollouts = new CodexRollouts();
        const rows = rolloutFiles(codexHome).flatMap((path) => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((line) => ({ line, path })));
        expect(rows.some(({ line }) => line.includes('"type":"compacted"'))).toBe(true);
        for (const { line, path } of rows) rollouts.add(line, { path, kind: 'main', agent: 'codex' });
        rollouts.finish();
        const events: CorrelationEvent[] = rollouts.drain();
        const [turn] = events.filter((event) => event.kind === 'TurnEnded');
        const compactions = events.filter((event) => event.kind === 'CompactionOccurred');
        expect(compactions.map((event) => [event.spanId, event.trigger])).toEqual([[turn.spanId, 'auto']]);
        expect(turn).toMatchObject({ outcome: 'completed', compactions: [{ trigger: 'auto' }] });
        expect(events.filter((event) => event.kind === 'ChatCompleted')).toHaveLength(3);
      } finally {
        await server.close();
      }
    },
    120_000,
  );
});
