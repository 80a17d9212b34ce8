// A Codex subagent's later turns, recorded from the real CLI of each cached release (codex-releases.ts; none:
// skipped, failing under CI): the parent spawns an agent, waits, sends it a second message (send_input) and waits
// again. Each of the subagent's turns is an `invoke_agent default` span in the parent's trace, under the call that
// started it (spawn_agent, then send_input), with that turn's chat under it; the same whichever file is read first.
import { cpSync, mkdirSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexReleasesForTests } from '../harness/codex-releases.js';
import { agentToolsNamespaced } from '../harness/codex-scenario.js';
import { FIRST_SPAWNED, SPAWNED, startResponsesServer, type FunctionCall } from '../harness/responses-server.js';
import { rolloutFiles, runCodex, threadIdOf, writeCodexConfig } from '../harness/run-codex.js';
import { skipWithout } from '../helpers/real-parts.js';
import { assertBuilt, cliEnv } from '../reliability/cli.js';
import { storeCli } from './store-cli.js';
import { codexTestHome } from '../helpers/codex-test-home.js';

const usage = { input_tokens: 1000, cached_input_tokens: 0, output_tokens: 10, reasoning_output_tokens: 0 };

interface Span { span: string; parent: string; trace: string; name: string; agent: string; call: string; session: string }

describe.each(codexReleasesForTests())('a Codex $version subagent sent a second message', ({ version, binary, missing }) => {
  it.skipIf(skipWithout(missing))(
    'has each of its turns under the call that started it, in the parent’s trace, in either file order',
    async () => {
      assertBuilt();
      const { home, codexHome, project } = codexTestHome('ccotel-codex-subagent');
      const namespace = agentToolsNamespaced(version) ? { namespace: 'multi_agent_v1' } : {};
      const agentCall = (name: string, args: Record<string, unknown>): FunctionCall => ({ name, arguments: args, ...namespace });
      const server = await startResponsesServer([]);
      try {
        writeCodexConfig(codexHome, server.url);
        server.addSteps([
          { calls: [agentCall('spawn_agent', { message: 'Say hi.' })], usage },
          { subagent: true, text: 'Hi.', usage },
          { calls: [agentCall('wait_agent', { targets: SPAWNED, timeout_ms: 30_000 })], usage },
          { calls: [agentCall('send_input', { target: FIRST_SPAWNED, message: 'Once more.' })], usage },
          { subagent: true, text: 'Hi again.', usage },
          { calls: [agentCall('wait_agent', { targets: SPAWNED, timeout_ms: 30_000 })], usage },
          // The helper's completion notice comes as it ends: a second here takes it into the next request.
          { calls: [{ name: 'exec_command', arguments: { cmd: 'sleep 1' } }], usage },
          { text: 'Both said hi.', usage },
        ]);
        const run = await runCodex({ binary: binary!, codexHome, cwd: project, prompt: 'ask a helper twice' });
        expect(run.code, run.stderr).toBe(0);
        expect(server.remainingSteps()).toBe(0);
        const parent = threadIdOf(run.stdout)!;
        const [spawnCall, , sendCall] = server.requests.flatMap((request) => request.callIds ?? []);

        const env = cliEnv(home);
        const spansAfterBackfill = async (from: string, name: string) => {
          const { ccotel, query } = storeCli(join(home, name), () => env);
          await ccotel('backfill', '--json', '--codex-home', from);
          return query<Span>(
            `SELECT SpanId AS span, ParentSpanId AS parent, TraceId AS trace, SpanName AS name, SpanAttributes['ccotel.agent.id'] AS agent,
               SpanAttributes['gen_ai.tool.call.id'] AS call, SpanAttributes['session.id'] AS session
             FROM (SELECT * FROM otel_traces LIMIT 1 BY SpanId) ORDER BY Timestamp, SpanName, SpanId`);
        };
        const spans = await spansAfterBackfill(codexHome, 'store');
        const callSpan = (id: string) => spans.find((span) => span.call === id)!;
        const subagents = spans.filter((span) => span.name === 'invoke_agent default');
        expect(subagents.map((span) => span.parent)).toEqual([callSpan(spawnCall).span, callSpan(sendCall).span]);
        const parentTrace = callSpan(spawnCall).trace;
        expect(subagents.every((span) => span.trace === parentTrace && span.session === parent)).toBe(true);
        const helper = subagents[0].agent;
        expect(subagents[1].agent).toBe(helper);
        // Each turn's one response under its own span, with the helper's session.
        const chats = spans.filter((span) => span.name.startsWith('chat ') && span.session === helper);
        expect(chats.map((chat) => [chat.parent, chat.trace, chat.agent])).toEqual(subagents.map((span) => [span.span, parentTrace, helper]));

        // The helper's file read before its parent's: the same spans.
        const reversed = join(home, 'reversed');
        const files = rolloutFiles(codexHome);
        for (const path of files) {
          const moved = join(reversed, relative(codexHome, dirname(path)), path.includes(helper) ? basename(path).replace('rollout-', 'rollout-0') : basename(path).replace('rollout-', 'rollout-1'));
          mkdirSync(dirname(moved), { recursive: true });
          cpSync(path, moved);
        }
        expect(await spansAfterBackfill(reversed, 'store-reversed')).toEqual(spans);
      } finally {
        await server.close();
      }
    },
    180_000,
  );
});
