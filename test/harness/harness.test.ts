import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { flattenLogs, flattenMetrics, flattenSpans, type FlatMetricPoint, type FlatSpan } from './otlp-receiver.js';
import { claudeBinaryProblem, copyStdinHookCommand, installHooks, readHookPayloads } from './run-claude.js';
import { runScenario } from './run-scenario.js';
import { expectationOf, scenarioNamed, type TokenTotals, type ToolOutcome } from './scenarios.js';
import { skipWithout } from '../helpers/real-parts.js';

// End-to-end against the real Claude Code binary (skipped, saying why, when it is missing), and a
// check that every committed sample in test/fixtures/real still agrees with its scenario's script.

type Row = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), '../fixtures/real');

function jsonlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => join(dir, f));
}

function readRows(file: string): Row[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Row);
}

/** Token totals from transcript assistant rows: one API response is one row per content block, so dedupe by message.id. */
function transcriptTokens(rows: Row[]): TokenTotals {
  const byMessage = new Map<string, Row>();
  for (const row of rows) if (row.type === 'assistant') byMessage.set(row.message.id, row.message.usage);
  const totals = { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 };
  for (const u of byMessage.values()) {
    totals.input += u.input_tokens;
    totals.output += u.output_tokens;
    totals.cacheRead += u.cache_read_input_tokens;
    totals.cacheCreation += u.cache_creation_input_tokens;
  }
  return totals;
}

const NATIVE_TOKEN_TYPES: Record<string, keyof TokenTotals> = {
  input: 'input',
  output: 'output',
  cacheRead: 'cacheRead',
  cacheCreation: 'cacheCreation',
};

/** Native claude_code.token.usage is delta temporality: a session's total is the sum of all its points. */
function nativeTokens(points: FlatMetricPoint[], sessionId: string): TokenTotals {
  const totals = { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 };
  for (const p of points) {
    if (p.name !== 'claude_code.token.usage' || p.attributes['session.id'] !== sessionId) continue;
    totals[NATIVE_TOKEN_TYPES[String(p.attributes.type)]] += p.value;
  }
  return totals;
}

/** What the hooks say happened to each tool call: success, error, or denied (PermissionRequest, no Post*). */
function hookToolOutcomes(payloads: Row[]): Map<string, ToolOutcome> {
  const outcomes = new Map<string, ToolOutcome>();
  for (const p of payloads) {
    if (p.hook_event_name === 'PostToolUse') outcomes.set(p.tool_use_id, 'success');
    if (p.hook_event_name === 'PostToolUseFailure') outcomes.set(p.tool_use_id, 'error');
  }
  for (const p of payloads) {
    if (p.hook_event_name === 'PreToolUse' && !outcomes.has(p.tool_use_id)) outcomes.set(p.tool_use_id, 'denied');
  }
  return outcomes;
}

function childrenOf(spans: FlatSpan[], parent: FlatSpan, name: string): FlatSpan[] {
  return spans.filter((s) => s.parentSpanId === parent.spanId && s.name === name);
}

