// ccotel against Claude Code's own telemetry and the scenario script, for the recorded interactive samples
// (test/fixtures/real/2.1.332-interactive): the interactive half of native-agreement.test.ts. No CLI runs
// here: `ccotel backfill` reads the samples' transcripts into one store, and each check sets the store, the
// sample's native telemetry (`blocked_on_user` spans, `tool_decision` events) and the script side by side.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfill } from '../../sidecar/src/commands/backfill.js';
import { buildReport } from '../../sidecar/src/report/overview.js';
import { openStore, type Store } from '../../sidecar/src/store/open-store.js';
import type { BlockSource } from '../harness/interactive-scenarios.js';
import { interactiveSamples, NATIVE_REFUSAL_SOURCE } from './interactive-samples.js';
import { nativeToolDecisions } from './native-telemetry.js';
import { storedLogs, storedSpans, type StoredLog, type StoredSpan } from './store-scan.js';

const byToolAndOutcome = (a: { tool: string; outcome: string }, b: { tool: string; outcome: string }) =>
  `${a.tool}/${a.outcome}`.localeCompare(`${b.tool}/${b.outcome}`);
const savedEnv = { ...process.env };
describe('ccotel agrees with Claude Code’s own telemetry and the script (recorded interactive samples)', () => {
  const samples = interactiveSamples();
  let sampleStore: Store | undefined;
  let spans: StoredSpan[] = [];
  let logs: StoredLog[] = [];
  const sampleRoot = mkdtempSync(join(tmpdir(), 'ccotel-interactive-agreement-'));
  const ofSession = (sessionId: string) => (record: { attributes: Record<string, string> }) => record.attributes['session.id'] === sessionId;

  beforeAll(async () => {
    // backfill reads the samples only, and keeps its own state in a temp HOME.
    for (const key of Object.keys(process.env)) if (key.startsWith('CCOTEL_') || key.startsWith('XDG_')) delete process.env[key];
    process.env.HOME = join(sampleRoot, 'home');
    process.env.CLAUDE_CONFIG_DIR = samples.map((s) => s.dir).join(',');
    process.env.CCOTEL_RAW_TTL_DAYS = '0';
    await backfill({ store: join(sampleRoot, 'store') });
    sampleStore = await openStore(join(sampleRoot, 'store'), { command: 'test', access: 'read' });
    [spans, logs] = await Promise.all([storedSpans(sampleStore.client), storedLogs(sampleStore.client)]);
  }, 300_000);

  afterAll(async () => {
    await sampleStore?.close();
    process.env = { ...savedEnv };
    rmSync(sampleRoot, { recursive: true, force: true });
  });

  it('cover a refusal by each source, an Esc during a command, plan mode and /resume', () => {
    expect(new Set(samples.flatMap((s) => s.blocks.map((b) => b.source)))).toEqual(new Set(['user', 'rule', 'hook', 'classifier']));
    const outcomes = samples.flatMap((s) => s.sessions.flatMap((session) => session.toolCalls.map((c) => c.outcome)));
    expect(outcomes).toContain('interrupted');
    expect(samples.map((s) => s.name)).toEqual(expect.arrayContaining(['plan-mode', 'resume-inside']));
  });

  describe.each(samples)('$name', (sample) => {
    it('tool outcomes, turn outcomes and permission blocks (with their source) equal the script', () => {
      for (const session of sample.sessions) {
        const tools = spans.filter((s) => s.name.startsWith('execute_tool ') && ofSession(session.sessionId)(s));
        expect(tools.map((s) => ({ tool: s.attributes['gen_ai.tool.name'], outcome: s.attributes['ccotel.tool.outcome'], subagent: false })).sort(byToolAndOutcome)).toEqual(
          [...session.toolCalls].sort(byToolAndOutcome),
        );
        const turns = spans.filter((s) => s.name === 'invoke_agent claude-code' && ofSession(session.sessionId)(s));
        expect(turns.map((s) => s.attributes['ccotel.turn.outcome'])).toEqual(session.turns);
      }
      const blocks = logs.filter((l) => l.eventName === 'ccotel.permission.blocked' && sample.sessions.some((s) => ofSession(s.sessionId)(l)));
      expect(blocks.map((l) => ({ tool: l.attributes['gen_ai.tool.name'], source: l.attributes.source }))).toEqual(sample.blocks);
    });

    it('Claude Code’s blocked_on_user spans and tool_decision events agree with each call’s outcome and block source', () => {
      for (const session of sample.sessions) {
        const native = nativeToolDecisions(sample.native, session.sessionId);
        expect(native.length, 'native tool spans').toBe(session.toolCalls.length);
        for (const call of native) {
          const ours = spans.find((s) => s.name.startsWith('execute_tool ') && s.attributes.tool_use_id === call.toolUseId);
          const outcome = ours?.attributes['ccotel.tool.outcome'];
          const block = logs.find((l) => l.eventName === 'ccotel.permission.blocked' && l.attributes.tool_use_id === call.toolUseId);
          expect(call.event, `${call.tool} ${call.toolUseId}: tool_decision event = blocked_on_user span`).toEqual(call.span);
          if (call.span?.decision === 'reject') {
            expect({ outcome, source: NATIVE_REFUSAL_SOURCE[block?.attributes.source as BlockSource], ran: call.ran }).toEqual({ outcome: 'denied', source: call.span.source, ran: false });
          } else {
            // Accepted (or never asked about): it ran; ccotel says how it ended, Claude Code only success or not.
            expect({ ran: call.ran, blocked: block !== undefined }).toEqual({ ran: true, blocked: false });
            expect(outcome === 'success', `${call.tool} ${call.toolUseId}: ${outcome} vs native success=${call.succeeded}`).toBe(call.succeeded);
          }
        }
      }
    });
  });

  it('report’s permission blocks equal the refusals the scenarios made, by tool and source', async () => {
    const report = await buildReport(sampleStore!.client);
    const expected = new Map<string, number>();
    for (const { tool, source } of samples.flatMap((s) => s.blocks)) expected.set(`${tool}/${source}`, (expected.get(`${tool}/${source}`) ?? 0) + 1);
    const reported = new Map(report.permissionBlocks.map((row) => [`${String(row.tool)}/${String(row.source)}`, Number(row.blocks)]));
    expect(reported).toEqual(expected);
  });
});
