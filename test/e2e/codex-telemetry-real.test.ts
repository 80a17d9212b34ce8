// Codex's own telemetry received by `ccotel run` from the real CLI of each cached release (codex-releases.ts; none:
// skipped, failing under CI): `install-telemetry --agent codex` points its OTel log export at the receiver and
// `install-hooks --agent codex` its hooks at the spool; then a `codex exec` run and the TUI session with approvals
// (codex-tui.ts). The store then holds Codex's events beside ccotel's spans: every response Codex exported
// (codex.sse_event response.completed, after its codex.api_request) is one of ccotel's chats, every
// codex.tool_decision one of its tool calls and agrees with its outcome, the declined call is denied by the user, the
// one approved and then interrupted while it ran is interrupted (its approval read from Codex's telemetry as it
// came), and the telemetry_gap detector finds nothing once the sessions are quiet.
import type { ClickHouseClient } from '@clickhouse/client';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { codexForTests, CODEX_VERSIONS } from '../harness/codex-releases.js';
import { driveCodexTui, TUI_SCENARIO, TUI_STALLS_AT_START, writeTuiConfig } from '../harness/codex-tui.js';
import { startResponsesServer } from '../harness/responses-server.js';
import { rolloutFiles, runCodex } from '../harness/run-codex.js';
import { freePort } from '../helpers/free-port.js';
import { skipWithout } from '../helpers/real-parts.js';
import { assertBuilt, CLI, cliEnv, endpointClient, runProcess, startRun, stopRun } from '../reliability/cli.js';
import { waitFor } from '../reliability/transcripts.js';
import { codexTestHome } from '../helpers/codex-test-home.js';

const rowsOf = async <T>(client: ClickHouseClient, query: string) => (await client.query({ query, format: 'JSONEachRow' })).json<T>();
const usage = (input: number, cached: number, output: number) => ({ input_tokens: input, cached_input_tokens: cached, output_tokens: output, reasoning_output_tokens: 0 });
/**
 * Short, so a quiet session is checked for gaps within seconds (settled after the idle time and as long again); longer
 * than the TUI's interrupted command runs without a row (codex-tui.ts), which would close its turn as abandoned.
 */
const IDLE_MS = 6_000;