describe.skipIf(skipWithout(claudeBinaryProblem()))('the real Claude Code CLI, bash-success scenario', () => {
  const root = mkdtempSync(join(tmpdir(), 'ccotel-harness-test-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('writes a transcript, fires hooks and exports native telemetry that match the script', async () => {
    const scenario = scenarioNamed('bash-success');
    const [home, projectDir, hookDir] = ['home', 'project', 'hooks'].map((d) => join(root, d));
    mkdirSync(hookDir, { recursive: true });
    installHooks(home, copyStdinHookCommand(hookDir));

    const outcome = await runScenario(scenario, { home, projectDir });

    const [session] = outcome.sessions;
    const expected = expectationOf(scenario.sessions({ projectDir, port: 0 })[0]);
    expect(session.unusedSteps).toBe(0);
    const stepRequests = session.requests.filter((r) => r.handledAs.kind === 'step');
    expect(stepRequests).toHaveLength(expected.modelRequests);
    const [toolUseId] = stepRequests[0].toolUseIds!;
    const sessionId = session.sessionId;
    expect(session.runs[0].json).toMatchObject({ subtype: 'success', is_error: false, permission_denials: [] });

    // Transcript: the prompt, the Bash call and its successful result, tokens as scripted.
    const transcripts = jsonlFiles(join(home, '.claude', 'projects'));
    expect(transcripts.map((f) => f.endsWith(`${sessionId}.jsonl`))).toEqual([true]);
    const rows = readRows(transcripts[0]);
    expect(rows.find((r) => r.type === 'user')?.message.content).toBe('Print a greeting with the shell.');
    const toolUse = rows.flatMap((r) => (r.type === 'assistant' ? r.message.content : [])).find((b: Row) => b.type === 'tool_use');
    expect(toolUse).toMatchObject({ id: toolUseId, name: 'Bash' });
    const resultRow = rows.find((r) => r.type === 'user' && Array.isArray(r.message.content) && r.message.content[0].tool_use_id === toolUseId);
    expect(resultRow?.message.content[0].is_error).toBeFalsy();
    const [greeting, sessionLine, traceparentLine] = String(resultRow?.toolUseResult.stdout).split('\n');
    expect([greeting, sessionLine]).toEqual(['hello-from-harness', `session=${sessionId}`]);
    expect(transcriptTokens(rows)).toEqual(expected.tokens);

    // Hooks: the session's lifecycle in order, all carrying the session id; the tool events its tool_use_id.
    const hooks = readHookPayloads(hookDir).map((h) => h.payload as Row);
    const lifecycle = hooks.map((h) => h.hook_event_name).filter((e) => e !== 'MessageDisplay');
    expect(lifecycle).toEqual(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolBatch', 'Stop', 'SessionEnd']);
    expect(new Set(hooks.map((h) => h.session_id))).toEqual(new Set([sessionId]));
    expect(hooks.find((h) => h.hook_event_name === 'SessionStart')?.source).toBe('startup');
    expect([...hookToolOutcomes(hooks)]).toEqual([[toolUseId, 'success']]);

    // Native telemetry: one tool span with an execution child, one llm_request span per scripted step.
    const spans = flattenSpans(outcome.telemetry.filter((e) => e.signal === 'traces').map((e) => e.body));
    const toolSpans = spans.filter((s) => s.name === 'claude_code.tool');
    expect(toolSpans.map((s) => [s.attributes.tool_use_id, s.attributes['gen_ai.tool.name']])).toEqual([[toolUseId, 'Bash']]);
    const [execution] = childrenOf(spans, toolSpans[0], 'claude_code.tool.execution');
    expect(execution.attributes.success).toBe(true);
    // The Bash subprocess inherits the W3C context of the tool.execution span.
    expect(traceparentLine).toBe(`traceparent=00-${execution.traceId}-${execution.spanId}-01`);
    const llmSpans = spans.filter((s) => s.name === 'claude_code.llm_request');
    expect(llmSpans.map((s) => s.attributes.request_id).sort()).toEqual(stepRequests.map((r) => r.requestId).sort());
    const spanSum = (attr: string) => llmSpans.reduce((sum, s) => sum + Number(s.attributes[attr]), 0);
    expect(spanSum('input_tokens')).toBe(expected.tokens.input);
    expect(spanSum('output_tokens')).toBe(expected.tokens.output);
    // Native gen_ai.usage.input_tokens counts cached input too (semconv style); input_tokens does not.
    expect(spanSum('gen_ai.usage.input_tokens')).toBe(expected.tokens.input + expected.tokens.cacheRead + expected.tokens.cacheCreation);
    expect(spanSum('gen_ai.usage.cache_read.input_tokens')).toBe(expected.tokens.cacheRead);
    expect(spanSum('gen_ai.usage.cache_write.input_tokens')).toBe(expected.tokens.cacheCreation);
    const metrics = flattenMetrics(outcome.telemetry.filter((e) => e.signal === 'metrics').map((e) => e.body));
    expect(nativeTokens(metrics, sessionId)).toEqual(expected.tokens);
    const logs = flattenLogs(outcome.telemetry.filter((e) => e.signal === 'logs').map((e) => e.body));
    expect(logs.filter((l) => l.eventName === 'tool_result').map((l) => l.attributes.tool_use_id)).toEqual([toolUseId]);
  });
});

describe('committed samples in test/fixtures/real', () => {
  // The pinned release's samples; test/fixtures/real/<version>/ (other releases) are checked by the version matrix test.
  const scenarios = readdirSync(FIXTURES).filter((name) => existsSync(join(FIXTURES, name, 'expectations.json')));

  it('cover every scenario', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(9);
  });

  it.each(scenarios)('%s agrees with what its script implies', (name) => {
    const dir = join(FIXTURES, name);
    const expectations = JSON.parse(readFileSync(join(dir, 'expectations.json'), 'utf8')) as Row;
    const hooks = readdirSync(join(dir, 'hooks'))
      .sort()
      .map((f) => JSON.parse(readFileSync(join(dir, 'hooks', f), 'utf8')) as Row);
    const otel = (signal: string) => readRows(join(dir, 'otel', `${signal}.jsonl`));
    const metrics = flattenMetrics(otel('metrics'));
    const spans = flattenSpans(otel('traces'));
    const results = readdirSync(join(dir, 'results')).map((f) => JSON.parse(readFileSync(join(dir, 'results', f), 'utf8')) as Row);

    for (const session of expectations.sessions as Row[]) {
      const sessionHooks = hooks.filter((h) => h.session_id === session.sessionId);
      const rows = jsonlFiles(join(dir, 'projects')).flatMap(readRows).filter((r) => r.sessionId === session.sessionId);

      expect(nativeTokens(metrics, session.sessionId), 'native token.usage').toEqual(session.tokens);
      expect(transcriptTokens(rows), 'transcript usage, deduplicated by message.id').toEqual(session.tokens);
      const starts = metrics.filter((p) => p.name === 'claude_code.session.count' && p.attributes['session.id'] === session.sessionId);
      expect(starts.filter((p) => p.attributes.start_type === 'resume').length, 'native resumes').toBe(session.resumes);
      expect(sessionHooks.filter((h) => h.hook_event_name === 'SessionStart').map((h) => h.source)).toEqual([
        'startup',
        ...Array(session.resumes).fill('resume'),
      ]);
      expect(sessionHooks.filter((h) => h.hook_event_name === 'Stop')).toHaveLength(session.turns.length);
      expect(sessionHooks.filter((h) => h.hook_event_name === 'SubagentStart')).toHaveLength(session.subagents);

      const outcomes = [...hookToolOutcomes(sessionHooks).values()].sort();
      expect(outcomes, 'tool outcomes told by hooks').toEqual(session.toolCalls.map((c: Row) => c.outcome).sort());
      // Native spans: a denied call has a tool span but no execution child; the others say success or not.
      const nativeOutcomes = spans
        .filter((sp) => sp.name === 'claude_code.tool' && sp.attributes['session.id'] === session.sessionId)
        .map((sp) => {
          const execution = childrenOf(spans, sp, 'claude_code.tool.execution')[0];
          return execution ? (execution.attributes.success ? 'success' : 'error') : 'denied';
        });
      expect(nativeOutcomes.sort(), 'tool outcomes told by native spans').toEqual(outcomes);
      const llmSpans = spans.filter((sp) => sp.name === 'claude_code.llm_request' && sp.attributes['session.id'] === session.sessionId);
      expect(llmSpans).toHaveLength(session.modelRequests);

      const denials = results.filter((r) => r.session_id === session.sessionId).flatMap((r) => r.permission_denials);
      expect(denials).toHaveLength(session.denials);
    }
    if (expectations.background) {
      expect(expectations.background).toMatchObject({ aliveAfterSession: true, listening: true, inheritedSessionId: expectations.sessions[0].sessionId });
    }
  });
});
