// ccotel's reconstruction against Claude Code's own telemetry, for real runs of the CLI.
//
// Every scenario of test/harness/scenarios.ts runs against the real Claude Code binary (a few at once)
// as one user whose HOME has ccotel's hooks and shell integration installed; Claude Code's native OTLP
// goes to a loopback receiver. Then `ccotel backfill` reads that HOME into one temporary store and each
// check sets three witnesses side by side: the store, the native telemetry, and the scenario script
// (what the script implies is computed from the script, never read back from ccotel).
// The recorded interactive samples get the same checks in native-agreement-interactive.test.ts.
//
// Token figures: `gen_ai.usage.input_tokens` counts input + cache read + cache creation on both sides (the GenAI
// conventions); ccotel's `ccotel.usage.uncached.input_tokens` is the raw API `input_tokens` (as in the
// transcript), which native telemetry's plain `input_tokens` attribute carries too.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfill } from '../../sidecar/src/commands/backfill.js';
import { openStore, type Store } from '../../sidecar/src/store/open-store.js';
import { findLeaks } from '../generators/secrets.js';
import { claudeBinaryProblem } from '../harness/run-claude.js';
import type { ScenarioOutcome, SessionOutcome } from '../harness/run-scenario.js';
import { SCENARIOS, type Scenario, type ScriptedStep, type TokenTotals } from '../harness/scenarios.js';
import { nativeModelRequests, nativeResumes, nativeTelemetry, nativeTokenTotals, nativeToolCalls, zeroTokens, type NativeTelemetry } from './native-telemetry.js';
import { runScenarios } from './scenario-runs.js';
import { fullPromptOnlyLines, storedLogs, storedSpans, storeText, type StoredLog, type StoredSpan } from './store-scan.js';
import { skipWithout } from '../helpers/real-parts.js';

const problem = claudeBinaryProblem();
if (problem) console.warn(`native-agreement: skipped, the real CLI cannot run: ${problem}`);

interface SessionRun {
  session: SessionOutcome;
  native: NativeTelemetry;
  /** The scripted steps of this session, in the order the model server answered them. */
  steps: ScriptedStep[];
  spans: StoredSpan[];
  logs: StoredLog[];
}

let root = '';
let home = '';
const savedEnv = { ...process.env };
let store: Store | undefined;
let outcomes: ScenarioOutcome[] = [];
let allSpans: StoredSpan[] = [];
let allLogs: StoredLog[] = [];
let stored = '';

/** backfill reads the simulated user's HOME only, and keeps its own state there. */
function pointEnvironmentAt(userHome: string): void {
  for (const key of Object.keys(process.env)) if (key.startsWith('CCOTEL_') || key.startsWith('XDG_')) delete process.env[key];
  delete process.env.CLAUDE_CONFIG_DIR;
  process.env.HOME = userHome;
  process.env.CCOTEL_CONFIG = 'none';
  process.env.CCOTEL_RAW_TTL_DAYS = '0';
}

function sessionRuns(scenario: Scenario): SessionRun[] {
  const outcome = outcomes.find((o) => o.scenario === scenario.name)!;
  const scripts = scenario.sessions({ projectDir: outcome.projectDir, port: 0 });
  const native = nativeTelemetry(outcome.telemetry);
  return outcome.sessions.map((session, i) => ({
    session,
    native,
    steps: scripts[i].runs.flatMap((run) => run.steps),
    spans: allSpans.filter((s) => s.attributes['session.id'] === session.sessionId),
    logs: allLogs.filter((l) => l.attributes['session.id'] === session.sessionId),
  }));
}

/** Request ids the model server answered with for auxiliary steps (compaction summaries). */
function auxiliaryRequestIds(run: SessionRun): Set<string> {
  return new Set(
    run.session.requests.flatMap((r) => (r.handledAs.kind === 'step' && run.steps[r.handledAs.index].auxiliary ? [r.requestId!] : [])),
  );
}