// A release whose TUI stalls at random is not driven here (its recorded TUI session is read by codex-tui.test.ts).
describe.each(CODEX_VERSIONS.filter((version) => !TUI_STALLS_AT_START.has(version)).map((version) => ({ version, binary: codexForTests(version) })))("Codex $version's own telemetry received by ccotel run", ({ version, binary }) => {
  it.skipIf(skipWithout(binary === undefined ? `Codex ${version} is not cached (npx vite-node test/harness/record-codex.ts ${version})` : undefined))(
    'joins every exported response to a chat and every tool decision to its call, agrees on the approvals, and finds no gap',
    async () => {
      assertBuilt();
      const { home, codexHome, project } = codexTestHome('ccotel-codex-otel');
      const store = join(home, 'store');
      const port = await freePort();
      const env = cliEnv(home, { CCOTEL_NATIVE_TELEMETRY_PORT: String(port), CCOTEL_IDLE_MS: String(IDLE_MS), CODEX_HOME: codexHome });
      const server = await startResponsesServer([]);
      let run: ReturnType<typeof startRun> | undefined;
      try {
        writeTuiConfig(codexHome, project, server.url);
        for (const command of ['install-hooks', 'install-telemetry']) {
          const installed = await runProcess(process.execPath, [CLI, command, '--agent', 'codex', '--codex-home', codexHome], env, 60_000);
          expect(installed.status, installed.stderr).toBe(0);
        }
        expect(readFileSync(join(codexHome, 'config.toml'), 'utf8')).toContain(`endpoint = "http://127.0.0.1:${port}/v1/logs"`);
        run = startRun(['--store', store, '--codex-home', codexHome], env);
        await waitFor('the receiver', () => run!.output().includes(`telemetry received on http://127.0.0.1:${port}`), 90_000);

        server.addSteps([{ calls: [{ name: 'exec_command', arguments: { cmd: 'echo exec' } }], usage: usage(2000, 0, 20) }, { text: 'Ran it.', usage: usage(2200, 1024, 8) }]);
        const exec = await runCodex({ binary: binary!, codexHome, cwd: project, prompt: 'run it' });
        expect(exec.code, exec.stderr).toBe(0);
        for (const { steps } of TUI_SCENARIO) server.addSteps(steps);
        const tui = await driveCodexTui(binary!, version, codexHome, project);
        expect(tui.exitStatus).toBe(0);
        expect(server.remainingSteps()).toBe(0);
        // The two threads (the exec run's, the TUI session's): one rollout each.
        const threads = rolloutFiles(codexHome).map((path) => /([0-9a-f-]{36})\.jsonl$/.exec(path)![1]);
        expect(threads).toHaveLength(2);
        const inThreads = `(${threads.map((thread) => `'${thread}'`).join(', ')})`;

        const client = endpointClient(store);
        try {
          // Codex's responses as it exported them, each keyed as the rollouts key their chats.
          const exportedSql = `SELECT concat(LogAttributes['conversation.id'], '/', LogAttributes['input_token_count'], '/', LogAttributes['cached_token_count'], '/', LogAttributes['output_token_count']) AS request
            FROM otel_logs WHERE LogAttributes['event.name'] = 'codex.sse_event' AND LogAttributes['input_token_count'] != '' AND LogAttributes['conversation.id'] IN ${inThreads}`;
          const chatsSql = `SELECT DISTINCT SpanAttributes['request_id'] AS request, SpanAttributes['ccotel.native.api_duration_ms'] AS duration FROM otel_traces
            WHERE ServiceName = 'ccotel' AND startsWith(SpanName, 'chat ') AND SpanAttributes['session.id'] IN ${inThreads}`;
          const answered = server.requests.filter((request) => request.step !== undefined).length;
          await waitFor('every response exported and read', async () => (await rowsOf(client, exportedSql)).length >= answered && (await rowsOf(client, chatsSql)).length >= answered, 60_000);
          const exported = await rowsOf<{ request: string }>(client, exportedSql);
          const chats = await rowsOf<{ request: string; duration: string }>(client, chatsSql);
          expect(exported).toHaveLength(answered);
          expect(new Set(exported.map((row) => row.request))).toEqual(new Set(chats.map((row) => row.request)));
          const requests = await rowsOf<{ n: number }>(client, `SELECT count() AS n FROM otel_logs WHERE LogAttributes['event.name'] = 'codex.api_request' AND LogAttributes['http.response.status_code'] = '200' AND LogAttributes['conversation.id'] IN ${inThreads}`);
          expect(Number(requests[0].n)).toBe(answered);

          // Quiet for the idle time and as long again: every turn is over (0.171 tells an interrupted call once its
          // thread's next turn comes, or the thread ends), and the sessions are checked for gaps.
          await sleep(4 * IDLE_MS);
          await waitFor('the last turn stored', async () => (await rowsOf(client, `SELECT 1 FROM otel_traces WHERE SpanName = 'invoke_agent codex' AND SpanAttributes['session.id'] IN ${inThreads}`)).length >= 5, 30_000);

          // Codex's decisions name ccotel's calls, and agree with what ccotel concluded of them.
          const decisions = await rowsOf<{ call: string; decision: string; source: string }>(client, `SELECT LogAttributes['call_id'] AS call, LogAttributes['decision'] AS decision, LogAttributes['source'] AS source
            FROM otel_logs WHERE LogAttributes['event.name'] = 'codex.tool_decision' AND LogAttributes['conversation.id'] IN ${inThreads}`);
          const calls = await rowsOf<{ call: string; command: string; outcome: string }>(client, `SELECT DISTINCT SpanAttributes['gen_ai.tool.call.id'] AS call, JSONExtractString(SpanAttributes['ccotel.tool.input'], 'cmd') AS command,
              SpanAttributes['ccotel.tool.outcome'] AS outcome FROM otel_traces WHERE ServiceName = 'ccotel' AND startsWith(SpanName, 'execute_tool ') AND SpanAttributes['session.id'] IN ${inThreads}`);
          const byCommand = Object.fromEntries(calls.map((call) => [call.command, call]));
          // Approved, then interrupted while it ran: its hooks are a refusal's (no PostToolUse), Codex's decision is not.
          const cut = 'touch started.txt && sleep 30';
          expect(decisions.length).toBeGreaterThan(0);
          for (const decision of decisions) expect(decision.decision).toBe('approved');
          for (const decision of decisions) expect(calls.find((call) => call.call === decision.call)?.outcome).toBe(decision.call === byCommand[cut]?.call ? 'interrupted' : 'success');
          const decided = (command: string) => decisions.find((decision) => decision.call === byCommand[command]?.call);
          expect(byCommand['touch approved.txt'].outcome).toBe('success');
          expect(decided('touch approved.txt')).toMatchObject({ source: 'User' });
          expect(decided(cut)).toMatchObject({ source: 'User' });
          // The refusal (Esc) Codex logs no decision for: ccotel tells it from the rollout or the hooks.
          expect(byCommand['touch declined.txt'].outcome).toBe('denied');
          expect(decided('touch declined.txt')).toBeUndefined();
          const blocks = await rowsOf<{ call: string; source: string }>(client, `SELECT DISTINCT LogAttributes['tool_use_id'] AS call, LogAttributes['source'] AS source FROM otel_logs
            WHERE EventName = 'ccotel.permission.blocked' AND LogAttributes['session.id'] IN ${inThreads}`);
          expect(blocks).toEqual([{ call: byCommand['touch declined.txt'].call, source: 'user' }]);

          const gaps = await rowsOf(client, `SELECT LogAttributes['detail'] AS detail FROM otel_logs WHERE EventName = 'ccotel.failure_mode.detected' AND LogAttributes['mode'] = 'telemetry_gap'`);
          expect(gaps).toEqual([]);
        } finally {
          await client.close();
        }
      } finally {
        await stopRun(run);
        await server.close();
      }
    },
    240_000,
  );
});