function ourTokens(span: StoredSpan): TokenTotals {
  const a = span.attributes;
  return {
    input: Number(a['ccotel.usage.uncached.input_tokens']),
    output: Number(a['gen_ai.usage.output_tokens']),
    cacheRead: Number(a['gen_ai.usage.cache_read.input_tokens']),
    cacheCreation: Number(a['gen_ai.usage.cache_creation.input_tokens']),
  };
}

function addTokens(a: TokenTotals, b: TokenTotals): TokenTotals {
  return { input: a.input + b.input, output: a.output + b.output, cacheRead: a.cacheRead + b.cacheRead, cacheCreation: a.cacheCreation + b.cacheCreation };
}

/** One check, for every session of a scenario. */
function agreement(scenario: Scenario, check: string, assert: (run: SessionRun) => void): void {
  it(check, () => {
    for (const run of sessionRuns(scenario)) assert(run);
  });
}

const byToolAndOutcome = (a: { tool: string; outcome: string }, b: { tool: string; outcome: string }) =>
  `${a.tool}/${a.outcome}`.localeCompare(`${b.tool}/${b.outcome}`);

const suiteName = 'ccotel agrees with Claude Code’s own telemetry (real CLI, every scenario)';
describe.skipIf(skipWithout(problem))(problem ? `${suiteName} — skipped: ${problem}` : suiteName, () => {
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'ccotel-native-agreement-'));
    home = join(root, 'home');
    const started = performance.now();
    outcomes = await runScenarios({ home, workDir: join(root, 'projects') });
    const ranScenarios = performance.now();
    pointEnvironmentAt(home);
    const storeDir = join(root, 'store');
    await backfill({ store: storeDir });
    store = await openStore(storeDir, { command: 'test', access: 'read' });
    [allSpans, allLogs, stored] = await Promise.all([storedSpans(store.client), storedLogs(store.client), storeText(store.client)]);
    console.log(
      `native-agreement: ${SCENARIOS.length} scenarios in ${((ranScenarios - started) / 1000).toFixed(1)} s, ` +
        `backfill and read-back in ${((performance.now() - ranScenarios) / 1000).toFixed(1)} s`,
    );
  }, 600_000);

  afterAll(async () => {
    await store?.close();
    process.env = savedEnv;
    if (root) rmSync(root, { recursive: true, force: true });
  });

  describe.each(SCENARIOS)('$name', (scenario) => {
    agreement(scenario, 'ran as scripted, and the session reached the store', (run) => {
      expect(run.session.unusedSteps, 'scripted requests never asked for').toBe(0);
      expect(run.spans.length).toBeGreaterThan(0);
    });

    agreement(scenario, 'each native tool span has exactly one execute_tool span with the same tool and outcome', (run) => {
      const native = nativeToolCalls(run.native, run.session.sessionId);
      // Claude Code exports no tool span for a call interrupted while it ran; every other call has one.
      const scripted = run.session.expectation.toolCalls.filter((c) => c.outcome !== 'interrupted');
      expect(native.map(({ tool, outcome }) => ({ tool, outcome })).sort(byToolAndOutcome), 'native tool spans vs the script').toEqual(
        scripted.map(({ tool, outcome }) => ({ tool, outcome })).sort(byToolAndOutcome),
      );
      const ours = run.spans.filter((s) => s.name.startsWith('execute_tool '));
      const matched = native.map((call) =>
        ours
          .filter((s) => s.attributes.tool_use_id === call.toolUseId)
          .map((s) => ({ toolUseId: s.attributes['gen_ai.tool.call.id'], tool: s.attributes['gen_ai.tool.name'], outcome: s.attributes['ccotel.tool.outcome'] })),
      );
      expect(matched).toEqual(native.map((call) => [call]));
    });

    agreement(scenario, 'each native llm_request has its chat span with the same request_id and token counts', (run) => {
      const auxiliary = auxiliaryRequestIds(run);
      const native = nativeModelRequests(run.native, run.session.sessionId);
      expect(native.map((r) => r.requestId).sort(), 'native llm_request spans vs the model server').toEqual(
        run.session.requests.filter((r) => r.handledAs.kind === 'step').map((r) => r.requestId).sort(),
      );
      // Auxiliary requests (the /compact summary) leave no transcript row: ccotel cannot see them.
      const conversation = native.filter((r) => !auxiliary.has(r.requestId));
      const ours = run.spans.filter((s) => s.name.startsWith('chat '));
      expect(ours).toHaveLength(conversation.length);
      for (const request of conversation) {
        const chats = ours.filter((s) => s.attributes.request_id === request.requestId);
        const answeredWith = run.session.requests.find((r) => r.requestId === request.requestId)!.messageId;
        expect(chats.map((s) => ({ messageId: s.attributes['gen_ai.response.id'], tokens: ourTokens(s) }))).toEqual([
          { messageId: answeredWith, tokens: request.tokens },
        ]);
        const { input, cacheRead, cacheCreation } = request.tokens;
        expect(request.semconvInputTokens, 'native gen_ai.usage.input_tokens includes cached input').toBe(input + cacheRead + cacheCreation);
        expect(Number(chats[0].attributes['gen_ai.usage.input_tokens']), "ours counts it as the native side does").toBe(request.semconvInputTokens);
      }
    });

    agreement(scenario, 'token totals equal the native claude_code.token.usage sums and the script', (run) => {
      const expected = run.session.expectation;
      const native = nativeTokenTotals(run.native, run.session.sessionId);
      const ours = run.spans.filter((s) => s.name.startsWith('chat ')).map(ourTokens).reduce(addTokens, zeroTokens());
      expect({ ccotel: ours, native: native.conversation }).toEqual({ ccotel: expected.tokens, native: expected.tokens });
      expect(native.auxiliary, 'native auxiliary (compaction) tokens').toEqual(expected.auxiliaryTokens);
    });

    agreement(scenario, 'resumes equal native session.count{start_type=resume} and the script', (run) => {
      const resumes = run.logs.filter((l) => l.eventName === 'ccotel.session.started' && l.attributes.source === 'resume').length;
      const expected = run.session.expectation.resumes;
      expect({ ccotel: resumes, native: nativeResumes(run.native, run.session.sessionId) }).toEqual({ ccotel: expected, native: expected });
    });

    agreement(scenario, 'permission blocks equal the denials of the script and of the print-mode result', (run) => {
      const blocks = run.logs.filter((l) => l.eventName === 'ccotel.permission.blocked').length;
      const printModeDenials = run.session.runs.flatMap((r) => r.json?.permission_denials ?? []).length;
      const expected = run.session.expectation.denials;
      expect({ ccotel: blocks, claudeResult: printModeDenials }).toEqual({ ccotel: expected, claudeResult: expected });
    });

    agreement(scenario, 'turn outcomes equal the script', (run) => {
      const turns = run.spans.filter((s) => s.name === 'invoke_agent claude-code').map((s) => s.attributes['ccotel.turn.outcome']);
      expect(turns).toEqual(run.session.expectation.turns);
    });

    agreement(scenario, 'tool calls and their outcomes equal the script', (run) => {
      const tools = run.spans
        .filter((s) => s.name.startsWith('execute_tool '))
        .map((s) => ({ tool: s.attributes['gen_ai.tool.name'], outcome: s.attributes['ccotel.tool.outcome'], subagent: s.attributes['ccotel.agent.id'] !== undefined }));
      expect(tools.sort(byToolAndOutcome)).toEqual([...run.session.expectation.toolCalls].sort(byToolAndOutcome));
    });
  });

  it('no text found only in prompt_snapshot, api-request-shape, api-request-blob or api-request rows reaches the store', () => {
    const lines = fullPromptOnlyLines(join(home, '.claude', 'projects'));
    // The system prompt and tool descriptions alone give hundreds of such lines; none may be stored.
    expect(lines.length).toBeGreaterThan(100);
    expect(lines.filter((line) => stored.includes(line))).toEqual([]);
  });

  it('secrets planted in prompts and tool output never reach the store', () => {
    const planted = SCENARIOS.flatMap((s) => s.plantedSecrets ?? []);
    expect(planted.length).toBeGreaterThan(0);
    const secretsRun = sessionRuns(SCENARIOS.find((s) => s.plantedSecrets)!)[0];
    // They were in what ccotel read (the prompt and both tool outputs), and what it stored is masked, not dropped.
    const contents = secretsRun.spans.flatMap((s) => [s.attributes['ccotel.prompt'] ?? '', s.attributes['ccotel.tool.output'] ?? '']).join('\n');
    expect(contents).toContain('[REDACTED:');
    expect(findLeaks(stored, planted)).toEqual([]);
  });

  // Hook ingestion and shell spans come with issue 5. The scenario HOME already has ccotel's hooks and
  // shell integration installed; these checks run by themselves once backfill stores what they write.
  it('hook events are attached to the span they belong to', (ctx) => {
    const hookLogs = allLogs.filter((l) => l.eventName.startsWith('ccotel.hook.'));
    ctx.skip(hookLogs.length === 0, 'no ccotel.hook.* events in the store yet (hook ingestion, issue 5)');
    for (const scenario of SCENARIOS) {
      for (const run of sessionRuns(scenario)) {
        for (const call of nativeToolCalls(run.native, run.session.sessionId)) {
          const span = run.spans.find((s) => s.attributes.tool_use_id === call.toolUseId)!;
          const expectedHooks = ['PreToolUse', ...{ success: ['PostToolUse'], error: ['PostToolUseFailure'], denied: ['PermissionRequest'] }[call.outcome as 'success' | 'error' | 'denied']];
          for (const hook of expectedHooks) {
            expect(span.eventNames.some((name) => name.includes(hook)), `${scenario.name}: ${hook} event on execute_tool ${call.tool}`).toBe(true);
          }
          expect(run.logs.some((l) => l.eventName.startsWith('ccotel.hook.') && l.spanId === span.spanId), `${scenario.name}: hook log in ${call.tool}'s span`).toBe(true);
        }
      }
    }
  });

  it('Bash tool spans carry their shell spans', (ctx) => {
    const shellSpans = allSpans.filter((s) => s.name.startsWith('shell '));
    ctx.skip(shellSpans.length === 0, 'no shell spans in the store yet (shell log ingestion, issue 5)');
    for (const scenario of SCENARIOS) {
      for (const run of sessionRuns(scenario)) {
        for (const bash of run.spans.filter((s) => s.name === 'execute_tool Bash' && s.attributes['ccotel.tool.outcome'] !== 'denied')) {
          const children = shellSpans.filter((s) => s.parentSpanId === bash.spanId);
          expect(children.length, `${scenario.name}: shell spans under Bash ${bash.attributes.tool_use_id}`).toBeGreaterThan(0);
          const call = `${scenario.name}: Bash ${bash.attributes.tool_use_id}`;
          const { command } = JSON.parse(String(bash.attributes['ccotel.tool.input'])) as { command: string };
          expect(children.map((s) => s.attributes['process.command_line']), `${call}: its command`).toContain(command);
          // A command whose end was not seen (`ccotel.shell.ended` false) has no exit code, and did not fail.
          const exits = children.map((s) => s.attributes['process.exit.code']);
          const outcome = bash.attributes['ccotel.tool.outcome'];
          // An interrupted call's command may have been stopped with it, or have run to its end.
          if (outcome !== 'interrupted') {
            expect(exits.some((code) => code !== undefined && Number(code) !== 0), `${call} (${outcome}): its commands exited ${exits.join(', ')}`).toBe(outcome === 'error');
          }
        }
      }
    }
  });
});
